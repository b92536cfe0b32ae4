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

    def __init__(self, field: str, existing_id: str) -> None:
        what = "email" if field == "email" else "phone number"
        super().__init__(
            f"Another contact of this workspace already has this {what} (id {existing_id}).",
            errors=[FieldError(field, f"is already used by contact {existing_id}")],
            extra={"existingId": existing_id},
        )
