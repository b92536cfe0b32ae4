"""Update Contact: the rule of every updatable field (contract A.3, B.1)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.client import Api, error, ok_data, unique_email
from tests.contacts.test_create import MISSING_ID, TAG_KEYS, now, ts
from tests.contacts.test_update import full, invalid, put, snapshot, updated


def change(api: Api, contact_id: str, **fields: Any) -> dict[str, Any]:
    body = {"paramToUpdate": ",".join(fields), **fields}
    return updated(put(api, contact_id, body), contact_id)


def refused(api: Api, contact_id: str, **fields: Any) -> list[str]:
    """Assert the update is a 422 that changed nothing; return the fields named."""
    before = snapshot(api, contact_id)
    body = {"paramToUpdate": ",".join(fields), **fields}
    names = invalid(put(api, contact_id, body))
    assert snapshot(api, contact_id) == before
    return names


def test_unrelated_update_keeps_the_dates(api: Api) -> None:
    contact = api.create_contact()
    result = change(api, contact["id"], name="Bea")
    assert result["lastMessageDate"] == contact["lastMessageDate"]
    assert result["orderInCardsLastUpdated"] == contact["orderInCardsLastUpdated"]
    assert result["creationDate"] == contact["creationDate"]


# --- names -----------------------------------------------------------------------------------


def test_name(api: Api) -> None:
    contact = api.create_contact()
    assert change(api, contact["id"], name="n" * 200)["name"] == "n" * 200
    for bad in ("", "   ", "n" * 201, None, 5, ["Bea"]):
        assert refused(api, contact["id"], name=bad) == ["name"]


def test_lastname(api: Api) -> None:
    contact = api.create_contact(lastname="Diaz")
    assert change(api, contact["id"], lastname="Ruiz")["lastname"] == "Ruiz"
    assert change(api, contact["id"], lastname="")["lastname"] == ""
    assert change(api, contact["id"], lastname="l" * 200)["lastname"] == "l" * 200
    for bad in ("l" * 201, None, 5):
        assert refused(api, contact["id"], lastname=bad) == ["lastname"]


# --- email and phone -------------------------------------------------------------------------


def test_email(api: Api) -> None:
    contact = api.create_contact()
    email = unique_email()
    assert change(api, contact["id"], email=email)["email"] == email
    for bad in ("nope", "a@b", "a b@example.com", 5, True, ["x@example.com"]):
        assert refused(api, contact["id"], email=bad) == ["email"]


def test_internal_whatsapp_number(api: Api) -> None:
    contact = api.create_contact()
    result = change(api, contact["id"], internalWhatsappNumber="+51 987-654-321")
    assert result["internalWhatsappNumber"] == "51987654321"
    for bad in ("12345", "1234567890123456", "51987abc321", 51987654321, None):
        assert refused(api, contact["id"], internalWhatsappNumber=bad) == ["internalWhatsappNumber"]


# --- stage and card position -----------------------------------------------------------------


def test_stage_change_moves_the_card_to_the_end_of_the_new_column(api: Api) -> None:
    first, second = api.stage_ids("contact")[:2]
    a, b, c = (api.create_contact(stageId=first) for _ in range(3))
    x = api.create_contact(stageId=second)
    api.set_contact(x["id"], orderInCards=7)
    before = now()
    moved = change(api, a["id"], stageId=second)
    after = now()
    assert moved["stageId"] == second and moved["orderInCards"] == 8
    assert before <= ts(moved["orderInCardsLastUpdated"]) <= after
    # the cards left behind keep their numbers
    assert snapshot(api, b["id"])[0]["orderInCards"] == 1
    assert snapshot(api, c["id"])[0]["orderInCards"] == 2
    assert snapshot(api, x["id"])[0]["orderInCards"] == 7


def test_stage_change_to_an_empty_column_is_position_0(api: Api) -> None:
    empty = api.add_stage("contact")
    api.create_contact()
    contact = api.create_contact()
    assert contact["orderInCards"] == 1
    moved = change(api, contact["id"], stageId=empty["id"])
    assert moved["stageId"] == empty["id"] and moved["orderInCards"] == 0
    assert moved["orderInCardsLastUpdated"] > contact["orderInCardsLastUpdated"]


def test_same_stage_is_no_move(api: Api) -> None:
    api.create_contact()
    contact = api.create_contact()
    result = change(api, contact["id"], stageId=contact["stageId"])
    assert result["orderInCards"] == 1


def test_moved_back_card_goes_to_the_end(api: Api) -> None:
    first, second = api.stage_ids("contact")[:2]
    a = api.create_contact(stageId=first)
    api.create_contact(stageId=first)
    change(api, a["id"], stageId=second)
    assert change(api, a["id"], stageId=first)["orderInCards"] == 2


@pytest.mark.parametrize("kind", ["unknown", "opportunity", "other_workspace", "null", "number"])
def test_bad_stage_is_422(api: Api, other_api: Api, kind: str) -> None:
    contact = api.create_contact()
    value = {
        "unknown": MISSING_ID,
        "opportunity": api.stage_ids("opportunity")[0],
        "other_workspace": other_api.stage_ids("contact")[0],
        "null": None,
        "number": 3,
    }[kind]
    assert refused(api, contact["id"], stageId=value) == ["stageId"]


def test_order_in_cards(api: Api) -> None:
    a = api.create_contact()
    b = api.create_contact()
    before = now()
    result = change(api, a["id"], orderInCards=1)
    after = now()
    assert result["orderInCards"] == 1
    assert before <= ts(result["orderInCardsLastUpdated"]) <= after
    assert snapshot(api, b["id"])[0]["orderInCards"] == 1  # not renumbered
    again = change(api, a["id"], orderInCards=0)
    assert again["orderInCards"] == 0
    assert again["orderInCardsLastUpdated"] > result["orderInCardsLastUpdated"]


@pytest.mark.parametrize("value", [-1, "3", 1.5, True, None, [1]])
def test_bad_order_in_cards_is_422(api: Api, value: Any) -> None:
    contact = api.create_contact()
    assert refused(api, contact["id"], orderInCards=value) == ["orderInCards"]


def test_stage_and_order_together(api: Api) -> None:
    second = api.stage_ids("contact")[1]
    api.create_contact(stageId=second)
    contact = api.create_contact()
    result = change(api, contact["id"], stageId=second, orderInCards=0)
    assert result["stageId"] == second and result["orderInCards"] == 0


# --- segmentation and agent ------------------------------------------------------------------


def test_segmentation(api: Api, other_api: Api) -> None:
    contact = api.create_contact()
    seg = api.add_segmentation()
    assert change(api, contact["id"], segmentationId=seg["id"])["segmentationId"] == seg["id"]
    assert change(api, contact["id"], segmentationId=None)["segmentationId"] is None
    for bad in (MISSING_ID, other_api.add_segmentation()["id"], "seg-1", 5):
        assert refused(api, contact["id"], segmentationId=bad) == ["segmentationId"]


def test_assigned_agent_name_follows_the_agent(api: Api) -> None:
    contact = api.create_contact()
    carla = api.add_agent(name="Carla Ruiz")
    dario = api.add_agent(name="Dario Soto")
    result = change(api, contact["id"], assignedAgentId=carla["id"])
    assert (result["assignedAgentId"], result["assignedAgentName"]) == (carla["id"], "Carla Ruiz")
    result = change(api, contact["id"], assignedAgentId=dario["id"])
    assert (result["assignedAgentId"], result["assignedAgentName"]) == (dario["id"], "Dario Soto")
    record, _ = snapshot(api, contact["id"])
    assert record["assignedAgentName"] == "Dario Soto"
    result = change(api, contact["id"], assignedAgentId=None)
    assert result["assignedAgentId"] is None and result["assignedAgentName"] is None


def test_bad_agent_is_422(api: Api, other_api: Api) -> None:
    contact = api.create_contact()
    for bad in (MISSING_ID, other_api.add_agent()["id"], "agent-1", 5, True):
        assert refused(api, contact["id"], assignedAgentId=bad) == ["assignedAgentId"]


# --- flags -----------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["isBotEnabled", "isRead"])
def test_boolean_flags(api: Api, field: str) -> None:
    contact = api.create_contact()
    assert change(api, contact["id"], **{field: False})[field] is False
    assert change(api, contact["id"], **{field: True})[field] is True
    assert snapshot(api, contact["id"])[0][field] is True
    for bad in ("true", 1, 0, None, "false"):
        assert refused(api, contact["id"], **{field: bad}) == [field]


def test_avatar_color(api: Api) -> None:
    contact = api.create_contact()
    assert change(api, contact["id"], avatarColor="#a1b2c3")["avatarColor"] == "#a1b2c3"
    assert change(api, contact["id"], avatarColor=None)["avatarColor"] is None
    assert refused(api, contact["id"], avatarColor=5) == ["avatarColor"]


# --- solved ----------------------------------------------------------------------------------


def test_solving_records_date_and_the_assigned_agent(api: Api) -> None:
    agent = api.add_agent()
    contact = api.create_contact(assignedAgentId=agent["id"])
    before = now()
    result = change(api, contact["id"], isSolved=True)
    after = now()
    assert result["isSolved"] is True
    assert before <= ts(result["solvedDate"]) <= after
    assert result["solvedByAgentId"] == agent["id"]
    assert snapshot(api, contact["id"])[0]["isSolved"] is True


def test_solving_without_an_agent(api: Api) -> None:
    contact = api.create_contact()
    result = change(api, contact["id"], isSolved=True)
    assert result["isSolved"] is True and result["solvedByAgentId"] is None
    assert result["solvedDate"] is not None


def test_solving_with_a_named_agent(api: Api) -> None:
    assigned = api.add_agent()
    solver = api.add_agent()
    contact = api.create_contact(assignedAgentId=assigned["id"])
    result = change(api, contact["id"], isSolved=True, solvedByAgentId=solver["id"])
    assert result["solvedByAgentId"] == solver["id"]
    assert result["assignedAgentId"] == assigned["id"]
    result = change(api, contact["id"], isSolved=True, solvedByAgentId=None)
    assert result["solvedByAgentId"] == assigned["id"]


def test_solving_together_with_a_new_assignment(api: Api) -> None:
    old = api.add_agent()
    new = api.add_agent()
    contact = api.create_contact(assignedAgentId=old["id"])
    result = change(api, contact["id"], assignedAgentId=new["id"], isSolved=True)
    assert result["solvedByAgentId"] == new["id"]


def test_unsolving_clears_date_and_agent(api: Api) -> None:
    agent = api.add_agent()
    contact = api.create_contact(assignedAgentId=agent["id"])
    change(api, contact["id"], isSolved=True)
    result = change(api, contact["id"], isSolved=False)
    assert result["isSolved"] is False
    assert result["solvedDate"] is None and result["solvedByAgentId"] is None
    result = change(api, contact["id"], isSolved=False, solvedByAgentId=None)
    assert result["solvedDate"] is None and result["solvedByAgentId"] is None


def test_solved_by_agent_without_is_solved_is_400(api: Api) -> None:
    agent = api.add_agent()
    contact = api.create_contact()
    body = {"paramToUpdate": "solvedByAgentId", "solvedByAgentId": agent["id"]}
    error(put(api, contact["id"], body), 400, "BAD_REQUEST")
    assert full(api, contact["id"])["solvedByAgentId"] is None


def test_solved_by_agent_with_is_solved_false_is_422(api: Api) -> None:
    agent = api.add_agent()
    contact = api.create_contact()
    fields = refused(api, contact["id"], isSolved=False, solvedByAgentId=agent["id"])
    assert fields == ["solvedByAgentId"]


def test_bad_solver_is_422(api: Api, other_api: Api) -> None:
    contact = api.create_contact()
    for bad in (MISSING_ID, other_api.add_agent()["id"], 5):
        assert refused(api, contact["id"], isSolved=True, solvedByAgentId=bad) == [
            "solvedByAgentId"
        ]


def test_bad_is_solved_is_422(api: Api) -> None:
    contact = api.create_contact()
    for bad in ("true", 1, None):
        assert refused(api, contact["id"], isSolved=bad) == ["isSolved"]


# --- tags ------------------------------------------------------------------------------------


def test_tags_replace_and_keep_assignment_dates(api: Api) -> None:
    a, b, c = api.add_tag(), api.add_tag(), api.add_tag()
    contact = api.create_contact(tags=[a["id"], b["id"]])
    dates = {t["id"]: t["assignmentDate"] for t in contact["tags"]}
    before = now()
    result = change(api, contact["id"], tags=[c["id"], {"id": b["id"]}])
    after = now()
    tags = result["tags"]
    assert [t["id"] for t in tags] == [c["id"], b["id"]]
    assert all(list(t) == TAG_KEYS for t in tags)
    assert tags[0]["name"] == c["name"] and tags[0]["color"] == c["color"]
    assert tags[1]["assignmentDate"] == dates[b["id"]]
    assert before <= ts(tags[0]["assignmentDate"]) <= after
    assert snapshot(api, contact["id"])[0]["tags"] == tags
    # a tag removed and given again is new again
    result = change(api, contact["id"], tags=[a["id"]])
    assert ts(result["tags"][0]["assignmentDate"]) > ts(dates[a["id"]])


def test_tags_duplicates_collapse_and_empty_clears(api: Api) -> None:
    a = api.add_tag()
    contact = api.create_contact()
    result = change(api, contact["id"], tags=[a["id"], {"id": a["id"]}])
    assert [t["id"] for t in result["tags"]] == [a["id"]]
    assert change(api, contact["id"], tags=[])["tags"] == []


@pytest.mark.parametrize("kind", ["unknown", "other_workspace", "malformed", "type", "element"])
def test_bad_tags_are_422(api: Api, other_api: Api, kind: str) -> None:
    mine = api.add_tag()
    contact = api.create_contact(tags=[mine["id"]])
    value = {
        "unknown": [MISSING_ID],
        "other_workspace": [other_api.add_tag()["id"]],
        "malformed": ["vip"],
        "type": mine["id"],
        "element": [5],
    }[kind]
    fields = refused(api, contact["id"], tags=value)
    assert len(fields) == 1 and fields[0].startswith("tags")


def test_at_most_100_tags(api: Api) -> None:
    ids = [api.add_tag()["id"] for _ in range(101)]
    contact = api.create_contact()
    assert len(change(api, contact["id"], tags=ids[:100])["tags"]) == 100
    assert refused(api, contact["id"], tags=ids) == ["tags"]


# --- variables, files, last message --------------------------------------------------------


def test_variables_merge_by_name(api: Api) -> None:
    contact = api.create_contact(variables=[{"name": "a", "value": 1}, {"name": "b", "value": "x"}])
    result = change(
        api, contact["id"], variables=[{"name": "a", "value": 2}, {"name": "c", "value": True}]
    )
    assert result["variables"] == [
        {"name": "a", "value": 2},
        {"name": "b", "value": "x"},
        {"name": "c", "value": True},
    ]
    result = change(api, contact["id"], variables=[{"name": "b", "value": None}])
    assert result["variables"][1] == {"name": "b", "value": None}
    assert change(api, contact["id"], variables=[])["variables"] == result["variables"]
    assert full(api, contact["id"])["variables"] == result["variables"]


def test_variable_numbers_come_back_as_written(api: Api) -> None:
    """docs/api.md 3.4: numbers are kept as sent, exponent and trailing zeros included,
    through a create, a merge with other variables, and a read (the raw text compared)."""
    written = '[{"name":"a","value":1e2},{"name":"b","value":12E+1},{"name":"c","value":1.50},'
    written += '{"name":"d","value":-0.0},{"name":"e","value":1.5e-3}]'
    body = f'{{"name":"Ana","email":"{unique_email()}","variables":{written}}}'
    created = api.post("/api/contact", content=body)
    assert f'"variables":{written}' in created.text
    contact_id = ok_data(created)["id"]
    more = '{"paramToUpdate":"variables","variables":[{"name":"f","value":2.5E3}]}'
    changed = api.put(
        "/api/contact", content=more, params={"id": contact_id, "workspaceId": api.ws}
    )
    expected = written[:-1] + ',{"name":"f","value":2.5E3}]'
    assert f'"variables":{expected}' in changed.text
    email = ok_data(created)["contact"]["email"]
    page = api.get("/api/contact", params={"shape": "full", "q": email})
    assert f'"variables":{expected}' in page.text


@pytest.mark.parametrize(
    "value",
    [
        {"name": "a", "value": 1},
        [{"name": "a"}],
        [{"name": "a", "value": [1]}],
        [{"name": "a", "value": 1, "x": 2}],
        [{"name": "", "value": 1}],
        ["a"],
    ],
)
def test_bad_variables_are_422(api: Api, value: Any) -> None:
    contact = api.create_contact(variables=[{"name": "a", "value": 1}])
    fields = refused(api, contact["id"], variables=value)
    assert len(fields) == 1 and fields[0].startswith("variables")
    assert full(api, contact["id"])["variables"] == [{"name": "a", "value": 1}]


def test_variables_limit_counts_the_merged_set(api: Api) -> None:
    many = [{"name": f"v{i}", "value": i} for i in range(200)]
    contact = api.create_contact(variables=many)
    # replacing existing ones stays within the limit
    result = change(api, contact["id"], variables=[{"name": "v0", "value": "zero"}])
    assert len(result["variables"]) == 200
    # a 201st variable is over it
    assert refused(api, contact["id"], variables=[{"name": "new", "value": 1}]) == ["variables"]


def test_files_replace(api: Api) -> None:
    contact = api.create_contact(files=["a.pdf"])
    files = [f"https://files.example.com/{i}.pdf" for i in range(101)]
    assert change(api, contact["id"], files=files[:2])["files"] == files[:2]
    assert change(api, contact["id"], files=files[:100])["files"] == files[:100]
    assert change(api, contact["id"], files=[])["files"] == []
    for bad in (files, "a.pdf", [1], None):
        fields = refused(api, contact["id"], files=bad)
        assert len(fields) == 1 and fields[0].startswith("files")


def test_last_message_sets_its_date(api: Api) -> None:
    contact = api.create_contact()
    before = now()
    result = change(api, contact["id"], lastMessage="Hi again")
    after = now()
    assert result["lastMessage"] == "Hi again"
    assert before <= ts(result["lastMessageDate"]) <= after
    assert result["lastMessageDate"] > contact["lastMessageDate"]
    record, _ = snapshot(api, contact["id"])
    assert record["lastMessageDate"] == result["lastMessageDate"]
    long = change(api, contact["id"], lastMessage="m" * 10_000)
    assert long["lastMessage"] == "m" * 10_000
    assert long["lastMessageDate"] > result["lastMessageDate"]
    for bad in ("m" * 10_001, 5, ["x"]):
        assert refused(api, contact["id"], lastMessage=bad) == ["lastMessage"]


def test_every_field_in_one_update(api: Api) -> None:
    contact = api.create_contact()
    stage = api.stage_ids("contact")[2]
    seg, agent, tag = api.add_segmentation(), api.add_agent(), api.add_tag()
    values: dict[str, Any] = {
        "name": "Zoe",
        "lastname": "Lopez",
        "email": unique_email(),
        "stageId": stage,
        "segmentationId": seg["id"],
        "assignedAgentId": agent["id"],
        "isBotEnabled": False,
        "isRead": True,
        "isSolved": True,
        "tags": [tag["id"]],
        "orderInCards": 4,
        "avatarColor": "#000000",
        "variables": [{"name": "k", "value": "v"}],
        "files": ["f.png"],
        "internalWhatsappNumber": "+34 600 111 222",
        "lastMessage": "Bye",
    }
    body = {"paramToUpdate": ",".join(values), **values}
    result = updated(put(api, contact["id"], body), contact["id"])
    expected = {**values, "tags": result["tags"], "internalWhatsappNumber": "34600111222"}
    assert {k: result[k] for k in values} == expected
    assert [t["id"] for t in result["tags"]] == [tag["id"]]
    assert result["solvedByAgentId"] == agent["id"]
    assert result["assignedAgentName"] == agent["name"]
    response = api.get_contact(contact["id"])
    assert ok_data(response)["data"][0]["stageId"] == stage
