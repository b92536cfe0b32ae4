"""Reading JSON request bodies exactly: decimals stay exact, non-JSON is refused."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.requests import Request

from chatcrm.core.errors import BadRequest, UnsupportedMediaType
from chatcrm.core.jsontext import JsonNumber

_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F][0-9a-fA-F]{2})")


def is_json_media_type(content_type: str) -> bool:
    media, _, params = content_type.partition(";")
    media = media.strip().lower()
    if media != "application/json" and not (
        media.startswith("application/") and media.endswith("+json")
    ):
        return False
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip().strip('"').lower() not in (
            "utf-8",
            "utf8",
        ):
            return False
    return True


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_MAX_INT_DIGITS = 4000


def _parse_int(text: str) -> int:
    # Checked before int(): Python's own refusal would speak of its interpreter settings.
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"a number has more than {_MAX_INT_DIGITS} digits")
    return int(text)


def _check_strings(value: Any) -> None:
    """PostgreSQL text cannot hold NUL, and UTF-8 cannot hold a lone surrogate."""
    if isinstance(value, str):
        if "\x00" in value:
            raise BadRequest("Strings must not contain the NUL character (\\u0000).")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise BadRequest("Strings must not contain unpaired surrogates.") from exc
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def parse_json(raw: bytes) -> Any:
    """Parse a body; numbers with a fraction or exponent become Decimals that remember how
    they were written (money stays exact, a variable comes back as sent)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest("The request body is not valid UTF-8.") from exc
    text = text.removeprefix("\ufeff")
    try:
        value = json.loads(
            text, parse_float=JsonNumber, parse_int=_parse_int, parse_constant=_reject_constant
        )
    except RecursionError as exc:
        raise BadRequest("The JSON body is nested too deeply.") from exc
    except ValueError as exc:
        detail = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise BadRequest(f"The request body is not valid JSON: {detail}.") from exc
    if "\\u" in text and _SUSPECT_ESCAPE.search(text):
        _check_strings(value)
    return value


async def read_json_object(request: Request, *, required: bool = True) -> dict[str, Any]:
    """The body as a JSON object. No body: `{}` when optional, else 400."""
    raw = await request.body()
    if not raw.strip():
        if required:
            raise BadRequest("A JSON object is required as the request body.")
        return {}
    # Every line of a repeated header is read, never whichever came first: a body declared
    # JSON and text/plain is not declared JSON (docs/api.md 1.10).
    for content_type in request.headers.getlist("content-type"):
        # A body without Content-Type is read as JSON (an empty header declares nothing
        # either); one declared as something else is 415.
        if content_type.strip() and not is_json_media_type(content_type):
            raise UnsupportedMediaType(
                f"Content-Type {content_type.strip()!r} is not supported; "
                "send application/json (UTF-8)."
            )
    coding = ", ".join(request.headers.getlist("content-encoding")).strip().lower()
    if any(c.strip() not in ("", "identity") for c in coding.split(",")):
        # Bodies are read as sent; a compressed one would be refused as bytes that are not
        # UTF-8, which names the wrong cause (RFC 9110 15.5.16: 415 for a coding).
        raise UnsupportedMediaType(
            f"Content-Encoding {coding!r} is not supported; send the body uncompressed."
        )
    value = parse_json(raw)
    if not isinstance(value, dict):
        raise BadRequest("The request body must be a JSON object.")
    return value
