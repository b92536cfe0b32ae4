"""Meta's calls to a channel (contract K.2): the verification handshake and the delivery
of messages and statuses. No API key: the verify token authenticates the first, the
body's signature (HMAC-SHA256 keyed with the app secret) the second.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

import orjson
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from chatcrm.api.envelope import ok
from chatcrm.api.routing import Param, Routes
from chatcrm.api.state import STATE_CONNECTION
from chatcrm.api.static_files import NOSNIFF
from chatcrm.channels import inbound
from chatcrm.channels import repository as repo
from chatcrm.channels.errors import ChannelNotFound
from chatcrm.channels.service import RECEIVING_PATH
from chatcrm.contacts.errors import DuplicateContact
from chatcrm.core import messages as m
from chatcrm.core.errors import BadRequest, Unauthorized
from chatcrm.core.ids import is_id
from chatcrm.db.database import Connection, Row
from chatcrm.db.errors import UniqueViolation

log = logging.getLogger("chatcrm.channels")
routes = Routes("channels")
SIGNATURE_HEADER = "x-hub-signature-256"


def _conn(request: Request) -> Connection:
    conn: Connection = request.scope["state"][STATE_CONNECTION]
    return conn


async def _channel(request: Request) -> Row:
    channel_id = request.path_params["channelId"]
    row = await repo.by_id(_conn(request), channel_id) if is_id(channel_id) else None
    if row is None or not row["enabled"]:
        raise ChannelNotFound(channel_id)
    return row


@routes.operation(
    "GET",
    RECEIVING_PATH,
    operation_id="verifyWhatsappWebhook",
    summary="Meta's verification request: answers hub.challenge when the token matches",
    message="",
    answer=None,
    params=(
        Param("hub.mode", "query", "subscribe"),
        Param("hub.verify_token", "query", "The channel's verifyToken."),
        Param("hub.challenge", "query", "Answered as it is, as text/plain."),
    ),
    authenticated=False,
    enveloped=False,
    errors=(403,),
)
async def verify(request: Request) -> Response:
    query = request.query_params
    channel_id = request.path_params["channelId"]
    row = await repo.by_id(_conn(request), channel_id) if is_id(channel_id) else None
    token = query.get("hub.verify_token", "")
    if (
        row is None
        or query.get("hub.mode") != "subscribe"
        or not hmac.compare_digest(token.encode(), str(row["verify_token"]).encode())
    ):
        return PlainTextResponse("Forbidden", status_code=403)
    # Whatever the challenge holds is echoed: never to be sniffed as a page of this origin.
    return PlainTextResponse(query.get("hub.challenge", ""), headers=NOSNIFF)


def signed(raw: bytes, header: str | None, secret: str) -> bool:
    """Whether `X-Hub-Signature-256` is `sha256=` + the hex HMAC-SHA256 of the raw body."""
    if header is None or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
    return hmac.compare_digest(header[len("sha256=") :].strip().lower().encode(), expected.encode())


def _not_json(constant: str) -> None:
    raise ValueError(f"{constant} is not JSON")


def _parsed(raw: bytes) -> object:
    """The body read as JSON. orjson refuses a lone UTF-16 surrogate escape (`\\ud83d`, an
    emoji cut in half), which JSON's grammar allows: such a body is read again by the
    standard library's parser, and inbound.storable mends the strings."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass
    try:
        return json.loads(raw, parse_constant=_not_json)
    except (ValueError, RecursionError):
        raise BadRequest("The body is not JSON.") from None


@routes.operation(
    "POST",
    RECEIVING_PATH,
    operation_id="receiveWhatsappWebhook",
    summary="Meta's delivery of messages and statuses (signed; 200 only once stored)",
    message=m.DELIVERY_STORED,
    answer={
        "type": "object",
        "properties": {
            "messages": {"type": "integer", "description": "Messages stored (new ones)."},
            "statuses": {"type": "integer", "description": "Statuses applied."},
        },
        "required": ["messages", "statuses"],
    },
    params=(Param("X-Hub-Signature-256", "header", "sha256=<hex HMAC-SHA256 of the body>"),),
    body={"type": "object", "description": "Meta's webhook payload (object, entry[])."},
    authenticated=False,
    errors=(400, 401, 404),
)
async def receive(request: Request) -> Response:
    channel = await _channel(request)
    raw = await request.body()
    if not signed(raw, request.headers.get(SIGNATURE_HEADER), channel["app_secret"]):
        raise Unauthorized(
            "X-Hub-Signature-256 is missing or is not the HMAC-SHA256 of the body keyed with "
            "the channel's app secret."
        )
    payload = _parsed(raw)
    conn = _conn(request)
    # A racing delivery stored it first; or the database undid this one for another's sake
    # (a deadlock): applied again, it finds what the other stored.
    applied = await conn.run_again_when_undone(
        lambda: inbound.apply(conn, channel, payload), also=(UniqueViolation, DuplicateContact)
    )
    data = {"messages": applied.messages, "statuses": applied.statuses}
    return ok(m.DELIVERY_STORED, data)
