"""A client that hangs up before its body has all arrived leaves its `Idempotency-Key` free
(contract C: its retry with the same key and the whole body runs). The cut body was taken
for the whole one: refused 400, stored under the key, and every retry answered 409 for a
day. Through a real `chatcrm serve`: only a socket closed mid-body shows it."""

from __future__ import annotations

import socket
import time
import uuid

import httpx

from chatcrm.provisioning import NewAccount
from tests.client import ok_data
from tests.servers import serve


def test_a_request_cut_off_mid_body_leaves_its_key_to_the_retry(
    database_url: str, account: NewAccount
) -> None:
    body = b'{"name": "Ida", "email": "ida@example.com"}'
    key = f"hangup-{uuid.uuid4()}"
    headers = {
        "Authorization": f"Bearer {account.api_key}",
        "x-workspace-id": account.workspace_id,
        "Content-Type": "application/json",
        "Idempotency-Key": key,
    }
    with serve(database_url) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        head = f"POST /api/contact HTTP/1.1\r\nHost: {host}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        head += f"Content-Length: {len(body)}\r\n\r\n"
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(head.encode() + body[:10])  # then the connection drops
        time.sleep(0.5)  # the server has seen the hang-up
        retry = httpx.post(f"{server.base_url}/api/contact", content=body, headers=headers)
        made = ok_data(retry, "Contact created successfully.")
        again = httpx.post(f"{server.base_url}/api/contact", content=body, headers=headers)
        assert ok_data(again)["id"] == made["id"]  # and the retry's answer is the key's now
