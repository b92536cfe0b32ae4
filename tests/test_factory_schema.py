"""Workers started by `uvicorn --factory` do not migrate (docs/operations.md 1.2): on a
database whose schema is not this code's they refuse to start, saying what to run, where
they answered every request 500 and logged a traceback every half second."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.servers import free_port


def _factory(database_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    env["CHATCRM_DATABASE_URL"] = database_url
    command = [sys.executable, "-m", "uvicorn", "--factory", "chatcrm.app:create_app_from_env"]
    return subprocess.run(
        [*command, "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_worker_on_a_database_never_migrated_does_not_start(tmp_path: Path) -> None:
    done = _factory(f"sqlite:///{tmp_path / 'empty.db'}")
    assert done.returncode != 0
    assert "cannot start: the database has no chatcrm schema" in done.stderr, done.stderr
    assert "run `chatcrm migrate`" in done.stderr
