"""Create the project's virtual environment with a working pip, on any Debian Python 3.11+.

Debian's python3 ships without ensurepip unless python3-venv is installed; in that case
the environment is created without pip and pip is installed from its wheel on PyPI.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.request
import venv
from pathlib import Path

PYPI_PIP = "https://pypi.org/pypi/pip/json"


def _pip_wheel(dest: Path) -> Path:
    with urllib.request.urlopen(PYPI_PIP, timeout=60) as response:
        release = json.load(response)
    wheel = next(u for u in release["urls"] if u["filename"].endswith(".whl"))
    path = dest / wheel["filename"]
    urllib.request.urlretrieve(wheel["url"], path)
    return path


def main(target: str) -> None:
    env_dir = Path(target)
    python = env_dir / "bin" / "python"
    if not python.exists():
        try:
            venv.create(env_dir, with_pip=True, clear=True)
        except (subprocess.CalledProcessError, OSError):
            venv.create(env_dir, with_pip=False, clear=True)
    if subprocess.run([python, "-m", "pip", "--version"], capture_output=True).returncode != 0:
        with tempfile.TemporaryDirectory() as tmp:
            wheel = _pip_wheel(Path(tmp))
            # A pip wheel can run itself: python pip.whl/pip install pip.whl
            subprocess.run([python, f"{wheel}/pip", "install", "-q", str(wheel)], check=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".venv")
