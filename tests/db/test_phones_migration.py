"""Migration 0012 (phones read again, contract N): numbers stored under the first rule with
an international prefix or a trunk 0 take the form libphonenumber reads; one whose new form
another live contact has keeps its old form and is reported, never merged."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.engine import standalone_engine
from tests.client import Api
from tests.conftest import (
    create_pg_database,
    drop_pg_database,
    migrate,
    new_account,
    run_sync,
)

OLD_FORMS = {
    "prefixed": "0051922333444",  # written 0051 922 333 444
    "trunk": "510922333445",  # written +51 (0) 922 333 445
    "na_prefixed": "011442079460958",  # written 011 44 20 7946 0958
    "clash": "0051922333446",  # 51922333446 is another live contact's
    "deleted": "0051922333446",  # deleted: no clash with a live contact
    "kept": "5215512345678",  # Mexico's mobile 1 stays
}


def _sql(url: str, statement: str, params: dict[str, object] | None = None) -> list[tuple]:
    async def run() -> list[tuple]:
        engine = standalone_engine(url, Settings(database_url=url))
        try:
            async with engine.begin() as conn:
                result = await conn.execute(text(statement), params or {})
                return [tuple(r) for r in result] if result.returns_rows else []
        finally:
            await engine.dispose()

    return run_sync(run)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_stored_phones_are_read_again(
    backend: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}" if backend == "sqlite" else create_pg_database()
    try:
        migrate(url)
        settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
        with TestClient(create_app(settings)) as http:
            api = Api(http, new_account(url))
            ids = {name: api.create_contact(name=name)["id"] for name in OLD_FORMS}
            holder = api.create_contact(name="holder", phone="51922333446")["id"]
            sender = api.create_contact(name="sender", platformSenderPhone="51 999 888 777")["id"]
            assert api.delete(f"/api/contact/{ids['deleted']}").status_code == 200
        # As the first rule stored them (it kept every digit as written).
        for name, number in OLD_FORMS.items():
            _sql(
                url,
                "UPDATE contacts SET internal_whatsapp_number = :n WHERE id = :id",
                {"n": number, "id": ids[name]},
            )
        _sql(url, "UPDATE contacts SET platform_sender_phone = '0051999888777' WHERE id = :id",
             {"id": sender})  # fmt: skip
        # Back to revision 0011, then up again through 0012.
        _sql(url, "ALTER TABLE workspaces DROP COLUMN default_country")
        _sql(url, "UPDATE alembic_version SET version_num = '0011'")
        _sql(url, "DROP TABLE early_statuses")  # made by 0015, made again
        _sql(url, "DROP INDEX ix_messages_queued_by_contact")  # made by 0018, made again

        with caplog.at_level(logging.WARNING, logger="chatcrm.migrate"):
            migrate(url)
        rows = dict(_sql(url, "SELECT id, internal_whatsapp_number FROM contacts"))
        senders = dict(_sql(url, "SELECT id, platform_sender_phone FROM contacts"))
        countries = _sql(url, "SELECT default_country FROM workspaces")
    finally:
        if backend == "postgresql":
            drop_pg_database(url)
    assert rows[ids["prefixed"]] == "51922333444"
    assert rows[ids["trunk"]] == "51922333445"
    assert rows[ids["na_prefixed"]] == "442079460958"
    assert rows[ids["clash"]] == "0051922333446"  # kept, and reported
    assert rows[ids["deleted"]] == "51922333446"
    assert rows[ids["kept"]] == "5215512345678"
    assert rows[holder] == "51922333446"
    assert senders[sender] == "51999888777"
    assert countries == [(None,)]
    [warning] = [r.getMessage() for r in caplog.records if r.name == "chatcrm.migrate"]
    assert ids["clash"] in warning and holder in warning and "0051922333446" in warning
