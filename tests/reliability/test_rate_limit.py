"""Rate limits per API key (contract C and section 5): a token bucket per key, the
`RateLimit-*` headers on every authenticated response, 429 `RATE_LIMITED` with
`Retry-After`, per-key limits set with `chatcrm keys create --rate-limit` / `keys limit`."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.provisioning import NewAccount
from tests.client import Api, error, ok_data
from tests.conftest import new_account
from tests.reliability.conftest import add_key, run_cli

LIMIT_HEADERS = ("ratelimit-limit", "ratelimit-remaining", "ratelimit-reset")
NO_SUCH_CONTACT = "01a214de-0000-7000-8000-000000000000"


@contextmanager
def limited_api(settings: Settings, database_url: str, **limits: Any) -> Iterator[Api]:
    """A fresh account on an app of its own with these settings."""
    app = create_app(settings.model_copy(update=limits))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield Api(client, new_account(database_url))


def limits(response: httpx.Response) -> tuple[int, int, int]:
    for name in LIMIT_HEADERS:
        assert name in response.headers, (name, response.status_code, dict(response.headers))
    return (
        int(response.headers["ratelimit-limit"]),
        int(response.headers["ratelimit-remaining"]),
        int(response.headers["ratelimit-reset"]),
    )


def no_limit_headers(response: httpx.Response) -> None:
    for name in (*LIMIT_HEADERS, "retry-after"):
        assert name not in response.headers, (name, dict(response.headers))


def rate_limited(response: httpx.Response) -> int:
    """Assert the 429 answer; return its Retry-After."""
    body = error(response, 429, "RATE_LIMITED")
    assert body["data"] is None
    retry_after = int(response.headers["retry-after"])
    assert retry_after >= 1
    limit, remaining, reset = limits(response)
    assert remaining == 0
    assert 1 <= reset <= limit
    return retry_after


def cheap(api: Api, **kw: Any) -> httpx.Response:
    """An authenticated request that does not touch the database much (a 404)."""
    return api.get_contact(NO_SUCH_CONTACT, **kw)


def exhaust(api: Api, most: int = 60, **kw: Any) -> list[httpx.Response]:
    """Requests until the first 429 (included)."""
    out = []
    for _ in range(most):
        out.append(cheap(api, **kw))
        if out[-1].status_code == 429:
            return out
    raise AssertionError(f"no 429 after {most} requests")


def test_every_authenticated_answer_carries_the_limit_headers(
    settings: Settings, database_url: str
) -> None:
    with limited_api(settings, database_url, rate_limit=1, rate_burst=50) as api:
        contact = api.create_contact()
        answers = [
            api.get_contact(contact["id"]),  # 200
            cheap(api),  # 404
            api.post("/api/opportunity", json={"name": "Deal", "amount": -1}),  # 422
            api.post("/api/opportunity", json={"name": "Deal", "bogus": 1}),  # 400
            api.get_contact(contact["id"], workspace=NO_SUCH_CONTACT),  # 403
            api.put("/api/opportunity", json={}, workspace=None),  # 401 WORKSPACE_REQUIRED
            api.request("PATCH", "/api/contact"),  # 405
            api.get("/api/no-such-route"),  # 404 of the router
        ]
        assert [a.status_code for a in answers] == [200, 404, 422, 400, 403, 401, 405, 404]
        remaining = [limits(a)[1] for a in answers]
        assert all(limits(a)[0] == 50 for a in answers)
        # Each answer spent one token: 50 - 1 (the create) - 1 - ... (refill is 1 per second).
        assert remaining == sorted(remaining, reverse=True)
        assert remaining[0] <= 48 and remaining[-1] < remaining[0]


def test_after_the_burst_429_with_retry_after(settings: Settings, database_url: str) -> None:
    with limited_api(settings, database_url, rate_limit=1, rate_burst=10) as api:
        start = time.monotonic()
        answers = exhaust(api)
        elapsed = time.monotonic() - start
        first_limit, first_remaining, first_reset = limits(answers[0])
        assert (first_limit, first_remaining, first_reset) == (10, 9, 1)
        allowed = answers[:-1]
        assert all(a.status_code == 404 for a in allowed)
        # 10 tokens, plus at most one per second of the loop.
        assert 10 <= len(allowed) <= 10 + int(elapsed) + 1, (len(allowed), elapsed)
        remaining = [limits(a)[1] for a in allowed]
        assert remaining == sorted(remaining, reverse=True)
        assert remaining[-1] == 0
        rate_limited(answers[-1])
        # Refused requests spend nothing, and stay refused until a token is back.
        for _ in range(5):
            assert rate_limited(cheap(api)) == 1


def test_tokens_refill_over_time(settings: Settings, database_url: str) -> None:
    with limited_api(settings, database_url, rate_limit=4, rate_burst=2) as api:
        exhaust(api)
        time.sleep(0.3)  # 4 per second: one token is back after 0.25 s
        again = cheap(api)
        assert again.status_code == 404, again.text
        assert limits(again)[0] == 2
        exhaust(api, most=3)
        time.sleep(0.6)
        for _ in range(2):  # two tokens: the bucket was full again
            assert cheap(api).status_code == 404


def test_limits_are_per_key(settings: Settings, database_url: str) -> None:
    with limited_api(settings, database_url, rate_limit=1, rate_burst=3) as api:
        _, second = add_key(database_url, api.account.account_id)
        rate_limited(exhaust(api)[-1])
        other = cheap(api, auth=second)
        assert other.status_code == 404
        assert limits(other) == (3, 2, 1)
        rate_limited(cheap(api))
        # Another account's key is just as unaffected.
        stranger = Api(api.http, new_account(database_url))
        assert limits(cheap(stranger))[:2] == (3, 2)


def test_unauthenticated_requests_are_not_limited(settings: Settings, database_url: str) -> None:
    with limited_api(settings, database_url, rate_limit=1, rate_burst=1) as api:
        key_id_hex = api.account.key_id.replace("-", "")
        wrong_secret = f"ccrm_{key_id_hex}_{'x' * 43}"
        unknown_key = f"ccrm_{'0' * 32}_{'x' * 43}"
        for _ in range(15):
            for response in (
                cheap(api, auth=None),
                cheap(api, auth=wrong_secret),
                cheap(api, auth=unknown_key),
                cheap(api, auth="not-a-key"),
            ):
                error(response, 401, "UNAUTHORIZED")
                no_limit_headers(response)
            health = api.http.get("/health")
            assert health.status_code == 200
            no_limit_headers(health)
        # Nobody drained the real key's bucket meanwhile.
        assert limits(cheap(api)) == (1, 0, 1)


def test_rate_limit_zero_turns_limiting_off(settings: Settings, database_url: str) -> None:
    with limited_api(settings, database_url, rate_limit=0, rate_burst=1) as api:
        for _ in range(40):
            response = cheap(api)
            assert response.status_code == 404
            no_limit_headers(response)
        created = api.post("/api/opportunity", json={"name": "Deal", "amount": 1})
        ok_data(created)
        no_limit_headers(created)


def test_default_limit_is_100_per_second_with_bursts_of_200(database_url: str) -> None:
    settings = Settings(database_url=database_url, access_log=False, dispatch=False)
    assert (settings.rate_limit, settings.default_burst) == (100, 200)
    with limited_api(settings, database_url) as api:
        assert limits(cheap(api))[:2] == (200, 199)


def test_the_burst_follows_the_rate_when_only_the_rate_is_set(
    monkeypatch: Any, database_url: str
) -> None:
    monkeypatch.setenv("CHATCRM_RATE_LIMIT", "2")
    monkeypatch.delenv("CHATCRM_RATE_BURST", raising=False)
    settings = Settings(database_url=database_url, access_log=False, dispatch=False)
    with limited_api(settings, database_url) as api:
        answers = [cheap(api) for _ in range(6)]
        assert limits(answers[0])[:2] == (4, 3)  # bursts of twice the rate
        statuses = [r.status_code for r in answers]
        assert 429 not in statuses[:4] and 429 in statuses[4:], statuses


def test_rate_limit_is_read_from_the_environment(monkeypatch: Any, database_url: str) -> None:
    monkeypatch.setenv("CHATCRM_RATE_LIMIT", "3")
    monkeypatch.setenv("CHATCRM_RATE_BURST", "7")
    settings = Settings(database_url=database_url, access_log=False, dispatch=False)
    with limited_api(settings, database_url) as api:
        assert limits(cheap(api))[:2] == (7, 6)
    monkeypatch.setenv("CHATCRM_RATE_LIMIT", "0")
    with limited_api(Settings(database_url=database_url, dispatch=False), database_url) as api:
        no_limit_headers(cheap(api))


def test_per_key_limits_set_with_the_cli(settings: Settings, database_url: str) -> None:
    with limited_api(settings, database_url, rate_limit=10, rate_burst=50, key_cache_ttl=0) as api:
        account: NewAccount = api.account
        key_id, key = add_key(database_url, account.account_id, rate_limit="2")
        first = cheap(api, auth=key)
        assert limits(first)[:2] == (4, 3)  # bursts of twice the rate
        answers = exhaust(api, auth=key)
        assert len(answers) <= 6
        rate_limited(answers[-1])
        # The account's other key keeps the service default.
        assert limits(cheap(api))[:2] == (50, 49)

        out = run_cli(database_url, "keys", "limit", key_id, "0")
        assert "unlimited" in out
        for _ in range(20):
            response = cheap(api, auth=key)
            assert response.status_code == 404
            no_limit_headers(response)

        run_cli(database_url, "keys", "limit", key_id, "default")
        assert limits(cheap(api, auth=key))[0] == 50

        run_cli(database_url, "keys", "limit", key, "1")  # the key itself is accepted too
        assert limits(cheap(api, auth=key))[0] == 2


def test_idempotency_answers_carry_the_limit_headers_and_count(
    settings: Settings, database_url: str
) -> None:
    with limited_api(settings, database_url, rate_limit=1, rate_burst=20) as api:
        body = {"name": "Deal", "amount": 1}
        answers = [
            api.post("/api/opportunity", json=body, headers={"Idempotency-Key": "rl-1"}),
            api.post("/api/opportunity", json=body, headers={"Idempotency-Key": "rl-1"}),
            api.post(
                "/api/opportunity", json={**body, "amount": 2}, headers={"Idempotency-Key": "rl-1"}
            ),
            api.post("/api/opportunity", json=body, headers={"Idempotency-Key": "bad key"}),
        ]
        assert [a.status_code for a in answers] == [200, 200, 409, 400]
        assert answers[1].headers["idempotent-replayed"] == "true"
        assert [limits(a)[1] for a in answers] == [19, 18, 17, 16]


def test_an_authenticated_413_carries_the_limit_headers(
    settings: Settings, database_url: str
) -> None:
    """The key is checked before the body (the decided handling order), so an answer about
    the body of an authenticated request is an authenticated answer."""
    with limited_api(settings, database_url, rate_limit=1, rate_burst=20) as api:
        too_big = b'{"name": "' + b"x" * (1024 * 1024) + b'", "amount": 1}'
        response = api.post("/api/opportunity", content=too_big)
        error(response, 413, "PAYLOAD_TOO_LARGE")
        assert limits(response)[:2] == (20, 19)
