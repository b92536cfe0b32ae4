"""The original service's update rule: `paramToUpdate` names the field(s), the body carries them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatcrm.core.errors import BadRequest, FieldError, ValidationFailed
from chatcrm.core.values import validate_fields

PARAM = "paramToUpdate"
_ALWAYS_ALLOWED = frozenset({PARAM, "id", "workspaceId"})


def fields_to_update(
    body: dict[str, Any],
    *,
    updatable: tuple[str, ...],
    read_only: frozenset[str],
    record_id: str,
) -> list[str]:
    """The field names to update, in the order named; 400 for every structural mistake."""
    listing = ", ".join(updatable)
    if PARAM not in body:
        raise BadRequest.field(
            PARAM,
            f"Missing '{PARAM}': name the field(s) to update and send each with its new value, "
            f'e.g. {{"{PARAM}": "name", "name": "New name"}}.',
        )
    param = body[PARAM]
    if not isinstance(param, str):
        raise BadRequest.field(
            PARAM, f"'{PARAM}' must be a string naming the field(s), separated by commas."
        )
    names: list[str] = []
    for raw in param.split(","):
        name = raw.strip()
        if not name:
            raise BadRequest.field(
                PARAM, f"'{PARAM}' must name at least one field; separate several with commas."
            )
        if name not in names:
            names.append(name)
    for name in names:
        if name in read_only:
            raise BadRequest.field(
                name, f"Field '{name}' is read-only. Updatable fields: {listing}."
            )
        if name not in updatable:
            raise BadRequest.field(
                name, f"Field '{name}' cannot be updated. Updatable fields: {listing}."
            )
        if name not in body:
            raise BadRequest.field(
                name, f"Field '{name}' is named in '{PARAM}' but missing from the body."
            )
    for key in body:
        if key not in _ALWAYS_ALLOWED and key not in names:
            raise BadRequest.field(
                key,
                f"Unexpected body key '{key}': send only '{PARAM}', id, workspaceId and the "
                f"fields named in '{PARAM}'.",
            )
    if "id" in body and body["id"] != record_id:
        raise BadRequest.field("id", "The body 'id' does not match the query parameter 'id'.")
    return names


def create_values(
    body: dict[str, Any],
    *,
    allowed: frozenset[str],
    required: tuple[str, ...],
    validators: dict[str, Callable[[str, Any], Any]],
    workspace_key: bool = True,
) -> tuple[dict[str, Any], list[FieldError]]:
    """Validate a create body: unknown keys are a 400 (never silently dropped); then every
    missing or null required field and every invalid value, all together, for one 422.

    `null` for an optional field means its default, so such keys are left out of `clean`.
    """
    for key in body:
        # workspaceId may name the workspace of any create, except of a new workspace.
        if key not in allowed and (key != "workspaceId" or not workspace_key):
            raise BadRequest.field(
                key, f"Unexpected body key '{key}'. Accepted keys: {', '.join(sorted(allowed))}."
            )
    errors = [FieldError(k, "is required") for k in required if body.get(k) is None]
    present = [k for k in body if k in validators and body[k] is not None]
    clean, value_errors = validate_fields(validators, present, body)
    return clean, errors + value_errors


def require_valid(errors: list[FieldError]) -> None:
    if errors:
        raise ValidationFailed(errors)
