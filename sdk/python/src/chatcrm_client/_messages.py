"""`client.messages`: a contact's conversation (contract K.1)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, NotRequired, TypedDict

from chatcrm_client._describe import PAGE_SIZE, nothing, one, segment
from chatcrm_client._engine import Answer, Call, Pages, data_of
from chatcrm_client._operations import M, Resource, listing, operation
from chatcrm_client._records import Message

CONTACT, MESSAGE = "/api/contact", "/api/message"


class Template(TypedDict):
    """A WhatsApp message template: its name, language code and body parameters."""

    name: str
    language: str
    parameters: NotRequired[Sequence[str]]


@dataclass(frozen=True)
class Media:
    """The bytes of an inbound message's image, audio, video, document or sticker."""

    content: bytes
    content_type: str | None


def _media(answer: Answer) -> Media:
    return Media(answer.data, answer.headers.get("content-type"))


def _conversation(contact_id: str, page_size: int) -> Pages[Message]:
    """Pages come newest first, each one oldest first: each is turned around, so the
    messages come newest first throughout."""

    def follow(data: Any) -> Mapping[str, Any] | None:
        before = data.get("before")
        return None if before is None else {"before": before}

    path = f"{CONTACT}/{segment(contact_id)}/messages"
    return Pages(
        Call("GET", path, data_of, params={"pageSize": page_size}),
        items=lambda data: [Message(item) for item in reversed(data["messages"])],
        follow=follow,
    )


class Messages(Resource[M]):
    @listing
    def list(self, contact_id: str, *, page_size: int = PAGE_SIZE) -> Pages[Message]:
        """The contact's messages, newest first; older pages are asked for as the loop
        reaches them."""
        return _conversation(contact_id, page_size)

    @operation
    def send(
        self,
        contact_id: str,
        text: str | None = None,
        template: Template | None = None,
        reply_to_id: str | None = None,
    ) -> Call[Message]:
        """Queue a WhatsApp message: `text`, or a `template` (outside the 24-hour window
        only a template is allowed). The message comes back `queued`; its status moves
        as the channel sends it (ValidationFailed NO_CHANNEL, WINDOW_CLOSED)."""
        if (text is None) == (template is None):
            raise ValueError("give either text or a template")
        body: dict[str, Any] = {"text": text} if text is not None else {"template": template}
        if reply_to_id is not None:
            body["replyToId"] = reply_to_id
        path = f"{CONTACT}/{segment(contact_id)}/messages"
        return Call("POST", path, one(Message, "message"), json=body)

    @operation
    def record(
        self,
        contact_id: str,
        direction: Literal["in", "out"],
        text: str,
        *,
        created_at: datetime | str | None = None,
        external_id: str | None = None,
    ) -> Call[Message]:
        """Store a message exchanged elsewhere (a bot, another platform) without sending
        it. With `external_id`, recording it again changes nothing and answers the first."""
        body: dict[str, Any] = {"direction": direction, "text": text}
        if created_at is not None:
            body["createdAt"] = created_at
        if external_id is not None:
            body["externalId"] = external_id
        path = f"{CONTACT}/{segment(contact_id)}/messages/record"
        return Call("POST", path, one(Message, "message"), json=body)

    @operation
    def mark_read(self, contact_id: str) -> Call[None]:
        """The conversation is read: the contact's `is_read` becomes true (and WhatsApp
        gets a read receipt of its last inbound message)."""
        path = f"{CONTACT}/{segment(contact_id)}/messages/read"
        return Call("POST", path, nothing, json={})

    @operation
    def retry(self, id: str) -> Call[Message]:
        """Queue a failed outbound message again (Conflict MESSAGE_NOT_FAILED otherwise)."""
        path = f"{MESSAGE}/{segment(id)}/retry"
        return Call("POST", path, one(Message, "message"), json={})

    @operation
    def media(self, id: str) -> Call[Media]:
        """The media of an inbound message, fetched from the channel (NotFound: none)."""
        path = f"{MESSAGE}/{segment(id)}/media"
        return Call("GET", path, _media, headers={"accept": "*/*"}, envelope=False)
