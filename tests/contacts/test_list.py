"""List contacts (contract B.3, part C "List filters and page size"): newest first, keyset
pages under signed continuation tokens, filters, strict query parameters."""

from __future__ import annotations

import base64
import dataclasses
import os
import time
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import orjson
import pytest

from chatcrm.contacts.listing import FILTERS
from chatcrm.core.pagination import Position, TokenCodec
from chatcrm.records.listing import read_filters
from tests.client import Api, error, error_fields, ok_data, unique_email

LISTED = "List obtained successfully."
PAGE_KEYS = ["workspaceId", "continuationToken", "data"]
READ_SHAPE = [
    "id", "creationDate", "assignedAgentId", "assignedAgentName", "segmentationId",
    "lastMessage", "lastMessageDate", "platformSenderId", "platformSenderName",
    "platformSenderPhone", "isRead", "isBotEnabled", "isManuallyAdded", "avatarColor",
    "orderInCards", "orderInCardsLastUpdated", "tags", "files", "isSolved", "workspaceId",
    "name", "lastname", "email", "platformId", "stageId",
]  # fmt: skip


# --- helpers -------------------------------------------------------------------------------


def list_contacts(api: Api, **params: Any) -> httpx.Response:
    return api.get("/api/contact", params=params)


def page(api: Api, **params: Any) -> dict[str, Any]:
    """One page, its envelope and key order checked."""
    data: dict[str, Any] = ok_data(list_contacts(api, **params), LISTED)
    assert list(data) == PAGE_KEYS
    assert data["workspaceId"] == api.ws
    for record in data["data"]:
        assert list(record) == READ_SHAPE
        assert record["workspaceId"] == api.ws
    return data


def all_pages(api: Api, page_size: int | None = None, **filters: Any) -> list[dict[str, Any]]:
    """Every record of the list, following continuation tokens to the end."""
    records: list[dict[str, Any]] = []
    token: str | None = None
    for _ in range(1000):
        params = dict(filters)
        if page_size is not None:
            params["pageSize"] = page_size
        if token is not None:
            params["continuationToken"] = token
        data = page(api, **params)
        records += data["data"]
        token = data["continuationToken"]
        if token is None:
            return records
        # A token is only handed out when a record follows, so its page is never empty.
        assert data["data"], "a token must not lead to an empty page"
    raise AssertionError("the list never ended")


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in records]


def newest_first(records: list[dict[str, Any]]) -> list[str]:
    """The ids in the contract's order: creationDate, then id, both descending."""
    ordered = sorted(records, key=lambda r: (r["creationDate"], r["id"]), reverse=True)
    return ids(ordered)


def make_contacts(api: Api, count: int, **fields: Any) -> list[dict[str, Any]]:
    return [api.create_contact(**fields) for _ in range(count)]


def second_workspace(api: Api) -> Api:
    """Another workspace of the same account (same key), as its own client."""
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


def token_of(api: Api, count: int = 3, **filters: Any) -> str:
    """A real continuation token of this workspace's contact list, for these filters."""
    make_contacts(api, count)
    data = page(api, pageSize=1, **filters)
    token = data["continuationToken"]
    assert isinstance(token, str) and token
    return token


def invalid_token(response: httpx.Response) -> None:
    error(response, 400, "INVALID_CONTINUATION_TOKEN")


def invalid_value(response: httpx.Response, field: str) -> None:
    body = error(response, 422, "VALIDATION_ERROR")
    assert error_fields(body) == [field], body


UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


# --- shape and order -----------------------------------------------------------------------


def test_an_empty_workspace_lists_nothing(api: Api) -> None:
    data = page(api)
    assert data == {"workspaceId": api.ws, "continuationToken": None, "data": []}


def test_records_are_in_read_shape_equal_to_get_by_id(api: Api) -> None:
    tag = api.add_tag()
    agent = api.add_agent()
    contact = api.create_contact(
        name="Ana", lastname="Diaz", tags=[tag["id"]], assignedAgentId=agent["id"]
    )
    data = page(api)
    assert len(data["data"]) == 1
    single = ok_data(api.get_contact(contact["id"]))["data"][0]
    assert data["data"][0] == single
    assert "variables" not in data["data"][0] and "solvedDate" not in data["data"][0]


def test_newest_first_by_creation_date_then_id(api: Api) -> None:
    created = make_contacts(api, 6)
    records = page(api)["data"]
    assert ids(records) == [c["id"] for c in reversed(created)]
    assert ids(records) == newest_first(records)


def test_default_page_size_is_20(api: Api) -> None:
    created = make_contacts(api, 21)
    first = page(api)
    assert len(first["data"]) == 20
    assert isinstance(first["continuationToken"], str)
    second = page(api, continuationToken=first["continuationToken"])
    assert len(second["data"]) == 1
    assert second["continuationToken"] is None
    assert ids(first["data"]) + ids(second["data"]) == [c["id"] for c in reversed(created)]


def test_token_is_null_when_the_only_page_is_exactly_full(api: Api) -> None:
    make_contacts(api, 20)
    data = page(api)
    assert len(data["data"]) == 20
    assert data["continuationToken"] is None


def test_token_is_null_when_the_last_page_is_exactly_full(api: Api) -> None:
    created = make_contacts(api, 40)
    first = page(api, pageSize=20)
    assert len(first["data"]) == 20 and first["continuationToken"]
    second = page(api, pageSize=20, continuationToken=first["continuationToken"])
    assert len(second["data"]) == 20
    assert second["continuationToken"] is None
    assert ids(first["data"]) + ids(second["data"]) == [c["id"] for c in reversed(created)]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 100])
def test_paging_returns_every_record_once_in_order(api: Api, size: int) -> None:
    created = make_contacts(api, 11)
    records = all_pages(api, size)
    assert ids(records) == [c["id"] for c in reversed(created)]


def test_page_size_may_change_from_page_to_page(api: Api) -> None:
    created = make_contacts(api, 10)
    expected = [c["id"] for c in reversed(created)]
    first = page(api, pageSize=3)
    second = page(api, pageSize=5, continuationToken=first["continuationToken"])
    third = page(api, pageSize=100, continuationToken=second["continuationToken"])
    assert ids(first["data"]) == expected[:3]
    assert ids(second["data"]) == expected[3:8]
    assert ids(third["data"]) == expected[8:]
    assert third["continuationToken"] is None


def test_the_same_token_gives_the_same_page_again(api: Api) -> None:
    make_contacts(api, 5)
    token = page(api, pageSize=2)["continuationToken"]
    once = page(api, pageSize=2, continuationToken=token)
    again = page(api, pageSize=2, continuationToken=token)
    assert once == again


def test_page_size_bounds_are_accepted(api: Api) -> None:
    make_contacts(api, 3)
    assert len(page(api, pageSize=1)["data"]) == 1
    assert len(page(api, pageSize="100")["data"]) == 3


@pytest.mark.parametrize("size", ["0", "101", "abc", "-1", "1.5", "1e1", " 5", "5 ", "+5", "²"])
def test_page_size_out_of_range_or_not_an_integer_is_422(api: Api, size: str) -> None:
    invalid_value(list_contacts(api, pageSize=size), "pageSize")


def test_deleted_contacts_are_not_listed(api: Api) -> None:
    kept, gone = make_contacts(api, 2)
    ok_data(api.post("/api/contact/delete-batch", json={"contactIds": [{"ids": gone["id"]}]}))
    assert ids(all_pages(api)) == [kept["id"]]


# --- continuation tokens ---------------------------------------------------------------------


def test_a_token_is_opaque(api: Api) -> None:
    created = make_contacts(api, 3)
    token = page(api, pageSize=1)["continuationToken"]
    for contact in created:
        assert contact["id"] not in token
    assert api.ws not in token


@pytest.mark.parametrize(
    "garbage",
    ["abc", "a.b", ".", "..", "null", "0", "x" * 2000, "eyJ9.eyJ9", "%00", "é.é"],
)
def test_a_garbage_token_is_400(api: Api, garbage: str) -> None:
    make_contacts(api, 2)
    invalid_token(list_contacts(api, continuationToken=garbage))


def test_a_truncated_token_is_400(api: Api) -> None:
    token = token_of(api)
    for cut in (1, 2, 5, len(token) // 2, len(token) - 1):
        invalid_token(list_contacts(api, continuationToken=token[:cut]))
        invalid_token(list_contacts(api, continuationToken=token[cut:]))


def test_a_token_with_anything_appended_is_400(api: Api) -> None:
    token = token_of(api)
    for tail in ("A", "x", "=", "==", ".", ".x", " "):
        invalid_token(list_contacts(api, continuationToken=token + tail))


def test_a_token_with_characters_inserted_is_400(api: Api) -> None:
    token = token_of(api)
    middle = len(token) - 8
    for inserted in ("!!!!", "    ", "A", "AAAA", "\n\n\n\n", "$$$$"):
        altered = token[:middle] + inserted + token[middle:]
        invalid_token(list_contacts(api, continuationToken=altered))


def test_a_token_with_any_one_character_changed_is_400(api: Api) -> None:
    token = token_of(api)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    accepted = []
    for i, char in enumerate(token):
        for other in {alphabet[(alphabet.find(char) + 1) % 64], "A" if char != "A" else "B"}:
            altered = token[:i] + other + token[i + 1 :]
            if altered == token:
                continue
            response = list_contacts(api, continuationToken=altered)
            if response.status_code != 400:
                accepted.append((i, char, other, response.status_code))
            else:
                invalid_token(response)
    assert accepted == [], f"altered tokens accepted (position, was, now, status): {accepted}"


def test_a_token_signed_with_another_key_is_400(api: Api) -> None:
    """A token of the right form, scope and filters, but forged: the signature decides."""
    created = make_contacts(api, 3)
    forged = TokenCodec(os.urandom(32)).encode(
        scope=f"contacts:{api.ws}",
        digest=read_filters(FILTERS, {}, "sqlite")[0].digest,
        position=Position(created_at=datetime.now(UTC), id=created[-1]["id"]),
    )
    invalid_token(list_contacts(api, continuationToken=forged))


def test_a_token_with_a_rewritten_payload_is_400(api: Api) -> None:
    """Changing the position inside the token (and keeping the signature) is detected."""
    token = token_of(api, 4)
    body, signature = token.split(".")
    fields = orjson.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert isinstance(fields, list) and any(isinstance(f, int) and f > 10**12 for f in fields)
    # Move the position one day later: the page would start elsewhere.
    moved = [f + 86_400_000_000 if isinstance(f, int) and f > 10**12 else f for f in fields]
    rewritten = base64.urlsafe_b64encode(orjson.dumps(moved)).rstrip(b"=").decode()
    assert rewritten != body
    invalid_token(list_contacts(api, continuationToken=f"{rewritten}.{signature}"))


@pytest.mark.parametrize(
    ("made_with", "used_with"),
    [
        ({"q": "a"}, {}),
        ({"q": "a"}, {"q": "b"}),
        ({}, {"q": "a"}),
        ({"isSolved": "false"}, {"isSolved": "true"}),
        ({"isSolved": "false"}, {}),
        ({}, {"updatedSince": "2020-01-01T00:00:00Z"}),
        ({"updatedSince": "2020-01-01T00:00:00Z"}, {"updatedSince": "2020-01-02T00:00:00Z"}),
    ],
)
def test_a_token_is_bound_to_its_filters(
    api: Api, made_with: dict[str, str], used_with: dict[str, str]
) -> None:
    make_contacts(api, 3, name="ana")
    token = page(api, pageSize=1, **made_with)["continuationToken"]
    assert token
    invalid_token(list_contacts(api, continuationToken=token, **used_with))
    # With its own filters the token still works.
    assert page(api, pageSize=1, continuationToken=token, **made_with)["data"]


def test_a_token_is_bound_to_reference_filters(api: Api) -> None:
    stage_a, stage_b = api.stage_ids()[:2]
    tag_a, tag_b = api.add_tag(), api.add_tag()
    agent_a, agent_b = api.add_agent(), api.add_agent()
    for filters, other in [
        ({"stageId": stage_a}, {"stageId": stage_b}),
        ({"tag": tag_a["id"]}, {"tag": tag_b["id"]}),
        ({"assignedAgentId": agent_a["id"]}, {"assignedAgentId": agent_b["id"]}),
    ]:
        field = next(iter(filters))
        fields = {"stageId": stage_a, "tags": [tag_a["id"]], "assignedAgentId": agent_a["id"]}
        make_contacts(api, 2, **fields)
        token = page(api, pageSize=1, **filters)["continuationToken"]
        assert token, field
        invalid_token(list_contacts(api, continuationToken=token, **other))
        invalid_token(list_contacts(api, continuationToken=token))


def test_a_token_keeps_its_filters_across_pages(api: Api) -> None:
    stage_a, stage_b = api.stage_ids()[:2]
    in_a = [api.create_contact(stageId=stage_a if i % 2 else stage_b) for i in range(9)]
    expected = [c["id"] for c in reversed(in_a) if c["stageId"] == stage_a]
    records = all_pages(api, 2, stageId=stage_a)
    assert ids(records) == expected
    assert all(r["stageId"] == stage_a for r in records)


def test_an_equivalent_spelling_of_a_filter_keeps_the_token_valid(api: Api) -> None:
    """Filters are compared by meaning: isSolved=false and isSolved=0 are one filter."""
    make_contacts(api, 3)
    token = page(api, pageSize=1, isSolved="false")["continuationToken"]
    assert len(page(api, pageSize=1, isSolved="0", continuationToken=token)["data"]) == 1


def test_a_token_of_another_workspace_of_the_account_is_400(api: Api) -> None:
    other = second_workspace(api)
    token = token_of(other)
    make_contacts(api, 3)
    invalid_token(list_contacts(api, continuationToken=token))
    # The same key, the same token: still valid in its own workspace.
    assert page(other, pageSize=1, continuationToken=token)["data"]


def test_a_token_of_another_account_is_400(api: Api, other_api: Api) -> None:
    token = token_of(other_api)
    make_contacts(api, 3)
    invalid_token(list_contacts(api, continuationToken=token))


def test_an_opportunities_token_is_400_on_contacts(api: Api) -> None:
    for _ in range(3):
        api.create_opportunity()
    token = ok_data(api.get("/api/opportunity", params={"pageSize": 1}))["continuationToken"]
    assert token
    make_contacts(api, 3)
    invalid_token(list_contacts(api, continuationToken=token))


def test_a_contacts_token_is_400_on_contact_activities(api: Api) -> None:
    token = token_of(api)
    contact = api.create_contact()
    invalid_token(
        api.get(f"/api/contact/{contact['id']}/activities", params={"continuationToken": token})
    )


def test_a_token_stays_valid_when_its_last_record_is_deleted(api: Api) -> None:
    created = make_contacts(api, 5)
    first = page(api, pageSize=2)
    last_shown = first["data"][-1]["id"]
    ok_data(api.post("/api/contact/delete-batch", json={"contactIds": [{"ids": last_shown}]}))
    rest = page(api, pageSize=10, continuationToken=first["continuationToken"])
    assert ids(rest["data"]) == [c["id"] for c in reversed(created)][2:]


# --- query parameters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    ["foo", "pagesize", "page_size", "Q", "contactId", "winLossStatus", "id", "email", "limit"],
)
def test_an_unknown_query_parameter_is_400(api: Api, name: str) -> None:
    body = error(list_contacts(api, **{name: "1"}), 400, "BAD_REQUEST")
    assert error_fields(body) == [name]


def test_an_unknown_query_parameter_is_400_even_when_empty(api: Api) -> None:
    error(api.get("/api/contact?foo="), 400, "BAD_REQUEST")


def test_empty_parameter_values_count_as_absent(api: Api) -> None:
    created = make_contacts(api, 21)
    query = "q=&stageId=&assignedAgentId=&tag=&isSolved=&updatedSince=&pageSize=&continuationToken="
    data = page_from(api.get(f"/api/contact?{query}"))
    assert ids(data["data"]) == [c["id"] for c in reversed(created)][:20]
    assert data["continuationToken"]


def page_from(response: httpx.Response) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(response, LISTED)
    assert list(data) == PAGE_KEYS
    return data


# --- workspace rules and isolation ----------------------------------------------------------


def test_workspace_from_the_query_alone(api: Api) -> None:
    contact = api.create_contact()
    data = page_from(api.get("/api/contact", params={"workspaceId": api.ws}, workspace=None))
    assert data["workspaceId"] == api.ws
    assert ids(data["data"]) == [contact["id"]]


def test_workspace_in_header_and_query_alike(api: Api) -> None:
    api.create_contact()
    assert len(page(api, workspaceId=api.ws)["data"]) == 1


def test_header_and_query_naming_different_workspaces_is_403(api: Api) -> None:
    other = second_workspace(api)
    error(list_contacts(api, workspaceId=other.ws), 403, "FORBIDDEN")


def test_a_workspace_of_another_account_is_403(api: Api, other_api: Api) -> None:
    other_api.create_contact()
    error(api.get("/api/contact", workspace=other_api.ws), 403, "FORBIDDEN")
    by_query = api.get("/api/contact", params={"workspaceId": other_api.ws}, workspace=None)
    error(by_query, 403, "FORBIDDEN")
    error(api.get("/api/contact", workspace=UNKNOWN_ID), 403, "FORBIDDEN")


def test_no_workspace_is_401(api: Api) -> None:
    error(api.get("/api/contact", workspace=None), 401, "WORKSPACE_REQUIRED")


def test_no_key_is_401(api: Api) -> None:
    error(api.get("/api/contact", auth=None), 401, "UNAUTHORIZED")


def test_other_workspaces_records_are_never_listed(api: Api, other_api: Api) -> None:
    mine = api.create_contact()
    other_api.create_contact()
    sibling = second_workspace(api)
    sibling.create_contact()
    assert ids(all_pages(api)) == [mine["id"]]
    assert ids(all_pages(api, q="example.com")) == [mine["id"]]


# --- filters: q -------------------------------------------------------------------------------


def test_q_searches_name_lastname_and_email_case_insensitively(api: Api) -> None:
    by_name = api.create_contact(name="Marisol", lastname="Quispe", email=unique_email())
    by_lastname = api.create_contact(name="Pedro", lastname="Villamarin", email=unique_email())
    by_email = api.create_contact(name="Luz", lastname="", email=f"mari.{unique_email()}")
    api.create_contact(name="Rosa", lastname="Flores", email=unique_email())
    expected = {by_name["id"], by_lastname["id"], by_email["id"]}
    for q in ("mari", "MARI", "Mari", "aRi"):
        assert set(ids(all_pages(api, q=q))) == expected, q
    assert ids(all_pages(api, q="QUISPE")) == [by_name["id"]]
    assert ids(all_pages(api, q="sol qu")) == []
    assert ids(all_pages(api, q="nobody")) == []


def test_q_matches_inside_email_domain(api: Api) -> None:
    inside = api.create_contact(name="Ana", email=f"{unique_email()[:-12]}@Acme-Corp.io")
    api.create_contact(name="Ana")
    assert ids(all_pages(api, q="acme-corp")) == [inside["id"]]


def test_q_ignores_case_and_accents(api: Api) -> None:
    jose = api.create_contact(name="JOSÉ", lastname="MUÑOZ")
    plain = api.create_contact(name="Jose", lastname="Munoz")
    nunez = api.create_contact(name="Ana", lastname="Núñez", email="ana.nunez@example.com")
    api.create_contact(name="Maria", lastname="Nuno")
    both = {jose["id"], plain["id"]}
    for q in ("josé", "jose", "JOSE", "JOSÉ", "muñoz", "MUNOZ"):
        assert set(ids(all_pages(api, q=q))) == both, q
    for q in ("nunez", "NÚÑEZ", "Núñe", "unez"):
        assert ids(all_pages(api, q=q)) == [nunez["id"]], q
    board = ok_data(api.get("/api/contact/board", params={"q": "nunez"}))["columns"]
    assert [c["record"]["id"] for col in board for c in col["cards"]] == [nunez["id"]]


def test_q_finds_a_final_sigma_in_any_case(api: Api) -> None:
    """Greek's word-final small sigma `ς` is a sigma: a search typed in capitals, in small
    letters or cut short finds the names holding it, on every backend alike."""
    odysseas = api.create_contact(name="Οδυσσέας", email="od@example.com")
    sisyfos = api.create_contact(name="ΣΊΣΥΦΟΣ", email="sis@example.com")
    api.create_contact(name="Someone else")
    for q in ("ΟΔΥΣΣΕΑΣ", "οδυσσεας", "ΟΔΥΣ", "Οδυσσέας", "σεας"):
        assert ids(all_pages(api, q=q)) == [odysseas["id"]], q
    for q in ("σίσυφος", "υφος", "ΣΊΣ", "σισυφοσ", "ΣΙΣΥΦΟΣ"):
        assert ids(all_pages(api, q=q)) == [sisyfos["id"]], q


@pytest.mark.parametrize(
    ("name", "q"),
    [
        ("Ħamrun", "hamrun"),
        ("Ŧest", "TEST"),
        ("Ðavid", "david"),
        ("Ærø", "aero"),
        ("Œuvre", "oeuvre"),
        ("Þór", "thor"),
        ("Ŀlívia", "llivia"),
        ("Ƶofia", "zofia"),
    ],
)
def test_q_folds_letters_with_a_stroke_and_ligatures_alike_everywhere(
    api: Api, name: str, q: str
) -> None:
    """Letters Unicode decomposition leaves whole are folded as PostgreSQL's unaccent
    folds them, on SQLite too (tests/db/test_search_fold.py compares every one)."""
    hit = api.create_contact(name=name)
    api.create_contact(name="Someone else")
    assert ids(all_pages(api, q=q)) == [hit["id"]]


def test_q_keeps_whole_the_letters_unaccent_keeps_whole(api: Api) -> None:
    """Only accents unaccent takes off are taken off, on SQLite as on PostgreSQL: `й` is
    not `и`, `ガ` not `カ`, and a Hangul syllable is not taken apart into its letters."""
    andrei = api.create_contact(name="Андрей")
    api.create_contact(name="ガスト", lastname="한국")
    assert ids(all_pages(api, q="андрей")) == [andrei["id"]]  # case still folds
    for q in ("андреи", "カスト", "하"):
        assert ids(all_pages(api, q=q)) == [], q


@pytest.mark.parametrize(
    ("q", "matches"),
    [
        ("%", "50% off"),
        ("_", "a_b"),
        ("\\", "back\\slash"),
        # What folds to them is as literal (the pattern is folded after it is escaped).
        ("％", "50% off"),
        ("＿", "a_b"),
        ("＼", "back\\slash"),
    ],
)
def test_q_wildcards_are_literal(api: Api, q: str, matches: str) -> None:
    hit = api.create_contact(name=matches)
    api.create_contact(name="plain name")
    api.create_contact(name="ab")
    assert ids(all_pages(api, q=q)) == [hit["id"]]


@pytest.mark.parametrize("path", ["/api/contact", "/api/opportunity", "/api/contact/board"])
def test_q_up_to_the_longest_text_is_searched_and_longer_is_422(api: Api, path: str) -> None:
    """No text field holds more than 10,000 characters. A q of 25,000 `_` was a 500 on
    SQLite (its LIKE pattern past 50,000 bytes), a 200 on PostgreSQL."""
    longest = api.get(path, params={"q": "_" * 10_000, "pageSize": "1"})
    assert longest.status_code == 200, longest.text
    for name in ("q", "search") if path == "/api/contact" else ("q",):
        body = error(api.get(path, params={name: "_" * 10_001}), 422, "VALIDATION_ERROR")
        assert body["data"]["errors"] == [
            {"field": "q", "message": "must be at most 10000 characters"}
        ]


def test_q_percent_and_underscore_do_not_act_as_wildcards(api: Api) -> None:
    api.create_contact(name="abc")
    api.create_contact(name="aXc")
    exact = api.create_contact(name="a_c")
    percent = api.create_contact(name="a%c")
    assert ids(all_pages(api, q="a_c")) == [exact["id"]]
    assert ids(all_pages(api, q="a%c")) == [percent["id"]]
    assert ids(all_pages(api, q="a%")) == [percent["id"]]


def test_q_with_three_or_more_digits_searches_phone_digits(api: Api) -> None:
    whatsapp = api.create_contact(
        name="Ana", email="ana@phones.test", internalWhatsappNumber="+51 987-654-321"
    )
    sender = api.create_contact(
        name="Bea", email="bea@phones.test", platformSenderPhone="51912345678"
    )
    carla = api.create_contact(
        name="Carla", email="carla@phones.test", internalWhatsappNumber="44200000000"
    )
    assert ids(all_pages(api, q="987654")) == [whatsapp["id"]]
    assert ids(all_pages(api, q="987-654")) == [whatsapp["id"]]
    assert ids(all_pages(api, q="+51 987")) == [whatsapp["id"]]
    assert ids(all_pages(api, q="(987) 654 321")) == [whatsapp["id"]]
    assert ids(all_pages(api, q="2345")) == [sender["id"]]
    assert set(ids(all_pages(api, q="519"))) == {whatsapp["id"], sender["id"]}
    assert ids(all_pages(api, q="000")) == [carla["id"]]


def test_q_with_fewer_than_three_digits_does_not_search_phones(api: Api) -> None:
    api.create_contact(name="Ana", email="ana@phones.test", internalWhatsappNumber="51987654321")
    api.create_contact(name="Bea", email="bea@phones.test", platformSenderPhone="51912345678")
    assert ids(all_pages(api, q="98")) == []
    assert ids(all_pages(api, q="5")) == []


def test_q_digits_still_match_names_and_emails(api: Api) -> None:
    named = api.create_contact(name="Agent 007", email="agent@spies.test")
    mailed = api.create_contact(name="Ana", email="x12ana@spies.test")
    assert ids(all_pages(api, q="007")) == [named["id"]]
    assert ids(all_pages(api, q="x12")) == [mailed["id"]]


# --- filters: references, flags, dates ----------------------------------------------------------


def test_filter_by_stage(api: Api) -> None:
    first, second = api.stage_ids()[:2]
    in_first = api.create_contact()  # the default stage is the first one
    in_second = api.create_contact(stageId=second)
    moved = api.create_contact()
    api.set_contact(moved["id"], stageId=second)
    assert ids(all_pages(api, stageId=first)) == [in_first["id"]]
    assert ids(all_pages(api, stageId=second)) == [moved["id"], in_second["id"]]
    assert ids(all_pages(api, stageId=api.stage_ids()[3])) == []


def test_filter_by_assigned_agent(api: Api) -> None:
    agent, other = api.add_agent(), api.add_agent()
    mine = api.create_contact(assignedAgentId=agent["id"])
    api.create_contact(assignedAgentId=other["id"])
    api.create_contact()
    later = api.create_contact()
    api.set_contact(later["id"], assignedAgentId=agent["id"])
    assert ids(all_pages(api, assignedAgentId=agent["id"])) == [later["id"], mine["id"]]
    unassigned = api.create_contact(assignedAgentId=agent["id"])
    api.set_contact(unassigned["id"], assignedAgentId=None)
    assert unassigned["id"] not in ids(all_pages(api, assignedAgentId=agent["id"]))


def test_filter_by_tag_id(api: Api) -> None:
    vip, lead, cold = api.add_tag("vip"), api.add_tag("lead"), api.add_tag("cold")
    both = api.create_contact(tags=[vip["id"], lead["id"]])
    only_lead = api.create_contact(tags=[lead["id"]])
    api.create_contact(tags=[cold["id"]])
    api.create_contact()
    assert ids(all_pages(api, tag=vip["id"])) == [both["id"]]
    assert ids(all_pages(api, tag=lead["id"])) == [only_lead["id"], both["id"]]
    # The tag's id, not its name.
    assert ids(all_pages(api, tag="vip")) == []
    api.set_contact(both["id"], tags=[cold["id"]])
    assert ids(all_pages(api, tag=vip["id"])) == []
    assert ids(all_pages(api, tag=lead["id"])) == [only_lead["id"]]


def test_filter_by_tag_lists_each_contact_once(api: Api) -> None:
    tags = [api.add_tag()["id"] for _ in range(3)]
    many = api.create_contact(tags=tags)
    for tag in tags:
        assert ids(all_pages(api, tag=tag)) == [many["id"]]


@pytest.mark.parametrize(
    ("value", "solved"), [("true", True), ("1", True), ("false", False), ("0", False)]
)
def test_filter_by_is_solved(api: Api, value: str, solved: bool) -> None:
    solved_one = api.create_contact()
    api.set_contact(solved_one["id"], isSolved=True)
    open_one = api.create_contact()
    reopened = api.create_contact()
    api.set_contact(reopened["id"], isSolved=True)
    api.set_contact(reopened["id"], isSolved=False)
    records = all_pages(api, isSolved=value)
    expected = [solved_one["id"]] if solved else [reopened["id"], open_one["id"]]
    assert ids(records) == expected
    assert all(r["isSolved"] is solved for r in records)


@pytest.mark.parametrize("value", ["yes", "no", "2", "-1", "truee", "null", "t"])
def test_is_solved_other_values_are_422(api: Api, value: str) -> None:
    invalid_value(list_contacts(api, isSolved=value), "isSolved")


def test_filter_by_updated_since(api: Api) -> None:
    untouched = api.create_contact()
    updated = api.create_contact()
    time.sleep(0.002)
    marker = api.create_contact()
    since = marker["creationDate"]
    time.sleep(0.002)
    api.set_contact(updated["id"], name="Changed")
    records = all_pages(api, updatedSince=since)
    # "at or after": the marker was created exactly at `since`.
    assert set(ids(records)) == {marker["id"], updated["id"]}
    assert ids(records) == newest_first(records)
    assert untouched["id"] not in ids(records)
    later = datetime.fromisoformat(since) + timedelta(microseconds=1)
    assert ids(all_pages(api, updatedSince=later.isoformat())) == [updated["id"]]


def test_updated_since_counts_every_kind_of_change(api: Api) -> None:
    tagged, solved, moved = api.create_contact(), api.create_contact(), api.create_contact()
    api.create_contact()
    time.sleep(0.002)
    since = api.create_contact()["creationDate"]
    time.sleep(0.002)
    api.set_contact(tagged["id"], tags=[api.add_tag()["id"]])
    api.set_contact(solved["id"], isSolved=True)
    api.set_contact(moved["id"], stageId=api.stage_ids()[2])
    found = set(ids(all_pages(api, updatedSince=since)))
    assert {tagged["id"], solved["id"], moved["id"]} <= found
    assert len(found) == 4


def test_updated_since_in_the_future_lists_nothing(api: Api) -> None:
    make_contacts(api, 2)
    assert all_pages(api, updatedSince="2999-01-01T00:00:00Z") == []


def test_updated_since_in_the_past_lists_everything(api: Api) -> None:
    created = make_contacts(api, 3)
    assert ids(all_pages(api, updatedSince="2000-01-01")) == [c["id"] for c in reversed(created)]


def test_updated_since_accepts_offsets(api: Api) -> None:
    created = make_contacts(api, 2)
    since = datetime.fromisoformat(created[1]["creationDate"])
    lima = since.astimezone(timezone(timedelta(hours=-5))).isoformat()
    tokyo = since.astimezone(timezone(timedelta(hours=9))).isoformat()
    assert ids(all_pages(api, updatedSince=lima)) == [created[1]["id"]]
    assert ids(all_pages(api, updatedSince=tokyo)) == [created[1]["id"]]
    # A '+' sent without percent-encoding arrives as a space; it is still the offset.
    raw = api.get(f"/api/contact?updatedSince={tokyo}")
    assert ids(page_from(raw)["data"]) == [created[1]["id"]]
    # A naive value is UTC.
    naive = since.replace(tzinfo=None).isoformat()
    assert ids(all_pages(api, updatedSince=naive)) == [created[1]["id"]]


@pytest.mark.parametrize(
    "value", ["yesterday", "2025-13-01", "2025-01-32T00:00:00Z", "1700000000", "01/02/2025", "x"]
)
def test_updated_since_not_iso_8601_is_422(api: Api, value: str) -> None:
    invalid_value(list_contacts(api, updatedSince=value), "updatedSince")


def test_filters_combine_with_and(api: Api) -> None:
    stage = api.stage_ids()[1]
    tag = api.add_tag()["id"]
    agent = api.add_agent()["id"]
    target = api.create_contact(name="Maria", stageId=stage, tags=[tag], assignedAgentId=agent)
    api.set_contact(target["id"], isSolved=True)
    api.create_contact(name="Maria", stageId=stage, tags=[tag], assignedAgentId=agent)
    api.create_contact(name="Maria", stageId=stage, tags=[tag])
    api.create_contact(name="Maria", stageId=stage)
    api.create_contact(name="Marta", stageId=stage, tags=[tag], assignedAgentId=agent)
    filters = {"q": "maria", "stageId": stage, "tag": tag, "assignedAgentId": agent}
    assert len(all_pages(api, **filters)) == 2
    assert ids(all_pages(api, isSolved="true", **filters)) == [target["id"]]
    assert len(all_pages(api, isSolved="false", **filters)) == 1


def test_unknown_reference_filters_list_nothing(api: Api, other_api: Api) -> None:
    make_contacts(api, 2)
    theirs = other_api.add_tag()["id"]
    for name in ("stageId", "assignedAgentId", "tag"):
        assert all_pages(api, **{name: UNKNOWN_ID}) == []
    assert all_pages(api, tag=theirs) == []
