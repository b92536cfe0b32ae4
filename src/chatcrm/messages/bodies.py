"""The bodies of sending and recording (contract K.1): structure first (400 for a key the
operation does not take), then every value (one 422 listing all)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from chatcrm.core.errors import BadRequest, FieldError, require_valid
from chatcrm.core.timestamps import parse_iso
from chatcrm.messages.record import DIRECTIONS, SEND_TEXT_MAX, STORED_TEXT_MAX
from chatcrm.records.types import Schema

TEMPLATE_NAME_MAX = 512
LANGUAGE_MAX = 20
PARAMETERS_MAX = 100
PARAMETER_MAX = 1024
EXTERNAL_ID_MAX = 200
ID_MAX = 36


def _only(body: dict[str, Any], allowed: tuple[str, ...]) -> None:
    for key in body:
        if key != "workspaceId" and key not in allowed:
            listing = ", ".join(allowed)
            fields = f"Fields: {listing}." if allowed else "This operation takes no fields."
            raise BadRequest.field(key, f"Unknown field '{key}'. {fields}")


def _text(errors: list[FieldError], key: str, value: Any, limit: int) -> str | None:
    if not isinstance(value, str):
        errors.append(FieldError(key, "must be a string"))
        return None
    if not value.strip():
        errors.append(FieldError(key, "must not be empty"))
        return None
    if len(value) > limit:
        errors.append(FieldError(key, f"must be at most {limit} characters"))
        return None
    return value


@dataclass
class Template:
    name: str
    language: str
    parameters: list[str] = field(default_factory=list)

    def stored(self) -> dict[str, Any]:
        return {"name": self.name, "language": self.language, "parameters": self.parameters}


@dataclass
class Send:
    text: str | None
    template: Template | None
    reply_to_id: str | None


def _template(errors: list[FieldError], value: Any) -> Template | None:
    if not isinstance(value, dict):
        errors.append(FieldError("template", "must be an object {name, language, parameters}"))
        return None
    for key in value:
        if key not in ("name", "language", "parameters"):
            errors.append(FieldError(f"template.{key}", "is not a field of a template"))
    name = _text(errors, "template.name", value.get("name"), TEMPLATE_NAME_MAX)
    language = _text(errors, "template.language", value.get("language"), LANGUAGE_MAX)
    parameters = value.get("parameters")
    parameters = [] if parameters is None else parameters  # null: none, as absent
    good: list[str] = []
    if not isinstance(parameters, list) or len(parameters) > PARAMETERS_MAX:
        errors.append(
            FieldError("template.parameters", f"must be a list of at most {PARAMETERS_MAX} strings")
        )
    else:
        for i, p in enumerate(parameters):
            text = _text(errors, f"template.parameters[{i}]", p, PARAMETER_MAX)
            if text is not None:
                good.append(text)
    if name is None or language is None or len(good) != len(parameters or []):
        return None
    # Its text (`[template name] p1, p2…`) is the message's, kept within K.5's limit for
    # a message sent, as a text's is.
    shown = len(f"[template {name}]") + (len(", ".join(good)) + 1 if good else 0)
    if shown > SEND_TEXT_MAX:
        errors.append(
            FieldError(
                "template.parameters",
                f"make the message's text longer than {SEND_TEXT_MAX} characters",
            )
        )
        return None
    return Template(name, language, good)


def send_body(body: dict[str, Any]) -> Send:
    _only(body, ("text", "template", "replyToId"))
    errors: list[FieldError] = []
    text = template = None
    has_text = body.get("text") is not None
    has_template = body.get("template") is not None
    if has_text == has_template:
        errors.append(FieldError("text", "give exactly one of text and template"))
    elif has_text:
        text = _text(errors, "text", body["text"], SEND_TEXT_MAX)
    else:
        template = _template(errors, body["template"])
    reply = body.get("replyToId")
    if reply is not None and (not isinstance(reply, str) or not 0 < len(reply) <= ID_MAX):
        errors.append(FieldError("replyToId", "must be the id of a message of this contact"))
    require_valid(errors)
    return Send(text, template, reply)


@dataclass
class Recorded:
    direction: str
    text: str
    created_at: datetime | None
    external_id: str | None


def record_body(body: dict[str, Any]) -> Recorded:
    _only(body, ("direction", "text", "createdAt", "externalId"))
    errors: list[FieldError] = []
    direction = body.get("direction")
    if direction is None:  # missing or null on a create: "is required", as everywhere
        errors.append(FieldError("direction", "is required"))
    elif direction not in DIRECTIONS:
        errors.append(FieldError("direction", "must be one of in, out"))
    text = None
    if body.get("text") is None:
        errors.append(FieldError("text", "is required"))
    else:
        text = _text(errors, "text", body["text"], STORED_TEXT_MAX)
    created_at = None
    if body.get("createdAt") is not None:
        try:
            created_at = parse_iso(body["createdAt"])
        except ValueError:
            errors.append(FieldError("createdAt", "must be an ISO 8601 date-time"))
    external = body.get("externalId")
    if external is not None:
        external = _text(errors, "externalId", external, EXTERNAL_ID_MAX)
    require_valid(errors)
    assert text is not None and isinstance(direction, str)
    return Recorded(direction, text, created_at, external)


_WORKSPACE: Schema = {"type": "string", "description": "The workspace (as the header)."}
SEND_SCHEMA: Schema = {
    "type": "object",
    "properties": {
        "workspaceId": _WORKSPACE,
        "text": {"type": "string", "minLength": 1, "maxLength": SEND_TEXT_MAX},
        "template": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": TEMPLATE_NAME_MAX},
                "language": {"type": "string", "minLength": 1, "maxLength": LANGUAGE_MAX},
                "parameters": {
                    "type": "array",
                    "maxItems": PARAMETERS_MAX,
                    "items": {"type": "string", "minLength": 1, "maxLength": PARAMETER_MAX},
                },
            },
            "required": ["name", "language"],
            "additionalProperties": False,
        },
        "replyToId": {"type": ["string", "null"], "description": "A message of this contact."},
    },
    "additionalProperties": False,
    "description": "Exactly one of text (within 24 h of the last inbound message) and template.",
}
RECORD_SCHEMA: Schema = {
    "type": "object",
    "properties": {
        "workspaceId": _WORKSPACE,
        "direction": {"type": "string", "enum": list(DIRECTIONS)},
        "text": {"type": "string", "minLength": 1, "maxLength": STORED_TEXT_MAX},
        "createdAt": {"type": "string", "format": "date-time"},
        "externalId": {"type": "string", "minLength": 1, "maxLength": EXTERNAL_ID_MAX},
    },
    "required": ["direction", "text"],
    "additionalProperties": False,
}


def no_fields(body: dict[str, Any]) -> None:
    """The POSTs without body fields take no body, `{}` or `{"workspaceId"}` only."""
    _only(body, ())
