"""Contacts as a record kind: the shared machinery (records/) plus the rules that are
contacts' own (contract B.1) — the channel's required contact point, solving, and the
uniqueness of phone and email among the workspace's live contacts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcrm.contacts import repository as repo
from chatcrm.contacts.errors import ContactDeletedConflict, ContactNotFound, DuplicateContact
from chatcrm.contacts.fields import FIELDS, PLATFORM_API, PLATFORM_WHATSAPP
from chatcrm.contacts.table import contacts
from chatcrm.core.errors import BadRequest, FieldError
from chatcrm.db.database import Connection
from chatcrm.records import visibility
from chatcrm.records.bodies import Given
from chatcrm.records.kind import RecordKind, Write

_CONTACT_POINTS = frozenset({"platformId", "email", "phone", "internalWhatsappNumber"})


def _check_create(given: Given) -> None:
    """The original service's rule: WhatsApp contacts need the number, others an email."""
    if any(e.field in _CONTACT_POINTS for e in given.errors):
        return
    platform_id = given.clean.get("platformId", PLATFORM_API)
    if platform_id == PLATFORM_WHATSAPP and not given.clean.get("internalWhatsappNumber"):
        given.errors.append(
            FieldError(
                given.key("internalWhatsappNumber"),
                "is required for WhatsApp contacts (platformId 2)",
            )
        )
    elif platform_id != PLATFORM_WHATSAPP and not given.clean.get("email"):
        given.errors.append(
            FieldError("email", f"is required for contacts of platformId {platform_id}")
        )


def _check_update(given: Given) -> None:
    """`solvedByAgentId` only with isSolved (400), and only when solving (422)."""
    clean = given.clean
    if "solvedByAgentId" in given.names and "isSolved" not in given.names:
        raise BadRequest.field(
            "solvedByAgentId",
            "'solvedByAgentId' can only be set together with isSolved, "
            'e.g. "paramToUpdate": "isSolved,solvedByAgentId".',
        )
    if clean.get("solvedByAgentId") is not None and clean.get("isSolved") is False:
        given.errors.append(FieldError("solvedByAgentId", "must be null when isSolved is false"))


async def _check_unique(conn: Connection, write: Write) -> None:
    """Phone and email are unique among the workspace's live contacts (409 naming the
    owner). Checked before writing; a concurrent writer is caught by the unique indexes."""
    clean, workspace_id = write.given.clean, write.workspace_id
    exclude = None if write.created else write.record_id
    phone = clean.get("internalWhatsappNumber")
    if phone:
        owner = await repo.find_live_by_phone(conn, workspace_id, phone, exclude=exclude)
        if owner is not None:
            raise DuplicateContact(
                write.given.key("internalWhatsappNumber"),
                await _named(conn, workspace_id, owner),
            )
    email = clean.get("email")
    if email:
        owner = await repo.find_live_by_email_key(
            conn, workspace_id, email.lower(), exclude=exclude
        )
        if owner is not None:
            raise DuplicateContact("email", await _named(conn, workspace_id, owner))


async def _named(conn: Connection, workspace_id: str, owner: str) -> str | None:
    """The duplicate's id, unless the caller may not see that contact (J.2)."""
    return owner if await visibility.sees(conn, CONTACT, workspace_id, owner) else None


async def _check_restorable(conn: Connection, workspace_id: str, stored: Mapping[str, Any]) -> None:
    """A contact comes back only if no live contact now holds its phone or email (409)."""
    phone = stored["internal_whatsapp_number"]
    if phone:
        owner = await repo.find_live_by_phone(conn, workspace_id, phone)
        if owner is not None:
            raise ContactDeletedConflict(stored["id"], "internalWhatsappNumber", owner)
    email_key = stored["email_key"]
    if email_key:
        owner = await repo.find_live_by_email_key(conn, workspace_id, email_key)
        if owner is not None:
            raise ContactDeletedConflict(stored["id"], "email", owner)


CONTACT = RecordKind(
    name="contact",
    fields=FIELDS,
    table=contacts,
    not_found=ContactNotFound,
    check_create=_check_create,
    check_update=_check_update,
    before_write=_check_unique,
    explain_conflict=_check_unique,
    restore_to_column_end=True,
    before_restore=_check_restorable,
)
