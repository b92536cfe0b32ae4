"""A small test client for one workspace, and assertions on the envelope."""

from __future__ import annotations

import itertools
import re
from typing import Any

import httpx
from fastapi.testclient import TestClient

from chatcrm.provisioning import NewAccount

# The shape of every id the service makes: a UUID of version 7 (time-ordered), lower case.
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")

ENVELOPE_KEYS = ["success", "code", "errorCode", "message", "data"]
_counter = itertools.count(1)


def unique(prefix: str = "x") -> str:
    return f"{prefix}{next(_counter)}"


def unique_email() -> str:
    return f"{unique('user')}@example.com"


def unique_phone() -> str:
    return f"5199{next(_counter):07d}"


def ok_data(response: httpx.Response, message: str | None = None) -> Any:
    """Assert a success envelope; return its data."""
    assert response.status_code == 200, response.text
    body = response.json()
    assert list(body) == ENVELOPE_KEYS, body
    assert body["success"] is True and body["code"] == 200 and body["errorCode"] is None, body
    if message is not None:
        assert body["message"] == message
    return body["data"]


def error(response: httpx.Response, status: int, error_code: str) -> dict[str, Any]:
    """Assert an error envelope with this status and code; return the whole body."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert list(body) == ENVELOPE_KEYS, body
    assert body["success"] is False, body
    assert body["code"] == status, body
    assert body["errorCode"] == error_code, body
    assert isinstance(body["message"], str) and body["message"], body
    assert body["data"] is None or isinstance(body["data"].get("errors"), list), body
    assert response.headers.get("x-request-id")
    return body


def error_fields(body: dict[str, Any]) -> list[str]:
    return [e["field"] for e in (body["data"] or {}).get("errors", [])]


class Api:
    """Requests as one workspace's integration would send them."""

    def __init__(self, http: TestClient, account: NewAccount) -> None:
        self.http = http
        self.account = account
        self.key = account.api_key
        self.ws = account.workspace_id

    def headers(self, *, workspace: str | None = "", auth: str | None = "") -> dict[str, str]:
        out = {}
        key = self.key if auth == "" else auth
        if key is not None:
            out["Authorization"] = f"Bearer {key}"
        ws = self.ws if workspace == "" else workspace
        if ws is not None:
            out["x-workspace-id"] = ws
        return out

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        workspace: str | None = "",
        auth: str | None = "",
        content: bytes | str | None = None,
    ) -> httpx.Response:
        all_headers = self.headers(workspace=workspace, auth=auth)
        all_headers.update(headers or {})
        return self.http.request(
            method, path, json=json, params=params, headers=all_headers, content=content
        )

    def get(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("GET", path, **kw)

    def post(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("POST", path, **kw)

    def put(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("PUT", path, **kw)

    def delete(self, path: str, **kw: Any) -> httpx.Response:
        return self.request("DELETE", path, **kw)

    # --- workspace set-up ----------------------------------------------------------------

    def workspace(self) -> dict[str, Any]:
        return ok_data(self.get(f"/api/workspace/{self.ws}"))

    def stage_ids(self, kind: str = "contact") -> list[str]:
        return [s["id"] for s in self.workspace()[f"{kind}Stages"]]

    def add_tag(self, name: str | None = None, color: str | None = "#ff0000") -> dict[str, Any]:
        return ok_data(
            self.post(
                f"/api/workspace/{self.ws}/tags",
                json={"name": name or unique("tag"), "color": color},
            )
        )

    def add_agent(self, name: str | None = None, email: str | None = None) -> dict[str, Any]:
        return ok_data(
            self.post(
                f"/api/workspace/{self.ws}/agents",
                json={"name": name or unique("Agent "), "email": email or unique_email()},
            )
        )

    def add_segmentation(self, name: str | None = None) -> dict[str, Any]:
        return ok_data(
            self.post(
                f"/api/workspace/{self.ws}/segmentations", json={"name": name or unique("seg")}
            )
        )

    def add_stage(self, kind: str = "contact", name: str | None = None) -> dict[str, Any]:
        return ok_data(
            self.post(
                f"/api/workspace/{self.ws}/stages",
                json={"kind": kind, "name": name or unique("st")},
            )
        )

    # --- records ------------------------------------------------------------------------------

    def create_contact(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "Ana", "email": unique_email(), **fields}
        body = {k: v for k, v in body.items() if v is not ...}
        data = ok_data(self.post("/api/contact", json=body), "Contact created successfully.")
        return data["contact"]

    def create_opportunity(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "Deal", "amount": 100, **fields}
        body = {k: v for k, v in body.items() if v is not ...}
        data = ok_data(
            self.post("/api/opportunity", json=body), "Opportunity successfully created."
        )
        return data["opportunity"]

    def get_contact(self, contact_id: str, **kw: Any) -> httpx.Response:
        return self.get(f"/api/contact/{contact_id}", **kw)

    def update_contact(self, contact_id: str, body: Any, **kw: Any) -> httpx.Response:
        params = kw.pop("params", {"id": contact_id, "workspaceId": self.ws})
        return self.put("/api/contact", json=body, params=params, **kw)

    def update_opportunity(self, opportunity_id: str, body: Any, **kw: Any) -> httpx.Response:
        params = kw.pop("params", {"id": opportunity_id})
        return self.put("/api/opportunity", json=body, params=params, **kw)

    def set_contact(self, contact_id: str, **fields: Any) -> dict[str, Any]:
        """Update named fields; assert success; return the contact (update shape)."""
        body = {"paramToUpdate": ",".join(fields), **fields}
        return ok_data(self.update_contact(contact_id, body), "Contact updated successfully.")[
            "contact"
        ]

    def set_opportunity(self, opportunity_id: str, **fields: Any) -> dict[str, Any]:
        body = {"paramToUpdate": ",".join(fields), **fields}
        data = ok_data(
            self.update_opportunity(opportunity_id, body), "Opportunity successfully updated."
        )
        return data["oportunity"]
