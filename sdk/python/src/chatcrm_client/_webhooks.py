"""`client.webhooks`: contract D.4."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chatcrm_client._describe import PAGE_SIZE, nothing, one, segment, token_pages, update_body
from chatcrm_client._engine import Answer, Call, Pages
from chatcrm_client._names import to_wire
from chatcrm_client._operations import M, Resource, listing, operation
from chatcrm_client._records import Delivery, Webhook

PATH = "/api/webhook"
Webhooks_ = list[Webhook]  # (inside the class, `list` is the method)


def _listed(answer: Answer) -> Webhooks_:
    return [Webhook(item) for item in answer.data["data"]]


class Webhooks(Resource[M]):
    @operation
    def create(self, /, url: str, **fields: Any) -> Call[Webhook]:
        """A new endpoint (`event_types` default `["*"]`, `description`); its `secret`
        verifies the deliveries (`verify_webhook`)."""
        body = {"url": url, **to_wire("webhook", fields)}
        return Call("POST", PATH, one(Webhook, "webhook"), json=body)

    @operation
    def list(self) -> Call[Webhooks_]:
        """The workspace's endpoints, oldest first, without their secrets."""
        return Call("GET", PATH, _listed)

    @operation
    def get(self, id: str) -> Call[Webhook]:
        return Call("GET", f"{PATH}/{segment(id)}", one(Webhook, "webhook"))

    @operation
    def update(self, /, id: str, **fields: Any) -> Call[Webhook]:
        """Change `url`, `event_types`, `description` or `enabled`."""
        body = update_body("webhook", fields)
        return Call("PUT", f"{PATH}/{segment(id)}", one(Webhook, "webhook"), json=body)

    @operation
    def delete(self, id: str) -> Call[None]:
        return Call("DELETE", f"{PATH}/{segment(id)}", nothing)

    @operation
    def rotate_secret(self, id: str) -> Call[Webhook]:
        """A new secret; the old one still signs for 24 hours."""
        path = f"{PATH}/{segment(id)}/rotate-secret"
        return Call("POST", path, one(Webhook, "webhook"), json={})

    @operation
    def test(self, id: str) -> Call[str]:
        """Queue a `webhook.test` event for this endpoint; its event id."""
        path = f"{PATH}/{segment(id)}/test"
        return Call("POST", path, lambda answer: str(answer.data["eventId"]), json={})

    @listing
    def deliveries(
        self, id: str, status: str | None = None, *, page_size: int = PAGE_SIZE
    ) -> Pages[Delivery]:
        """The endpoint's deliveries, newest first (`status`: pending, succeeded, failed)."""
        params: dict[str, Any] = {"pageSize": page_size}
        if status is not None:
            params["status"] = status
        return token_pages(Delivery, f"{PATH}/{segment(id)}/deliveries", params)

    @operation
    def replay(
        self, id: str, *, event_id: str | None = None, since: datetime | str | None = None
    ) -> Call[int]:
        """Queue one event, or the events since a time, again; how many were queued."""
        body: dict[str, Any] = {}
        if event_id is not None:
            body["eventId"] = event_id
        if since is not None:
            body["since"] = since
        path = f"{PATH}/{segment(id)}/replay"
        return Call("POST", path, lambda answer: int(answer.data["queued"]), json=body)
