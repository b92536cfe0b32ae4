"""Errors of contacts: an unknown contact, a phone or email another contact holds."""

from __future__ import annotations

from chatcrm.core import messages as m
from chatcrm.core.errors import Conflict, FieldError, ServiceError


class ContactNotFound(ServiceError):
    status, error_code = 404, m.CONTACT_NOT_FOUND

    def __init__(self, contact_id: str) -> None:
        super().__init__(f"No contact with id '{contact_id}' in this workspace.")


class DuplicateContact(Conflict):
    error_code = m.DUPLICATE_CONTACT

    def __init__(self, field: str, existing_id: str | None) -> None:
        """`existing_id` None: the caller may not see that contact (an assigned-only agent,
        J.2), so it is not named."""
        what = "email" if field == "email" else "phone number"
        if existing_id is None:
            super().__init__(
                f"Another contact of this workspace already has this {what}.",
                errors=[FieldError(field, "is already used by another contact")],
            )
            return
        super().__init__(
            f"Another contact of this workspace already has this {what} (id {existing_id}).",
            errors=[FieldError(field, f"is already used by contact {existing_id}")],
            extra={"existingId": existing_id},
        )


class ContactDeletedConflict(Conflict):
    """A deleted contact cannot come back while a live one holds its phone or email."""

    error_code = m.CONTACT_DELETED_CONFLICT

    def __init__(self, contact_id: str, field: str, existing_id: str) -> None:
        what = "email" if field == "email" else "phone number"
        super().__init__(
            f"Contact {contact_id} cannot be restored: its {what} now belongs to the live "
            f"contact {existing_id}. Change or delete that contact first.",
            errors=[FieldError(field, f"is now used by contact {existing_id}")],
            extra={"existingId": existing_id},
        )
