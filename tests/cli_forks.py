"""The command line's commands, each run in a process of its own forked from a server that
has imported them already.

A `chatcrm` process spends most of its 0.6–0.8 s importing (SQLAlchemy, pydantic, the
drivers); the tests run hundreds of them. multiprocessing's fork server imports the
command modules once, then forks one child a command: the child gets the command's
arguments, environment and working folder, its own stdout and stderr (files, read back
as a real process's are), and exits with the command's exit code. What a command does
from `main` on — click's parsing, settings from the environment, the database, the exit
status — is the installed script's, unchanged.

Not forked: `serve` and `dispatch` (their modules read the environment when imported, and
they run servers: tests/servers.py starts them as processes), and the start of the
installed console script itself, which every server the tests start goes through.
"""

from __future__ import annotations

import atexit
import io
import multiprocessing
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

# Commands run as real processes (see the docstring).
NOT_FORKED = ("serve", "dispatch")
# The command modules the fork server imports (chatcrm.cli.COMMANDS but NOT_FORKED).
_PRELOAD = [
    "chatcrm.cli",
    "chatcrm.cli.accounts",
    "chatcrm.cli.workspaces",
    "chatcrm.cli.keys",
    "chatcrm.cli.users",
    "chatcrm.cli.transfer",
    "chatcrm.cli.citus",
    "tests.cli_forks",
]

_context: list[multiprocessing.context.ForkServerContext] = []


def _forks() -> multiprocessing.context.ForkServerContext:
    if not _context:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_PRELOAD)
        _context.append(context)
    return _context[0]


def _command(args: Sequence[str], env: dict[str, str], cwd: str, out: str, err: str) -> None:
    """The child: the command as `chatcrm ARGS` would run it, then exit with its status."""
    from chatcrm.cli import main

    for fd, path in ((1, out), (2, err)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 (the process's own)
    sys.stdout = io.TextIOWrapper(open(1, "wb", closefd=False), encoding="utf-8")  # noqa: SIM115
    sys.stderr = io.TextIOWrapper(
        open(2, "wb", closefd=False),  # noqa: SIM115
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
    )
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["chatcrm", *args]
    status = 0
    try:
        main.main(args=list(args), prog_name="chatcrm")
    except SystemExit as exit_:
        if exit_.code is None:
            status = 0
        elif isinstance(exit_.code, int):
            status = exit_.code
        else:  # sys.exit("message"), as Python reports it
            print(exit_.code, file=sys.stderr)
            status = 1
    except BaseException:
        import traceback

        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()  # what the interpreter runs on its way out
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run(
    executable: str,
    args: Sequence[str],
    env: dict[str, str],
    *,
    timeout: float,
    cwd: str | Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """`executable ARGS` (the installed `chatcrm`) with `env`: forked from the server, or
    started as a process for the commands NOT_FORKED."""
    if not args or args[0] in NOT_FORKED:
        return subprocess.run(
            [executable, *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd,
            check=False,
        )
    with tempfile.TemporaryDirectory(prefix="chatcrm-cli-") as folder:
        out, err = str(Path(folder) / "stdout"), str(Path(folder) / "stderr")
        child = _forks().Process(
            target=_command, args=(list(args), env, str(cwd or os.getcwd()), out, err)
        )
        child.start()
        child.join(timeout)
        if child.exitcode is None:
            child.kill()
            child.join()
            raise subprocess.TimeoutExpired([executable, *args], timeout)
        stdout = Path(out).read_text(encoding="utf-8") if Path(out).exists() else ""
        stderr = Path(err).read_text(encoding="utf-8") if Path(err).exists() else ""
    # -N when a signal N ended it, as subprocess says
    return subprocess.CompletedProcess([executable, *args], child.exitcode, stdout, stderr)
