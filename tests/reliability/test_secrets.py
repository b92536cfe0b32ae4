"""API keys (contract section 6): shown once, stored only as SHA-256 hashes of their secret;
a revoked key stops working everywhere within the key cache's 5 s."""

from __future__ import annotations

import hashlib
import time

import httpx
from fastapi.testclient import TestClient
from sqlalchemy import select

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.schema import api_keys
from tests.client import Api, error, ok_data
from tests.conftest import new_account
from tests.reliability.conftest import add_key, run_cli, sql

KEY_PREFIX = "ccrm_"


def split_key(api_key: str) -> tuple[str, str]:
    """(key id as stored, secret) of `ccrm_<32 hex>_<secret>`."""
    assert api_key.startswith(KEY_PREFIX), api_key
    hex_id, secret = api_key[len(KEY_PREFIX) :].split("_", 1)
    assert len(hex_id) == 32
    key_id = f"{hex_id[:8]}-{hex_id[8:12]}-{hex_id[12:16]}-{hex_id[16:20]}-{hex_id[20:]}"
    return key_id, secret


def unauthorized(response: httpx.Response) -> None:
    body = error(response, 401, "UNAUTHORIZED")
    assert body["data"] is None


def test_keys_are_stored_only_as_sha256_of_their_secret(database_url: str) -> None:
    account = new_account(database_url)
    _, cli_key = add_key(database_url, account.account_id)
    rows = sql(database_url, select(api_keys).where(api_keys.c.account_id == account.account_id))
    assert len(rows) == 2
    stored = {row.id: row for row in rows}
    everything = " ".join(str(value) for row in rows for value in row)
    for api_key in (account.api_key, cli_key):
        key_id, secret = split_key(api_key)
        assert len(secret) >= 20
        assert api_key not in everything
        assert secret not in everything
        assert stored[key_id].secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert split_key(account.api_key)[0] == account.key_id


def test_a_right_id_with_a_wrong_secret_is_401(settings: Settings, database_url: str) -> None:
    account = new_account(database_url)
    key_id, secret = split_key(account.api_key)
    wrong = f"{KEY_PREFIX}{key_id.replace('-', '')}_{'A' * len(secret)}"
    almost = account.api_key[:-1] + ("a" if account.api_key[-1] != "a" else "b")
    with TestClient(create_app(settings)) as client:
        api = Api(client, account)
        # Not yet cached: the secret is checked against the stored hash.
        unauthorized(api.get(f"/api/workspace/{api.ws}", auth=wrong))
        ok_data(api.get(f"/api/workspace/{api.ws}"))
        # Cached now: the cache must still check the secret.
        for bad in (wrong, almost, account.api_key + "x"):
            unauthorized(api.get(f"/api/workspace/{api.ws}", auth=bad))
        ok_data(api.get(f"/api/workspace/{api.ws}"))


def test_a_revoked_key_stops_working_within_a_second(database_url: str) -> None:
    """A key cached for 5 s is dropped within 1 s of its revocation: told by a notification
    on PostgreSQL, by the key-change counter on SQLite."""
    settings = Settings(database_url=database_url, rate_limit=0, access_log=False, dispatch=False)
    assert settings.key_cache_ttl == 5.0
    account = new_account(database_url)
    _, other_key = add_key(database_url, account.account_id)
    with TestClient(create_app(settings)) as client:
        api = Api(client, account)
        ok_data(api.get(f"/api/workspace/{api.ws}"))  # cached from now on
        out = run_cli(database_url, "keys", "revoke", account.key_id)
        assert out.strip() == f"chatcrm: revoked key {account.key_id}"
        revoked_at = time.monotonic()
        while True:
            response = api.get(f"/api/workspace/{api.ws}")
            waited = time.monotonic() - revoked_at
            if response.status_code == 401:
                break
            ok_data(response)
            assert waited < 8, "the revoked key still works"
            time.sleep(0.05)
        unauthorized(response)
        assert waited <= 1.0, waited
        # It stays revoked, and the account's other key is unaffected.
        unauthorized(api.get(f"/api/workspace/{api.ws}"))
        ok_data(api.get(f"/api/workspace/{api.ws}", auth=other_key))
    # A process that never saw the key refuses it at once.
    with TestClient(create_app(settings)) as fresh:
        unauthorized(Api(fresh, account).get(f"/api/workspace/{account.workspace_id}"))
