"""The response envelope `{success, code, errorCode, message, data}`, rendered with orjson.

Records arrive as the database returned them, keys in contract order (records/fields.py);
orjson keeps that order, and money and stored JSON arrive as `orjson.Fragment`, so they are
written exactly.
"""

from collections.abc import Mapping

from starlette.responses import Response

from chatcrm.core.jsontext import dumps

JSON_MEDIA_TYPE = "application/json"


def envelope_bytes(
    *, code: int, message: str, data: object = None, error_code: str | None = None
) -> bytes:
    return dumps(
        {
            "success": code == 200,
            "code": code,
            "errorCode": error_code,
            "message": message,
            "data": data,
        }
    )


class EnvelopeResponse(Response):
    media_type = JSON_MEDIA_TYPE


# Answers that hold a secret (a key, a link, a two-factor secret, a webhook's signing
# secret, a channel's verify token): kept by no cache. A POST's is not kept by the
# idempotency layer either (api/idempotency.py), so shown that once.
NO_STORE = {"cache-control": "no-store"}


def ok(
    message: str, data: object = None, *, headers: Mapping[str, str] | None = None
) -> EnvelopeResponse:
    """A success: HTTP 200, `success: true`, `errorCode: null`."""
    return EnvelopeResponse(
        envelope_bytes(code=200, message=message, data=data), status_code=200, headers=headers
    )


def error_response(
    *,
    status: int,
    error_code: str,
    message: str,
    data: object = None,
    headers: Mapping[str, str] | None = None,
) -> EnvelopeResponse:
    return EnvelopeResponse(
        envelope_bytes(code=status, message=message, data=data, error_code=error_code),
        status_code=status,
        headers=headers,
    )
