"""Checks that two requests made at once (as on two nodes) must not both pass, each with a
write that would have made the other fail: the last owner kept, a two-factor code and a
recovery code accepted once, the sign-in limit (J.1, J.3). The requests are sent together
from threads, to one app whose event loop interleaves them at every statement; on
PostgreSQL and Citus they then run in transactions of their own at the same moment."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import httpx
import pyotp

from tests.client import Api, ok_data, unique_email
from tests.people.conftest import PASSWORD, Browser, person


def _at_once(calls: list[Callable[[], httpx.Response]]) -> list[httpx.Response]:
    start = threading.Barrier(len(calls))

    def run(call: Callable[[], httpx.Response]) -> httpx.Response:
        start.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def _sign_in(http: Any, email: str, password: str, code: str | None = None) -> httpx.Response:
    body = {"email": email, "password": password, **({"code": code} if code else {})}
    return http.post("/api/session", json=body, headers={"cookie": ""})


def _outcomes(answers: list[httpx.Response]) -> Counter[str]:
    return Counter(a.json()["errorCode"] or "OK" for a in answers)


def _active_owners(api: Api) -> list[str]:
    users = ok_data(api.get("/api/user", workspace=None))["data"]
    return [u["id"] for u in users if u["role"] == "owner" and u["status"] == "active"]


def test_owners_demoted_at_once_leave_one(owner_api: Api) -> None:
    for _ in range(3):
        while len(owners := _active_owners(owner_api)) < 2:
            person(owner_api, "owner")

        def demote(user_id: str) -> Callable[[], httpx.Response]:
            body = {"paramToUpdate": "role", "role": "admin"}
            return lambda: owner_api.put(f"/api/user/{user_id}", json=body, workspace=None)

        outcomes = _outcomes(_at_once([demote(u) for u in owners]))
        assert outcomes == {"OK": len(owners) - 1, "LAST_OWNER": 1}, outcomes
        assert len(_active_owners(owner_api)) == 1


def _two_factor_user(api: Api) -> tuple[Browser, pyotp.TOTP, list[str]]:
    user = person(api, "agent")
    totp = pyotp.TOTP(ok_data(user.request("POST", "/api/me/2fa"))["secret"])
    enabled = ok_data(user.request("POST", "/api/me/2fa/enable", json={"code": totp.now()}))
    return user, totp, enabled["recoveryCodes"]


def test_a_two_factor_code_sent_four_times_at_once_signs_in_once(owner_api: Api) -> None:
    user, totp, _ = _two_factor_user(owner_api)
    email = user.user["email"]
    code = totp.at(time.time() + 30)  # the next step's: the current one enabled it
    answers = _at_once([lambda: _sign_in(owner_api.http, email, PASSWORD, code)] * 4)
    assert _outcomes(answers) == {"OK": 1, "TWO_FACTOR_REQUIRED": 3}


def test_recovery_codes_used_at_once_are_each_used_up(owner_api: Api) -> None:
    user, _, codes = _two_factor_user(owner_api)
    email = user.user["email"]
    same = _at_once([lambda: _sign_in(owner_api.http, email, PASSWORD, codes[0])] * 4)
    assert _outcomes(same) == {"OK": 1, "TWO_FACTOR_REQUIRED": 3}
    first, second = codes[1], codes[2]
    both = _at_once(
        [
            lambda: _sign_in(owner_api.http, email, PASSWORD, first),
            lambda: _sign_in(owner_api.http, email, PASSWORD, second),
        ]
    )
    assert _outcomes(both) == {"OK": 2}
    for used in (first, second):  # neither written back by the other's update
        again = _sign_in(owner_api.http, email, PASSWORD, used)
        assert again.json()["errorCode"] == "TWO_FACTOR_REQUIRED", used


def test_attempts_at_once_try_the_password_no_more_than_the_limit(owner_api: Api) -> None:
    email = person(owner_api, "agent").user["email"]
    answers = _at_once([lambda: _sign_in(owner_api.http, email, "wrong password!")] * 12)
    outcomes = _outcomes(answers)
    assert outcomes == {"INVALID_CREDENTIALS": 5, "TOO_MANY_ATTEMPTS": 7}, outcomes
    assert _sign_in(owner_api.http, email, PASSWORD).json()["errorCode"] == "TOO_MANY_ATTEMPTS"


def test_a_disable_and_a_rename_at_once_both_hold(owner_api: Api) -> None:
    for _ in range(3):
        user = person(owner_api, "agent").user
        path = f"/api/user/{user['id']}"
        _at_once(
            [
                partial(owner_api.put, path, json={"status": "disabled"}, workspace=None),
                partial(owner_api.put, path, json={"name": "Renamed"}, workspace=None),
                partial(owner_api.put, path, json={"workspaceIds": [owner_api.ws]}, workspace=None),
            ]
        )
        got = ok_data(owner_api.get(path, workspace=None))["user"]
        assert (got["status"], got["name"]) == ("disabled", "Renamed"), got
        refused = _sign_in(owner_api.http, user["email"], PASSWORD)
        assert refused.json()["errorCode"] == "INVALID_CREDENTIALS"


def test_two_invitations_of_one_e_mail_at_once_are_one_user_and_one_409(owner_api: Api) -> None:
    for _ in range(3):
        body = {"email": unique_email(), "name": "Twice", "role": "admin"}
        answers = _at_once([partial(owner_api.post, "/api/user", json=body, workspace=None)] * 2)
        assert _outcomes(answers) == {"OK": 1, "DUPLICATE_USER": 1}


def test_two_factor_enabled_twice_at_once_with_one_code_is_on_once(owner_api: Api) -> None:
    user = person(owner_api, "agent")
    totp = pyotp.TOTP(ok_data(user.request("POST", "/api/me/2fa"))["secret"])
    code = totp.now()
    answers = _at_once(
        [lambda: user.request("POST", "/api/me/2fa/enable", json={"code": code})] * 2
    )
    # The second waits for the first's row: two-factor is on by then (409, the codes kept).
    assert _outcomes(answers) == {"OK": 1, "TWO_FACTOR_ON": 1}
    shown = next(a for a in answers if a.status_code == 200).json()["data"]["recoveryCodes"]
    # The codes shown are the ones that work.
    signed_in = _sign_in(owner_api.http, user.user["email"], PASSWORD, shown[0])
    assert signed_in.status_code == 200, signed_in.text
