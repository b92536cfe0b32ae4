"""The Makefile's set-up: `make run` installs the service only, the checks add the dev
extras, and neither installs again what a stamp says is there (dry runs, `make -n`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def dry_run(target: str, venv: Path) -> list[str]:
    make = shutil.which("make")
    assert make, "make is not installed"
    done = subprocess.run(
        [make, "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def installs(lines: list[str]) -> list[str]:
    return [line for line in lines if "pip install" in line and " -e " in line]


def test_run_installs_the_service_without_the_dev_extras(tmp_path: Path) -> None:
    [line] = installs(dry_run("run", tmp_path))
    assert "[dev]" not in line
    assert line.rstrip().endswith("-e ."), line


def test_the_checks_install_the_dev_extras(tmp_path: Path) -> None:
    for target in ("test", "lint", "format", "bench"):
        [line] = installs(dry_run(target, tmp_path))
        assert "'.[dev]'" in line, (target, line)


def test_test_after_run_adds_the_dev_extras_and_run_after_test_installs_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / ".installed").touch()  # as `make run` leaves it
    assert installs(dry_run("run", tmp_path)) == []
    [line] = installs(dry_run("test", tmp_path))
    assert "'.[dev]'" in line
    # `make test` leaves both stamps (the dev extras include the service's dependencies).
    stamps = next(line for line in dry_run("test", tmp_path) if line.startswith("touch "))
    assert stamps.split()[1:] == [f"{tmp_path}/.installed", f"{tmp_path}/.installed-dev"]
    (tmp_path / ".installed-dev").touch()
    assert installs(dry_run("test", tmp_path)) == []
    assert installs(dry_run("run", tmp_path)) == []
