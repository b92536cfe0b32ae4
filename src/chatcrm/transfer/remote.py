"""The calls an import or export makes, over the Python SDK (`chatcrm_client`): one place
that knows the SDK, so the rest deals in plain wire dicts."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from chatcrm.core import values
from chatcrm.core.errors import FieldError
from chatcrm.core.ids import is_id
from chatcrm.core.phone import PhoneError, normalize_phone
from chatcrm.transfer.cells import CellError
from chatcrm.transfer.problems import BadInput

# Pages as large as the API serves: fewer round trips for an export.
PAGE_SIZE = 100


def _plain(value: Any) -> Any:
    """A record object of the SDK, or a plain value, as wire JSON."""
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def error_text(exc: Exception) -> str:
    """The API's message and field errors of a failed call, on one line."""
    errors = getattr(exc, "errors", None) or []
    parts = [
        f"{e.get('field')}: {e.get('message')}" if e.get("field") else str(e.get("message"))
        for e in errors
        if isinstance(e, dict)
    ]
    if parts:
        return "; ".join(parts)
    return str(getattr(exc, "message", None) or exc)


class Remote:
    """One workspace of a running server."""

    def __init__(self, url: str, api_key: str, workspace_id: str) -> None:
        from chatcrm_client import Client

        self.url = url
        self.workspace_id = workspace_id
        # Long timeout: an upsert of 500 rows on a busy server can take seconds.
        # Many retries: a long import may meet rate limits (429 with Retry-After) and restarts.
        self.client = Client(url, api_key, workspace_id, timeout=120.0, max_retries=8)
        # The run's first call, with few: a mistyped URL is said in seconds, not after the
        # 40 s the long run's retries wait.
        self._first = Client(url, api_key, workspace_id, timeout=30.0, max_retries=2)

    def close(self) -> None:
        for client in (self._first, self.client):
            close = getattr(client, "close", None)
            if callable(close):
                close()

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.client.request("GET", path, params=params)

    def workspace(self) -> dict[str, Any]:
        """Get Workspace: its stages, tags, agents, segmentations. The first call of a run,
        so a wrong URL, key or workspace ends the run here (exit 2)."""
        from chatcrm_client import ChatcrmError, ConnectionFailed

        try:
            path = f"/api/workspace/{self.workspace_id}"
            data: dict[str, Any] = _plain(self._first.request("GET", path))
        except ConnectionFailed as exc:
            # Not the workspace's fault: the server is not there (its message names the
            # request first, then what failed).
            why = str(exc).split(": ", 1)[-1]
            raise BadInput(
                f"cannot reach the server at {self.url}: {why} (is it running? check --url)"
            ) from exc
        except ChatcrmError as exc:
            raise BadInput(f"cannot use workspace {self.workspace_id}: {error_text(exc)}") from exc
        return data

    def create_tag(self, name: str) -> dict[str, Any]:
        """A new tag of the workspace (--create-tags); a refusal fails the row."""
        from chatcrm_client import ChatcrmError

        try:
            data: dict[str, Any] = _plain(
                self.client.request(
                    "POST", f"/api/workspace/{self.workspace_id}/tags", json={"name": name}
                )
            )
        except ChatcrmError as exc:
            raise CellError(f'cannot create tag "{name}": {error_text(exc)}') from exc
        return data

    def upsert_contacts(
        self, items: list[dict[str, Any]], *, match_by: str, dry_run: bool
    ) -> dict[str, Any]:
        answer = self.client.contacts.upsert_batch(items, match_by=match_by, dry_run=dry_run)
        data: dict[str, Any] = _plain(answer)
        data["results"] = [_plain(result) for result in data["results"]]
        return data

    def pages(self, path: str, filters: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        """Every page of a list (contacts in their full shape), following the tokens."""
        params: dict[str, Any] = {**filters, "pageSize": PAGE_SIZE}
        while True:
            data = _plain(self._get(path, params))
            yield [_plain(record) for record in data["data"]]
            token = data.get("continuationToken")
            if not token:
                return
            params["continuationToken"] = token

    def contacts(self, filters: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        return self.pages("/api/contact", {**filters, "shape": "full"})

    def opportunities(self, filters: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
        return self.pages("/api/opportunity", filters)

    def find_contact(self, value: str, country: str | None = None) -> str | None:
        """The id of the live contact that `value` names: an id, an email or a phone (read
        as the server reads it, national numbers in the workspace's `country`). Also
        the id of a deleted contact that opportunities of the workspace still name (an
        export writes it): a re-run of that file matches them, as it matches any other."""
        if is_id(value):
            from chatcrm_client import NotFound

            try:
                self._get(f"/api/contact/{value}")
            except NotFound:
                linked = next(iter(self.opportunities({"contactId": value})), [])
                return value if linked else None
            return value
        if "@" in value:
            try:  # as the server reads an e-mail
                values.email("email", value, nullable=False)
            except FieldError:
                return None  # no id, email or phone: the row says so, by its column
            data = _plain(self._get("/api/contact/searchByEmail", {"email": value}))
            return data.get("contactId") or None
        try:
            number = normalize_phone(value, country=country)  # as the server reads it
        except PhoneError:
            return None  # no id, email or phone: the row says so, by its column
        data = _plain(self._get("/api/contact/searchByCellphone", {"cellphone": value}))
        found = data.get("data") or []
        if len(found) < 2:
            return data.get("contactId") or None
        # Its WhatsApp number to one, its sender phone to others (newest first, at most
        # 100): the search's shape has no WhatsApp number, the list's full one has.
        return self._holder_of(number) or data.get("contactId") or None

    def _holder_of(self, number: str) -> str | None:
        """The live contact whose WhatsApp number is `number`, read from the list (its
        `q` matches phone digits; full shapes, a page of 100 a request), past any contacts
        holding it as a sender phone."""
        for page in self.contacts({"q": number}):
            for contact in page:
                if _digits(contact, WHATSAPP) == number:
                    return str(contact["id"])
        return None

    def contact(self, contact_id: str) -> dict[str, Any] | None:
        """A contact in its full shape (with its phone), or None when it is gone."""
        from chatcrm_client import NotFound

        try:
            data = _plain(self._get(f"/api/contact/{contact_id}", {"shape": "full"}))
        except NotFound:
            return None
        found: list[dict[str, Any]] = data.get("data") or []
        return found[0] if found else None

    def create_opportunity(self, body: dict[str, Any]) -> dict[str, Any]:
        data = _plain(self.client.request("POST", "/api/opportunity", json=body))
        record: dict[str, Any] = _plain(data["opportunity"])
        return record

    def update_contact(self, contact_id: str, fields: dict[str, Any]) -> None:
        body = {"paramToUpdate": ",".join(fields), **fields}
        params = {"id": contact_id, "workspaceId": self.workspace_id}
        self.client.request("PUT", "/api/contact", params=params, json=body)

    def delete_opportunity(self, opportunity_id: str) -> None:
        self.client.request("DELETE", f"/api/opportunity/{opportunity_id}")

    def add_opportunity_activity(self, opportunity_id: str, activity: dict[str, Any]) -> None:
        path = f"/api/opportunity/{opportunity_id}/agent/activities"
        self.client.request("POST", path, json={**activity, "workspaceId": self.workspace_id})

    def update_opportunity(self, opportunity_id: str, fields: dict[str, Any]) -> dict[str, Any]:
        body = {"paramToUpdate": ",".join(fields), **fields}
        data = _plain(
            self.client.request("PUT", "/api/opportunity", params={"id": opportunity_id}, json=body)
        )
        record: dict[str, Any] = _plain(data["oportunity"])
        return record


WHATSAPP = "internalWhatsappNumber"


def _digits(contact: dict[str, Any], wire: str) -> str:
    return re.sub(r"\D", "", str(contact.get(wire) or ""))
