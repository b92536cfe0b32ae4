"""What the end-to-end tests of `chatcrm import` and `chatcrm export` share: a workspace
of the running server over plain HTTP (what the CLI did is checked without going through
the code under test), the CLI run against it, and the files it reads and writes."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
from click.testing import CliRunner, Result

from chatcrm.cli import main
from tests.servers import Server


class Workspace:
    """One workspace of the running server, over plain HTTP (what the CLI did is checked
    without going through the code under test)."""

    def __init__(self, server: Server, api_key: str, workspace_id: str) -> None:
        self.server = server
        self.api_key = api_key
        self.id = workspace_id
        headers = {"Authorization": f"Bearer {api_key}", "x-workspace-id": workspace_id}
        self.http = httpx.Client(base_url=server.base_url, headers=headers, timeout=30)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        # Money as Decimal: a float would round an amount of 16 significant digits.
        answer = json.loads(self.http.request(method, path, **kwargs).content, parse_float=Decimal)
        assert answer["success"], answer
        return answer["data"]

    def setup(self) -> dict[str, Any]:
        data: dict[str, Any] = self.call("GET", f"/api/workspace/{self.id}")
        return data

    def add(self, what: str, **body: Any) -> dict[str, Any]:
        data: dict[str, Any] = self.call("POST", f"/api/workspace/{self.id}/{what}", json=body)
        return data

    def records(self, path: str, **params: Any) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        query: dict[str, Any] = {"pageSize": 100, **params}
        while True:
            data = self.call("GET", path, params=query)
            out += data["data"]
            if not data["continuationToken"]:
                return out
            query["continuationToken"] = data["continuationToken"]

    def cli(self, *args: str, interval: str = "600") -> Result:
        options = ["--url", self.server.base_url, "--api-key", self.api_key]
        options += ["--workspace", self.id, "--progress-interval", interval]
        return CliRunner().invoke(main, [*args, *options])


def write_csv(
    path: Path, rows: list[list[str]], *, delimiter: str = ",", bom: bool = False
) -> Path:
    with path.open("w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        csv.writer(handle, delimiter=delimiter).writerows(rows)
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def summary(result: Result) -> str:
    return result.stdout.strip().splitlines()[-1]


def comparable_contacts(ws: Workspace) -> list[dict[str, Any]]:
    """What an import carries over, named as people name it (ids differ per workspace)."""
    setup = ws.setup()
    stages = {s["id"]: s["name"] for s in setup["contactStages"]}
    agents = {a["id"]: a["email"] for a in setup["agents"]}
    out = []
    for c in ws.records("/api/contact", shape="full"):
        out.append(
            {
                "name": c["name"],
                "lastname": c["lastname"],
                "email": c["email"],
                "phone": c["internalWhatsappNumber"],
                "stage": stages[c["stageId"]],
                "agent": agents.get(c["assignedAgentId"]),
                "tags": sorted(t["name"] for t in c["tags"]),
                # Typed: 30 and "30" differ, as true and "true" do; in their order.
                "variables": [
                    (v["name"], json.dumps(v["value"], default=str)) for v in c["variables"]
                ],
                "isSolved": c["isSolved"],
                "isRead": c["isRead"],
                "platformId": c["platformId"],
                "files": c["files"],
            }
        )
    return sorted(out, key=lambda c: c["name"])


def comparable_opportunities(ws: Workspace) -> list[dict[str, Any]]:
    setup = ws.setup()
    stages = {s["id"]: s["name"] for s in setup["opportunityStages"]}
    phones = {
        c["id"]: c["internalWhatsappNumber"] for c in ws.records("/api/contact", shape="full")
    }
    out = [
        {
            "name": o["name"],
            "amount": o["amount"],
            "finalAmount": o["finalAmount"],
            "description": o["description"],
            "stage": stages[o["stageId"]],
            "contact": phones.get(o["contactId"], ""),
            "creationTypeId": o["creationTypeId"],
            "winLossStatus": o["winLossStatus"],
            # B.2: part of the record (contract G: reproduced by export then import).
            "activities": [
                (a["categoryType"], a["content"], a["date"]) for a in o["activities"] or []
            ],
        }
        for o in ws.records("/api/opportunity", shape="full")
    ]
    return sorted(out, key=lambda o: o["name"])
