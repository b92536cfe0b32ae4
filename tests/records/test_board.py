"""The boards and the pipeline (extensions for the console, docs/api.md 2.31–2.32): a column
per stage in stage order with its count, total and first cards in `orderInCards` order; one
column continued with `after`; the list filters; the pipeline's stage and month totals."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone


def _board(api: Api, kind: str = "contact", **params: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(api.get(f"/api/{kind}/board", params=params))
    return data


def _contact(api: Api, name: str, **fields: Any) -> dict[str, Any]:
    return api.create_contact(name=name, email=unique_email(), **fields)


def test_a_column_per_stage_with_counts_and_cards_in_card_order(api: Api) -> None:
    first, second = api.stage_ids()[:2]
    ana = _contact(api, "Ana", lastname="Diaz")
    bea = _contact(api, "Bea", stageId=second)
    cid = _contact(api, "Cid")
    api.set_contact(cid["id"], orderInCards=0)  # a tie with Ana: then by id
    data = _board(api)
    assert data["workspaceId"] == api.account.workspace_id
    stages = api.workspace()["contactStages"]
    assert [c["stageId"] for c in data["columns"]] == [s["id"] for s in stages]
    assert [c["name"] for c in data["columns"]] == [s["name"] for s in stages]
    one, two = data["columns"][:2]
    assert list(one) == ["stageId", "name", "count", "cards", "next"]  # no total for contacts
    assert one["count"] == 2 and two["count"] == 1 and one["next"] is None
    assert [c["record"]["id"] for c in one["cards"]] == sorted([ana["id"], cid["id"]])
    got = api.get_contact(bea["id"], params={"shape": "full"})
    assert two["cards"] == [{"etag": got.headers["etag"], "record": ok_data(got)["data"][0]}]
    assert "internalWhatsappNumber" in two["cards"][0]["record"]  # the full shape
    assert first == one["stageId"]


def test_load_more_continues_one_column(api: Api) -> None:
    stage = api.stage_ids()[0]
    made = [_contact(api, f"C{i}")["id"] for i in range(5)]
    data = _board(api, pageSize=2)
    column = data["columns"][0]
    assert column["count"] == 5 and len(column["cards"]) == 2 and column["next"]
    seen = [c["record"]["id"] for c in column["cards"]]
    after = column["next"]
    while after:
        page = _board(api, stageId=stage, after=after, pageSize=2)
        assert [c["stageId"] for c in page["columns"]] == [stage]
        seen += [c["record"]["id"] for c in page["columns"][0]["cards"]]
        after = page["columns"][0]["next"]
    assert seen == made  # creation order is card order here


def test_load_more_continues_past_positions_of_ten_digits(api: Api) -> None:
    """A card may sit at 1,000,000,000 or up to 2,147,483,647 (orderInCards): the column's
    `next` after it is taken back."""
    stage = api.stage_ids()[0]
    low = _contact(api, "Low")
    high = _contact(api, "High")
    top = _contact(api, "Top")
    api.set_contact(low["id"], orderInCards=1_000_000_000)
    api.set_contact(high["id"], orderInCards=1_000_000_001)
    api.set_contact(top["id"], orderInCards=2_147_483_647)
    seen: list[str] = []
    after = None
    while True:
        params: dict[str, Any] = {"stageId": stage, "pageSize": 1}
        if after:
            params["after"] = after
        column = _board(api, **params)["columns"][0]
        seen += [c["record"]["id"] for c in column["cards"]]
        after = column["next"]
        if not after:
            break
    assert seen == [low["id"], high["id"], top["id"]]
    for beyond in (f"2147483648:{low['id']}", f"99999999999:{low['id']}"):
        answer = api.get("/api/contact/board", params={"stageId": stage, "after": beyond})
        assert error_fields(error(answer, 400, "BAD_REQUEST")) == ["after"]


def test_the_filters_narrow_the_counts_and_cards(api: Api) -> None:
    tag = api.add_tag("hot")
    _contact(api, "Ana", tags=[tag["id"]])
    _contact(api, "Anabel")
    _contact(api, "Bea", platformId=2, phone=unique_phone())
    assert _board(api, q="ana")["columns"][0]["count"] == 2
    assert _board(api, search="ana")["columns"][0]["count"] == 2
    tagged = _board(api, tag=tag["id"])["columns"][0]
    assert tagged["count"] == 1 and tagged["cards"][0]["record"]["name"] == "Ana"


def test_opportunity_columns_total_their_amounts(api: Api) -> None:
    first, second = api.stage_ids("opportunity")[:2]
    api.create_opportunity(name="A", amount=1000.5)
    api.create_opportunity(name="B", amount=0.25)
    api.create_opportunity(name="C", amount=7, stageId=second)
    columns = _board(api, "opportunity")["columns"]
    assert list(columns[0]) == ["stageId", "name", "count", "totalAmount", "cards", "next"]
    assert (columns[0]["count"], columns[0]["totalAmount"]) == (2, Decimal("1000.75"))
    assert (columns[1]["count"], columns[1]["totalAmount"]) == (1, 7)
    assert all(c["totalAmount"] == 0 for c in columns[2:])
    assert [c["record"]["name"] for c in columns[0]["cards"]] == ["A", "B"]
    assert columns[0]["stageId"] == first


def test_won_and_lost_cards_stay_in_their_column_outside_its_figures(api: Api) -> None:
    won = api.create_opportunity(name="Won", amount=100)
    lost = api.create_opportunity(name="Lost", amount=40)
    api.create_opportunity(name="Open", amount=5.5)
    api.set_opportunity(won["id"], winLossStatus=1)
    api.set_opportunity(lost["id"], winLossStatus=2)
    column = _board(api, "opportunity")["columns"][0]
    assert (column["count"], column["totalAmount"]) == (1, Decimal("5.5"))
    assert sorted(c["record"]["name"] for c in column["cards"]) == ["Lost", "Open", "Won"]
    one = _board(api, "opportunity", stageId=column["stageId"])["columns"][0]
    assert (one["count"], one["totalAmount"]) == (1, Decimal("5.5"))


def test_opportunity_cards_name_their_contacts(api: Api) -> None:
    ana = _contact(api, "Ana", lastname="Diaz")
    bea = _contact(api, "Bea")
    api.create_opportunity(name="A", amount=1, contactId=ana["id"])
    api.create_opportunity(name="B", amount=1, contactId=bea["id"])
    api.create_opportunity(name="C", amount=1)
    cards = _board(api, "opportunity")["columns"][0]["cards"]
    assert [list(card) for card in cards] == [["etag", "record", "contactName"]] * 3
    assert [card["contactName"] for card in cards] == ["Ana Diaz", "Bea", None]
    contacts = _board(api)["columns"][0]["cards"]
    assert "contactName" not in contacts[0]
    # Deleted contacts leave every read (B.3): the card keeps its contactId, not the name.
    ok_data(api.post("/api/contact/delete-batch", json={"contactIds": [{"ids": bea["id"]}]}))
    cards = _board(api, "opportunity")["columns"][0]["cards"]
    assert [card["contactName"] for card in cards] == ["Ana Diaz", None, None]
    assert cards[1]["record"]["contactId"] == bea["id"]


def test_bad_board_queries(api: Api) -> None:
    body = error(api.get("/api/contact/board", params={"after": "1:x"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["after"]
    stage = api.stage_ids()[0]
    body = error(
        api.get("/api/contact/board", params={"stageId": stage, "after": "x"}), 400, "BAD_REQUEST"
    )
    assert error_fields(body) == ["after"]
    other = api.stage_ids("opportunity")[0]
    body = error(api.get("/api/contact/board", params={"stageId": other}), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["stageId"]
    body = error(api.get("/api/contact/board", params={"stageId": "x"}), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["stageId"]
    contact_stage = api.stage_ids()[0]
    body = error(
        api.get("/api/opportunity/board", params={"stageId": contact_stage}),
        422,
        "VALIDATION_ERROR",
    )
    assert body["data"]["errors"][0]["message"] == "must be an opportunity stage of the workspace"
    body = error(api.get("/api/contact/board", params={"pageSize": "0"}), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["pageSize"]
    error(api.get("/api/contact/board", params={"shape": "full"}), 400, "BAD_REQUEST")


def test_the_pipeline_counts_stages_and_months(api: Api) -> None:
    won = api.create_opportunity(name="Won", amount=100)
    lost = api.create_opportunity(name="Lost", amount=40)
    api.create_opportunity(name="Open", amount=5.5)
    api.set_opportunity(won["id"], finalAmount=120)
    api.set_opportunity(won["id"], winLossStatus=1)
    after = api.set_opportunity(lost["id"], winLossStatus=2)
    data = ok_data(api.get("/api/opportunity/pipeline"))
    assert list(data) == ["workspaceId", "stages", "months"]
    # Stage counts and totals are the open pipeline: won and lost count in their months.
    assert data["stages"][0]["count"] == 1
    assert data["stages"][0]["totalAmount"] == Decimal("5.5")
    month = after["winLossDate"][:7]
    assert data["months"] == [
        {
            "month": month,
            "won": {"count": 1, "totalAmount": 120},
            "lost": {"count": 1, "totalAmount": 40},
        }
    ]


def test_a_get_by_id_may_ask_for_the_full_shape(api: Api) -> None:
    contact = _contact(api, "Ana", variables=[{"name": "plan", "value": "gold"}])
    read = api.get_contact(contact["id"])
    full = api.get_contact(contact["id"], params={"shape": "full"})
    assert ok_data(full)["data"] == [contact]
    assert read.headers["etag"] == full.headers["etag"]
    assert "variables" not in ok_data(read)["data"][0]
    error(api.get_contact(contact["id"], params={"shape": "wide"}), 422, "VALIDATION_ERROR")
