"""The client's field names are generated from the service's field tables: the committed
copy must be what the generator writes now."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_generated_field_names_are_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location(
        "generate_sdk_fields", ROOT / "scripts/generate_sdk_fields.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    committed = (ROOT / "sdk/python/src/chatcrm_client/_fields.py").read_text(encoding="utf-8")
    assert committed == generator.render(), (
        "sdk/python/src/chatcrm_client/_fields.py is stale: run scripts/generate_sdk_fields.py"
    )
    # Derived, not copied by hand: a field of the contact table, with its kind.
    assert '("lastMessageDate", "last_message_date", "timestamp")' in committed
    assert '("finalAmount", "final_amount", "money")' in committed
