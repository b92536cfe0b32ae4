"""The HTTP/1.1 server's own answer to a request it cannot parse, in the envelope.

The server (uvicorn) refuses a request line it cannot read (raw non-ASCII characters in
the URL, `?q=MARÍA` not percent-encoded, a malformed header) before the application sees
it, with a bare `text/plain` 400. These protocol classes answer it as every other error
is answered: the envelope, with an `X-Request-Id`.
"""

from __future__ import annotations

import logging
import os

from uvicorn.protocols.http.h11_impl import H11Protocol

from chatcrm.api.envelope import JSON_MEDIA_TYPE, envelope_bytes
from chatcrm.core import messages as m

log = logging.getLogger("chatcrm.request")

# The server does not say which rule the request broke, so the answer names them all.
MESSAGE = (
    "The request is not valid HTTP/1.1: send a standard method in upper case, percent-encode "
    "the URL (a non-ASCII character as its UTF-8 bytes, e.g. MAR%C3%8DA for MARÍA), keep it "
    "under 64 KiB, and send well-formed headers."
)


def _answer() -> bytes:
    body = envelope_bytes(code=400, message=MESSAGE, error_code=m.BAD_REQUEST)
    request_id = os.urandom(16).hex()
    log.warning("unreadable HTTP request", extra={"request_id": request_id, "status": 400})
    head = (
        "HTTP/1.1 400 Bad Request\r\n"
        f"content-type: {JSON_MEDIA_TYPE}\r\n"
        f"content-length: {len(body)}\r\n"
        f"x-request-id: {request_id}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class EnvelopeH11Protocol(H11Protocol):
    def send_400_response(self, msg: str) -> None:
        self.transport.write(_answer())
        self.transport.close()


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:  # pragma: no cover - httptools comes with uvicorn[standard]
    HTTP_PROTOCOL: type = EnvelopeH11Protocol
else:

    class EnvelopeHttpToolsProtocol(HttpToolsProtocol):
        def send_400_response(self, msg: str) -> None:
            self.transport.write(_answer())
            self.transport.close()

    HTTP_PROTOCOL = EnvelopeHttpToolsProtocol
