"""Upsert property (contract E.2): whatever the batch — the same phones in different
spellings, the same emails in different cases, items with both, neither or one — the live
contacts of the workspace keep unique phones and emails, and the counts add up."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.client import Api, unique, unique_phone
from tests.contacts.test_upsert import live_contacts, upserted


def _spellings(digits: str) -> list[str]:
    return [
        digits,
        "+" + digits,
        f"+{digits[:2]} {digits[2:5]}-{digits[5:]}",
        f"({digits[:2]}) {digits[2:]}",
    ]


_CASES = (str.lower, str.upper, str.title)

items = st.lists(
    st.fixed_dictionaries(
        {
            "phone": st.none() | st.tuples(st.integers(0, 2), st.integers(0, 3)),
            "email": st.none() | st.tuples(st.integers(0, 2), st.integers(0, 2)),
            "lastname": st.sampled_from(["", "A", "B"]),
        }
    ),
    min_size=1,
    max_size=12,
)


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(batch=items, match_by=st.sampled_from(["auto", "phone", "email"]))
def test_live_contacts_stay_unique_and_counts_add_up(
    api: Api, batch: list[dict[str, Any]], match_by: str
) -> None:
    phones = [unique_phone() for _ in range(3)]
    emails = [f"{unique('p')}@example.com" for _ in range(3)]
    before = {c["id"] for c in live_contacts(api)}
    body = []
    for item in batch:
        contact: dict[str, Any] = {"name": "Prop", "lastname": item["lastname"]}
        if item["phone"] is not None:
            which, spelling = item["phone"]
            contact.update(platformId=2, phone=_spellings(phones[which])[spelling])
        if item["email"] is not None:
            which, case = item["email"]
            contact["email"] = _CASES[case](emails[which])
        body.append(contact)
    data = upserted(api, body, matchBy=match_by)
    results = data["results"]
    assert [r["index"] for r in results] == list(range(len(body)))
    counts = {s: sum(r["status"] == s for r in results) for s in data if s != "results"}
    assert counts == {k: data[k] for k in counts}
    assert sum(counts.values()) == len(body)
    # Only a missing contact point or a phone or email another contact holds may fail one.
    for result in results:
        if result["status"] == "failed":
            fields = {e["field"] for e in result["errors"]}
            assert fields and fields <= {"phone", "email"}, result
        else:
            assert result["id"] is not None and not result["errors"]
    live = [c for c in live_contacts(api) if c["id"] not in before]
    created = {r["id"] for r in results if r["status"] == "created"}
    assert {c["id"] for c in live} == created
    for key in ("internalWhatsappNumber", "email"):
        values = [str(c[key]).lower() for c in live if c[key]]
        assert len(values) == len(set(values)), key
    # The last item that changed a contact left its phone and email on it.
    by_id = {c["id"]: c for c in live_contacts(api)}
    seen: set[str] = set()
    for item, result in reversed(list(zip(body, results, strict=True))):
        if result["status"] == "failed" or result["id"] in seen:
            continue
        seen.add(result["id"])
        if "email" in item:
            assert by_id[result["id"]]["email"].lower() == item["email"].lower()
        if "phone" in item:
            digits = "".join(ch for ch in item["phone"] if ch.isdigit())
            assert by_id[result["id"]]["internalWhatsappNumber"] == digits
