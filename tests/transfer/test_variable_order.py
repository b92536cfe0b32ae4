"""Each contact's variables come back in their order from an export imported elsewhere
(contract G: export then import into another workspace reproduces the records): the var:
columns follow every order the contacts agree on, whatever order they are read in."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcrm.transfer.export import VariableOrder
from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary

pytestmark = pytest.mark.slow


def test_variables_come_back_in_each_contacts_order(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    held = {  # created in this order; an export reads the newest first
        "Ana": [("city", "Lima"), ("plan", "gold")],
        "Bea": [("budget", "100"), ("city", "Cusco")],
        "Cid": [("plan", "silver")],
    }
    for name, variables in held.items():
        body = {
            "name": name,
            "email": f"{name.lower()}@example.com",
            "variables": [{"name": n, "value": v} for n, v in variables],
        }
        first.call("POST", "/api/contact", json=body)
    exported = tmp_path / "contacts.csv"
    assert first.cli("export", "contacts", "-o", str(exported)).exit_code == 0

    made = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, made["id"])
    copied = second.cli("import", "contacts", str(exported))
    assert summary(copied) == "created 3, updated 0, unchanged 0, failed 0", copied.output
    back = {c["name"]: c["variables"] for c in second.records("/api/contact", shape="full")}
    assert back == {
        name: [{"name": n, "value": v} for n, v in variables] for name, variables in held.items()
    }


def test_records_that_disagree_go_by_first_appearance() -> None:
    order = VariableOrder()
    order.add(["var:p", "var:q"])
    order.add(["var:q", "var:p"])
    order.add(["var:a", "var:p"])
    assert order.columns() == ["var:a", "var:p", "var:q"]
