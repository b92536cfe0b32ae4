"""A server out of reach at the run's first call is said in seconds, as the server's fault:
the import and export retry a long run's calls for about 40 s (429s, restarts), a mistyped
URL only twice; a URL without its scheme, or a missing argument, is refused as an option."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from chatcrm.cli import main

WORKSPACE = "01a214de-0000-7000-8000-000000000000"


@pytest.fixture
def hanging_up() -> Iterator[tuple[str, list[int]]]:
    """A port that takes each connection and closes it at once; how many it took."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken = [0]

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            taken[0] += 1
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", taken
    finally:
        listener.close()


@pytest.mark.parametrize("command", ["export", "import"])
def test_a_server_out_of_reach_is_tried_three_times_then_exit_2(
    hanging_up: tuple[str, list[int]], command: str, tmp_path: Path
) -> None:
    url, taken = hanging_up
    sample = tmp_path / "c.csv"
    sample.write_text("name,email\nAna,ana@example.com\n", encoding="utf-8")
    target = ["-o", str(tmp_path / "out.csv")] if command == "export" else [str(sample)]
    options = ["--url", url, "--api-key", "ccrm_x_y", "--workspace", WORKSPACE]
    result = CliRunner().invoke(main, [command, "contacts", *target, *options], prog_name="chatcrm")
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    # The server named as what is wrong, not the workspace (how it hung up varies).
    [line] = lines
    assert line.startswith(f"chatcrm: error: cannot reach the server at {url}: "), line
    assert line.endswith(" (is it running? check --url)"), line
    assert taken[0] == 3  # the first try and two retries


@pytest.mark.parametrize("command", ["export", "import"])
def test_a_url_without_its_scheme_is_refused_as_an_option(command: str, tmp_path: Path) -> None:
    sample = tmp_path / "c.csv"
    sample.write_text("name\nAna\n", encoding="utf-8")
    target = ["-o", str(tmp_path / "out.csv")] if command == "export" else [str(sample)]
    options = ["--url", "127.0.0.1:8000", "--api-key", "ccrm_x_y", "--workspace", WORKSPACE]
    result = CliRunner().invoke(main, [command, "contacts", *target, *options], prog_name="chatcrm")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        "chatcrm: error: Invalid value for '--url': '127.0.0.1:8000' is not http://host:port "
        f"or https://host (see 'chatcrm {command} contacts --help')"
    )


def test_a_missing_file_points_to_the_command_s_help() -> None:
    result = CliRunner().invoke(main, ["import", "contacts"], prog_name="chatcrm")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "chatcrm: error: Missing argument 'FILE'. (see 'chatcrm import contacts --help')"
    )
