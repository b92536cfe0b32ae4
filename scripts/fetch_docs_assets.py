"""Fetch the files the API documentation pages (/docs, /redoc) load, from the npm registry.

The files are committed under src/chatcrm/api/docs_assets/ and shipped in the package, so
the pages need nothing from the internet. This script is run by hand, never at install or
test time:

    python scripts/fetch_docs_assets.py           # rewrite the folders from the pinned tarballs
    python scripts/fetch_docs_assets.py --check   # only compare the committed files with them

To change a version: set `version` and `integrity` below (`npm view NAME@VERSION
dist.integrity` prints the latter), run the script, run the browser tests
(tests/browser/), update the versions named in docs/api.md (2.21), commit.

Tarballs are downloaded directly, not through `npm install`, so no package's install
scripts run (swagger-ui-dist depends on an install-time analytics package).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REGISTRY = "https://registry.npmjs.org"
TARGET = Path(__file__).resolve().parent.parent / "src" / "chatcrm" / "api" / "docs_assets"


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    # npm's Subresource Integrity string of the tarball: what the registry publishes.
    integrity: str
    # path inside the tarball → file name in TARGET/<name>/
    files: dict[str, str]

    @property
    def tarball_url(self) -> str:
        return f"{REGISTRY}/{self.name}/-/{self.name}-{self.version}.tgz"


PINNED = (
    Package(
        name="swagger-ui-dist",
        version="5.35.0",
        integrity="sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==",
        files={
            "package/swagger-ui-bundle.js": "swagger-ui-bundle.js",
            "package/swagger-ui-bundle.js.LICENSE.txt": "swagger-ui-bundle.js.LICENSE.txt",
            "package/swagger-ui.css": "swagger-ui.css",
            "package/favicon-32x32.png": "favicon-32x32.png",
            "package/LICENSE": "LICENSE",
            "package/NOTICE": "NOTICE",
            "package/package.json": "package.json",
        },
    ),
    # The 2.x line: FastAPI's ReDoc page loads it with a classic <script> tag, and 3.x
    # reports usage to its maker unless told not to.
    Package(
        name="redoc",
        version="2.5.4",
        integrity="sha512-M6jWhG1qoBnH6TFmzJnstyCZ87HmOY/UzDm78mHiYihEdlV/YcS9ogOo1NlElnJMeLsyxHFe2yFc4sNjHTrABQ==",
        files={
            "package/bundles/redoc.standalone.js": "redoc.standalone.js",
            "package/bundles/redoc.standalone.js.LICENSE.txt": "redoc.standalone.js.LICENSE.txt",
            "package/LICENSE": "LICENSE",
            "package/package.json": "package.json",
        },
    ),
)


def download(package: Package) -> bytes:
    with urllib.request.urlopen(package.tarball_url, timeout=120) as response:
        data: bytes = response.read()
    algorithm, _, expected = package.integrity.partition("-")
    actual = base64.b64encode(hashlib.new(algorithm, data).digest()).decode()
    if actual != expected:
        raise SystemExit(f"{package.tarball_url}: integrity mismatch ({algorithm}-{actual})")
    return data


def extract(package: Package, data: bytes) -> dict[str, bytes]:
    """The pinned files of the tarball, by their name in the target folder."""
    out: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member, name in package.files.items():
            handle = tar.extractfile(member)
            if handle is None:
                raise SystemExit(f"{package.tarball_url}: {member} is not a file")
            out[name] = handle.read()
    return out


def differences(folder: Path, files: dict[str, bytes]) -> list[str]:
    present = {p.name for p in folder.iterdir()} if folder.is_dir() else set()
    problems = [f"{folder / n}: not in the tarball" for n in sorted(present - set(files))]
    for name, content in sorted(files.items()):
        path = folder / name
        if not path.is_file():
            problems.append(f"{path}: missing")
        elif path.read_bytes() != content:
            problems.append(f"{path}: differs from the tarball")
    return problems


def write(folder: Path, files: dict[str, bytes]) -> None:
    # Written beside the target, then swapped in: a failed run leaves the old folder whole.
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        staged = Path(tmp) / folder.name
        staged.mkdir()
        for name, content in files.items():
            (staged / name).write_bytes(content)
        if folder.exists():
            shutil.rmtree(folder)
        staged.rename(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare only; write nothing")
    args = parser.parse_args()
    TARGET.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    for package in PINNED:
        files = extract(package, download(package))
        folder = TARGET / package.name
        if args.check:
            problems += differences(folder, files)
        else:
            write(folder, files)
            print(f"{package.name}@{package.version} → {folder}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if args.check and not problems:
        print("the committed files are those of the pinned tarballs")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
