"""Paging through contact lists: with any data, any filters and any page sizes (changing from
page to page), every matching contact comes exactly once, newest first; and writes made
between page requests never duplicate or lose a contact that existed when paging began."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.client import Api, ok_data

LISTED = "List obtained successfully."

# Small vocabularies, so that random filters match some contacts and miss others; `%` and
# `_` check that they are taken literally.
NAMES = ["Ana", "ana maria", "BEA", "Beatriz", "Carla_1", "50% Dan", "Eva", "x_y", "Mar%co"]
LASTNAMES = ["", "Diaz", "DIAZ-ruiz", "Quispe", "de la Cruz", "O_Neil"]
QUERIES = ["an", "AN", "a", "_", "%", "bea", "zz", "diaz", "mail", "p1", "r", "00012", "519"]


def fresh_workspace(api: Api) -> Api:
    """A new, empty workspace of the same account, with the default stages."""
    data = ok_data(api.post("/api/workspace", json={"name": "Paging"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


def page_through(
    api: Api, filters: dict[str, str], sizes: list[int], between: Any = None
) -> list[dict[str, Any]]:
    """Every record the list yields, one page per size (the last size repeats)."""
    records: list[dict[str, Any]] = []
    token: str | None = None
    for n in range(10_000):
        params = {**filters, "pageSize": str(sizes[min(n, len(sizes) - 1)])}
        if token is not None:
            params["continuationToken"] = token
        data = ok_data(api.get("/api/contact", params=params), LISTED)
        assert list(data) == ["workspaceId", "continuationToken", "data"]
        assert len(data["data"]) <= int(params["pageSize"])
        records += data["data"]
        token = data["continuationToken"]
        if token is None:
            return records
        assert len(data["data"]) == int(params["pageSize"]), "only the last page may be short"
        if between is not None:
            between(n, records)
    raise AssertionError("the list never ended")


def newest_first(records: list[dict[str, Any]]) -> list[str]:
    ordered = sorted(records, key=lambda r: (r["creationDate"], r["id"]), reverse=True)
    return [r["id"] for r in ordered]


def matches(contact: dict[str, Any], filters: dict[str, str]) -> bool:
    """The contract's filters, computed in Python on the record as created."""
    q = filters.get("q")
    if q is not None:
        needle = q.lower()
        texts = [contact["name"], contact["lastname"], contact["email"] or ""]
        hit = any(needle in t.lower() for t in texts)
        digits = "".join(ch for ch in q if ch.isdigit())
        if len(digits) >= 3 and contact["phone"] and digits in contact["phone"]:
            hit = True
        if not hit:
            return False
    if "stageId" in filters and contact["stageId"] != filters["stageId"]:
        return False
    if "tag" in filters and filters["tag"] not in contact["tagIds"]:
        return False
    if "assignedAgentId" in filters and contact["assignedAgentId"] != filters["assignedAgentId"]:
        return False
    if "isSolved" in filters:
        return bool(contact["isSolved"] == (filters["isSolved"] in ("true", "1")))
    return True


contact_specs = st.integers(min_value=0, max_value=60).flatmap(
    lambda n: st.lists(
        st.fixed_dictionaries(
            {
                "stage": st.integers(0, 3),
                "solved": st.booleans(),
                "tags": st.sets(st.integers(0, 2)),
                "agent": st.sampled_from([None, 0, 1]),
                "name": st.sampled_from(NAMES),
                "lastname": st.sampled_from(LASTNAMES),
                "phone": st.booleans(),
            }
        ),
        min_size=n,
        max_size=n,
    )
)


def filter_sets(stages: list[str], tags: list[str], agents: list[str]) -> Any:
    optional = {
        "q": st.sampled_from(QUERIES),
        "stageId": st.sampled_from(stages),
        "tag": st.sampled_from(tags),
        "assignedAgentId": st.sampled_from(agents),
        "isSolved": st.sampled_from(["true", "false", "1", "0"]),
    }
    return st.fixed_dictionaries({}, optional=optional)


# On Citus each example costs about four times what it costs on PostgreSQL (a workspace
# with its stages, tags, agents and contacts made across three nodes): fewer examples there,
# where what is checked is the same SQL, planned by Citus.
EXAMPLES = {"sqlite": 25, "postgresql": 25, "citus": 10}


def test_paging_yields_each_matching_contact_once_newest_first(api: Api, backend: str) -> None:
    @settings(
        max_examples=EXAMPLES[backend],
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(specs=contact_specs, data=st.data())
    def pages(specs: list[dict[str, Any]], data: st.DataObject) -> None:
        _check_paging(api, specs, data)

    pages()


def _check_paging(api: Api, specs: list[dict[str, Any]], data: st.DataObject) -> None:
    ws = fresh_workspace(api)
    stages = ws.stage_ids()
    tags = [ws.add_tag()["id"] for _ in range(3)]
    agents = [ws.add_agent()["id"] for _ in range(2)]
    created: list[dict[str, Any]] = []
    for i, spec in enumerate(specs):
        phone = f"5190{i:07d}" if spec["phone"] else None
        record = ws.create_contact(
            name=spec["name"],
            lastname=spec["lastname"],
            email=f"p{i}@mail.test",
            stageId=stages[spec["stage"]],
            tags=[tags[t] for t in sorted(spec["tags"])],
            assignedAgentId=None if spec["agent"] is None else agents[spec["agent"]],
            internalWhatsappNumber=phone if phone else ...,
        )
        if spec["solved"]:
            record = ws.set_contact(record["id"], isSolved=True)
        record["phone"] = phone
        record["tagIds"] = {t["id"] for t in record["tags"]}
        created.append(record)

    for _ in range(3):
        filters = data.draw(filter_sets(stages, tags, agents), label="filters")
        sizes = data.draw(st.lists(st.integers(1, 25), min_size=1, max_size=8), label="sizes")
        records = page_through(ws, filters, sizes)
        got = [r["id"] for r in records]
        expected = newest_first([c for c in created if matches(c, filters)])
        assert len(got) == len(set(got)), "a contact was listed twice"
        assert got == expected
        assert got == newest_first(records)


def test_writes_between_pages_neither_duplicate_nor_lose_contacts(api: Api) -> None:
    rng = random.Random(20251125)
    stages = api.stage_ids()
    before = [api.create_contact(name=f"Before {i}") for i in range(60)]
    existing = {c["id"] for c in before}
    renamed: dict[str, str] = {}
    new_ids: set[str] = set()

    def write(n: int, shown: list[dict[str, Any]]) -> None:
        for _ in range(2):
            new_ids.add(api.create_contact(name=f"During {n}")["id"])
        for target in rng.sample(sorted(existing), 3):
            name = f"Renamed {n} {rng.random():.6f}"
            api.set_contact(target, name=name, stageId=rng.choice(stages))
            renamed[target] = name

    records = page_through(api, {}, [7], between=write)
    got = [r["id"] for r in records]
    assert len(got) == len(set(got)), "a contact was listed twice"
    assert set(got) == existing
    assert got == [c["id"] for c in reversed(before)]
    assert not new_ids & set(got)  # created after paging began: newer than every page
    # A contact renamed before its page was read is shown with its new name.
    shown = {r["id"]: r["name"] for r in records}
    assert any(shown[i] == name for i, name in renamed.items())
    # The next walk from the start sees everything, once.
    after = page_through(api, {}, [13])
    assert [r["id"] for r in after] == newest_first(after)
    assert {r["id"] for r in after} == existing | new_ids


def test_deletes_between_pages_remove_contacts_not_yet_shown(api: Api) -> None:
    rng = random.Random(7)
    before = [api.create_contact(name=f"C {i}") for i in range(45)]
    order = [c["id"] for c in reversed(before)]
    deleted_unseen: set[str] = set()
    deleted_seen: set[str] = set()

    def delete_some(n: int, shown: list[dict[str, Any]]) -> None:
        seen = {r["id"] for r in shown}
        unseen = [i for i in order if i not in seen and i not in deleted_unseen]
        victims = rng.sample(unseen, min(2, len(unseen)))
        already = [i for i in seen if i not in deleted_seen][:1]
        ok_data(
            api.post(
                "/api/contact/delete-batch",
                json={"contactIds": [{"ids": victims}, *({"ids": i} for i in already)]},
            ),
            "Contacts deleted successfully.",
        )
        deleted_unseen.update(victims)
        deleted_seen.update(already)

    records = page_through(api, {}, [5], between=delete_some)
    got = [r["id"] for r in records]
    assert deleted_unseen and deleted_seen
    assert len(got) == len(set(got)), "a contact was listed twice"
    assert not deleted_unseen & set(got), "a contact was listed after it was deleted"
    assert got == [i for i in order if i not in deleted_unseen]
