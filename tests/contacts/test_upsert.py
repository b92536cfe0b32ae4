"""`POST /api/contact/upsert-batch` (contract E.2): items matched by phone (normalised) or
email (any case), updated (given fields overwrite, tags and variables added) or created,
each atomic on its own, in input order; `dryRun` writes nothing; the events of D.1."""

from __future__ import annotations

from typing import Any

import httpx

from tests.client import Api, error, error_fields, ok_data, unique, unique_email, unique_phone
from tests.events.test_outbox import all_events

UPSERTED = "Contacts upserted successfully."


def upsert(api: Api, contacts: list[Any], **options: Any) -> httpx.Response:
    return api.post("/api/contact/upsert-batch", json={"contacts": contacts, **options})


def upserted(api: Api, contacts: list[Any], **options: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(upsert(api, contacts, **options), UPSERTED)
    return data


def get_full(api: Api, contact_id: str) -> dict[str, Any]:
    """The contact in its update shape (variables, phone), from the full-shape list."""
    page = ok_data(api.get("/api/contact", params={"shape": "full", "pageSize": 100}))
    [record] = [r for r in page["data"] if r["id"] == contact_id]
    return dict(record)


def live_contacts(api: Api) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    token = None
    while True:
        params = {
            "shape": "full",
            "pageSize": 100,
            **({"continuationToken": token} if token else {}),
        }
        page = ok_data(api.get("/api/contact", params=params))
        out += page["data"]
        token = page["continuationToken"]
        if token is None:
            return out


def test_creates_then_matches_in_other_spellings(api: Api) -> None:
    phone, email = unique_phone(), unique_email()
    data = upserted(
        api,
        [
            {"name": "Ana", "platformId": 2, "internalWhatsappNumber": phone},
            {"name": "Bea", "email": email},
        ],
    )
    assert list(data) == ["created", "updated", "unchanged", "failed", "results"]
    assert (data["created"], data["updated"], data["unchanged"], data["failed"]) == (2, 0, 0, 0)
    assert [list(r) for r in data["results"]] == [["index", "status", "id", "errors"]] * 2
    ana, bea = (r["id"] for r in data["results"])
    assert [r["status"] for r in data["results"]] == ["created", "created"]
    # The same people, written otherwise: one matches by phone, one by email (auto).
    spelled = "+" + phone[:2] + " " + phone[2:5] + "-" + phone[5:]
    again = upserted(
        api,
        [
            {"phone": spelled, "lastname": "Diaz"},
            {"name": "Bea", "email": email.upper(), "lastMessage": "hello"},
        ],
    )
    assert [(r["status"], r["id"], r["errors"]) for r in again["results"]] == [
        ("updated", ana, []),
        ("updated", bea, []),
    ]
    assert get_full(api, ana)["lastname"] == "Diaz"
    record = get_full(api, bea)
    # Given fields overwrite, the email the match was made on too (its case).
    assert record["lastMessage"] == "hello" and record["email"] == email.upper()
    assert len(live_contacts(api)) == 2
    events = all_events(api)
    assert [e["type"] for e in events] == ["contact.created"] * 2 + ["contact.updated"] * 2
    assert events[2]["changed"] == ["lastname"] and events[2]["recordVersion"] == 2
    assert events[3]["changed"] == ["lastMessage", "lastMessageDate", "email"]
    assert events[3]["data"] == get_full(api, bea)
    # Sent again: nothing changes, no event.
    third = upserted(api, [{"phone": spelled, "lastname": "Diaz"}, {"email": email.upper()}])
    assert (third["unchanged"], third["updated"]) == (2, 0)
    assert len(all_events(api)) == 4


def test_tags_and_variables_are_added(api: Api) -> None:
    red, blue = api.add_tag("red"), api.add_tag("blue")
    email = unique_email()
    [first] = upserted(
        api,
        [{"name": "Ana", "email": email, "tags": [red["id"]],
          "variables": [{"name": "plan", "value": "gold"}, {"name": "city", "value": "Lima"}]}],
    )["results"]  # fmt: skip
    before = get_full(api, first["id"])
    data = upserted(
        api,
        [{"email": email, "tags": [blue["id"], red["id"]],
          "variables": [{"name": "plan", "value": "silver"}, {"name": "age", "value": 30}]}],
    )  # fmt: skip
    assert data["results"][0]["status"] == "updated"
    after = get_full(api, first["id"])
    assert [t["id"] for t in after["tags"]] == [red["id"], blue["id"]]
    assert after["tags"][0]["assignmentDate"] == before["tags"][0]["assignmentDate"]
    assert after["variables"] == [
        {"name": "plan", "value": "silver"},
        {"name": "city", "value": "Lima"},
        {"name": "age", "value": 30},
    ]
    [event] = all_events(api, types="contact.updated")
    assert event["changed"] == ["tags", "variables"] and event["data"] == after


def test_added_tags_stay_within_the_limit(api: Api) -> None:
    """Section 5: 100 tags per contact, as a create, an update and a merge refuse: an item
    that would add the 101st fails, and the contact keeps its 100."""
    made = [api.add_tag()["id"] for _ in range(101)]
    email = unique_email()
    contact = api.create_contact(email=email, tags=made[:100])
    data = upserted(api, [{"email": email, "tags": [made[100]]}], matchBy="email")
    [result] = data["results"]
    assert result["status"] == "failed" and data["failed"] == 1
    assert [e["field"] for e in result["errors"]] == ["tags"]
    assert "at most 100 tags" in result["errors"][0]["message"]
    assert len(get_full(api, contact["id"])["tags"]) == 100
    # Tags it already holds are no addition: still within the limit.
    again = upserted(api, [{"email": email, "tags": made[:3]}], matchBy="email")
    assert again["results"][0]["status"] == "unchanged"


def test_a_variable_of_another_json_type_is_a_change(api: Api) -> None:
    """`true` is not `1`, `false` not `0`: an item setting one over the other updates the
    contact, as an update does (the comparison was Python's, where True == 1)."""
    email = unique_email()
    contact = api.create_contact(
        email=email,
        variables=[{"name": "optIn", "value": 1}, {"name": "vip", "value": False}],
    )
    given = [{"name": "optIn", "value": True}, {"name": "vip", "value": 0}]
    data = upserted(api, [{"email": email, "variables": given}], matchBy="email")
    assert data["results"][0]["status"] == "updated"
    assert get_full(api, contact["id"])["variables"] == given
    # The same values again change nothing.
    again = upserted(api, [{"email": email, "variables": given}], matchBy="email")
    assert again["results"][0]["status"] == "unchanged"


def test_a_number_written_otherwise_is_a_change(api: Api) -> None:
    """Numbers are kept exactly as sent (docs/api.md 3.4: `3.0` comes back as `3.0`), as
    Update Contact keeps them; the upsert compared them by value and left `3` for `3.0`,
    `unchanged`: an export carrying `3.0` did not reproduce it."""
    email = unique_email()
    contact = api.create_contact(email=email, variables=[{"name": "n", "value": 3}])
    given = [{"name": "n", "value": 3.0}]
    data = upserted(api, [{"email": email, "variables": given}], matchBy="email")
    assert data["results"][0]["status"] == "updated"
    raw = api.get(f"/api/contact/{contact['id']}", params={"shape": "full"}).text
    assert '"value":3.0' in raw.replace(" ", "")
    again = upserted(api, [{"email": email, "variables": given}], matchBy="email")
    assert again["results"][0]["status"] == "unchanged"


def test_two_items_of_one_call_apply_in_order(api: Api) -> None:
    phone = unique_phone()
    data = upserted(
        api,
        [
            {"name": "Ana", "platformId": 2, "phone": phone},
            {"phone": phone, "lastname": "One"},
            {"phone": phone, "lastname": "Two"},
        ],
    )
    statuses = [r["status"] for r in data["results"]]
    assert statuses == ["created", "updated", "updated"]
    assert len({r["id"] for r in data["results"]}) == 1
    record = get_full(api, data["results"][0]["id"])
    assert record["lastname"] == "Two"
    events = all_events(api)
    assert [(e["type"], e["recordVersion"]) for e in events] == [
        ("contact.created", 1),
        ("contact.updated", 2),
        ("contact.updated", 3),
    ]
    assert [e["data"]["lastname"] for e in events] == ["", "One", "Two"]


def test_a_failed_item_never_stops_the_others(api: Api) -> None:
    taken = api.create_contact(email=unique_email())
    phone = unique_phone()
    data = upserted(
        api,
        [
            {"name": "Ok", "email": unique_email()},
            {"name": "Bad email", "email": "not-an-email"},
            {"lastname": "no name, no match", "email": unique_email()},
            {
                "name": "Tag",
                "email": unique_email(),
                "tags": ["01a00000-0000-7000-8000-000000000000"],
            },
            {"name": "Dup", "platformId": 2, "phone": phone, "email": taken["email"]},
            {"name": "Unknown key", "email": unique_email(), "color": "red"},
            "not an object",
            {"name": "Stage", "email": unique_email(), "stageId": api.stage_ids("opportunity")[0]},
        ],
    )
    assert [r["status"] for r in data["results"]] == ["created"] + ["failed"] * 7
    assert (data["created"], data["failed"]) == (1, 7)
    fields = [[e["field"] for e in r["errors"]] for r in data["results"]]
    assert fields == [
        [],
        ["email"],
        ["name"],
        ["tags[0]"],
        ["email"],
        ["color"],
        ["contact"],
        ["stageId"],
    ]
    assert data["results"][4]["errors"][0]["message"] == f"is already used by contact {taken['id']}"
    assert all(r["id"] is None for r in data["results"][1:])
    assert len(live_contacts(api)) == 2
    assert [e["type"] for e in all_events(api)] == ["contact.created"] * 2


def test_an_update_may_not_take_anothers_email(api: Api) -> None:
    a, b = api.create_contact(email=unique_email()), api.create_contact(email=unique_email())
    data = upserted(
        api, [{"email": a["email"], "lastname": "x"}, {"email": b["email"], "lastname": "y"}]
    )
    assert data["updated"] == 2
    phone_a = unique_phone()
    data = upserted(api, [{"email": a["email"], "phone": phone_a}], matchBy="email")
    assert data["results"][0]["status"] == "updated"
    clash = upserted(api, [{"email": b["email"], "phone": phone_a}], matchBy="email")
    [result] = clash["results"]
    assert (result["status"], result["id"]) == ("failed", b["id"])
    assert result["errors"] == [
        {"field": "phone", "message": f"is already used by contact {a['id']}"}
    ]


def test_a_match_made_a_whatsapp_contact_keeps_the_channel_rule(api: Api) -> None:
    """`platformId` given overwrites, as every field an item gives (docs/api.md 2.30), but
    the result must pass the channel rule of a create: a WhatsApp contact has a number."""
    email = unique_email()
    made = api.create_contact(email=email)
    assert made["platformId"] == 7
    [failed] = upserted(api, [{"email": email, "platformId": 2}])["results"]
    assert (failed["status"], failed["id"]) == ("failed", made["id"])
    assert failed["errors"] == [
        {
            "field": "internalWhatsappNumber",
            "message": "is required for WhatsApp contacts (platformId 2)",
        }
    ]
    assert get_full(api, made["id"])["platformId"] == 7
    number = unique_phone()
    item = {"email": email, "platformId": 2, "internalWhatsappNumber": number}
    [moved] = upserted(api, [item], matchBy="email")["results"]
    assert moved["status"] == "updated"
    assert get_full(api, made["id"])["platformId"] == 2
    # Its number cleared by a later item: refused as well.
    [cleared] = upserted(api, [{"email": email, "internalWhatsappNumber": ""}], matchBy="email")[
        "results"
    ]
    assert cleared["status"] == "failed"


def test_match_by_phone_or_email_only(api: Api) -> None:
    phone, email = unique_phone(), unique_email()
    [ana] = upserted(api, [{"name": "Ana", "platformId": 2, "phone": phone, "email": email}])[
        "results"
    ]
    # By email: the phone is not looked at, and an email not held creates.
    by_email = upserted(
        api, [{"name": "Ana", "email": email.title(), "lastname": "E"}], matchBy="email"
    )
    assert by_email["results"][0] == {
        "index": 0,
        "status": "updated",
        "id": ana["id"],
        "errors": [],
    }
    # By phone: an item without a phone matches nothing; it creates (and may clash).
    by_phone = upserted(api, [{"name": "Other", "email": email}], matchBy="phone")
    assert by_phone["results"][0]["status"] == "failed"
    assert by_phone["results"][0]["errors"][0]["field"] == "email"


def test_dry_run_writes_nothing(api: Api) -> None:
    email = unique_email()
    existing = api.create_contact(email=email)
    data = upserted(
        api,
        [{"name": "New", "email": unique_email()}, {"email": email, "lastname": "Changed"},
         {"name": "Bad", "email": "bad"}],
        dryRun=True,
    )  # fmt: skip
    assert [(r["status"], r["id"]) for r in data["results"]] == [
        ("created", None),
        ("updated", existing["id"]),
        ("failed", None),
    ]
    assert [c["id"] for c in live_contacts(api)] == [existing["id"]]
    assert get_full(api, existing["id"])["lastname"] == ""
    assert [e["type"] for e in all_events(api)] == ["contact.created"]
    # A later item matching what the dry run would create names no id either: none exists.
    ghost = unique_email()
    data = upserted(
        api,
        [{"name": "Ghost", "email": ghost}, {"email": ghost, "lastname": "G"}],
        dryRun=True,
    )
    assert [(r["status"], r["id"]) for r in data["results"]] == [
        ("created", None),
        ("updated", None),
    ]


def test_cards_go_to_the_end_of_their_columns(api: Api) -> None:
    first, second = api.stage_ids()[:2]
    api.create_contact(stageId=second)
    data = upserted(
        api,
        [{"name": unique("n"), "email": unique_email(), "stageId": second} for _ in range(3)]
        + [{"name": "Moved", "email": unique_email()}],
    )
    ids = [r["id"] for r in data["results"]]
    positions = [(get_full(api, i)["stageId"], get_full(api, i)["orderInCards"]) for i in ids]
    assert positions == [(second, 1), (second, 2), (second, 3), (first, 0)]
    moved = get_full(api, ids[3])
    data = upserted(api, [{"email": moved["email"], "stageId": second}])
    after = get_full(api, ids[3])
    assert (after["stageId"], after["orderInCards"]) == (second, 4)
    [event] = all_events(api, types="contact.updated")
    assert event["changed"] == ["orderInCards", "orderInCardsLastUpdated", "stageId"]


def test_body_errors(api: Api) -> None:
    error(
        api.post("/api/contact/upsert-batch", json={"contacts": [], "extra": 1}), 400, "BAD_REQUEST"
    )
    body = error(upsert(api, [], matchBy="name", dryRun="yes"), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["matchBy", "dryRun", "contacts"]
    body = error(
        upsert(api, [{"name": "x", "email": unique_email()}] * 501), 422, "VALIDATION_ERROR"
    )
    assert error_fields(body) == ["contacts"]
    body = error(api.post("/api/contact/upsert-batch", json={}), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["contacts"]


def test_items_stay_in_their_workspace(api: Api, other_api: Api) -> None:
    email = unique_email()
    theirs = other_api.create_contact(email=email)
    data = upserted(api, [{"name": "Mine", "email": email}])
    assert data["results"][0]["status"] == "created"
    assert data["results"][0]["id"] != theirs["id"]
    bad = upserted(api, [{"name": "x", "email": unique_email(), "workspaceId": other_api.ws}])
    assert bad["results"][0]["errors"][0]["field"] == "workspaceId"
