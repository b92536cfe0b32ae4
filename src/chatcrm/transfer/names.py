"""The workspace's stages, agents, tags and segmentations, looked up by what a person
writes (a name, an email) or by id; read once per run from Get Workspace."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from chatcrm.transfer.cells import CellError


class TagMaker(Protocol):
    def create_tag(self, name: str) -> dict[str, Any]: ...


class Lookup:
    """Items of one kind (`{id, name…}`) by id, and by `key`: as written, else compared
    case-insensitively (among the items the workspace had: `add`). Two items with one
    name: the first (in the workspace's order) is the one named."""

    def __init__(self, what: str, items: Iterable[dict[str, Any]], key: str) -> None:
        self.what = what
        self.key = key
        self.by_id: dict[str, dict[str, Any]] = {}
        self.by_exact: dict[str, dict[str, Any]] = {}
        self.by_key: dict[str, dict[str, Any]] = {}
        for item in items:
            self.add(item)

    def add(self, item: dict[str, Any], *, any_case: bool = True) -> None:
        """`any_case=False` (a tag this run creates): found by its name as written only.
        A cell's `vip` finds the workspace's `VIP` when the workspace had it before the
        run; a `VIP` the run made for an earlier cell names another tag, and `vip` is
        made too (a contact exported holding `VIP` and `vip` comes back holding both)."""
        self.by_id[item["id"]] = item
        # Also without surrounding spaces, as a cell is read: a tag the API keeps as
        # " VIP " is exported so, and must be found again in the cell " VIP " or "VIP".
        written = str(item[self.key])
        for name in (written, written.strip()):
            self.by_exact.setdefault(name, item)
            if any_case:
                self.by_key.setdefault(name.casefold(), item)

    def find(self, text: str) -> str | None:
        """The id that `text` names, or None."""
        text = text.strip()
        if text in self.by_id:
            return text
        # The name as written first (tags `VIP` and `vip` are two), then any case.
        item = self.by_exact.get(text) or self.by_key.get(text.casefold())
        return None if item is None else str(item["id"])

    def resolve(self, text: str) -> str:
        found = self.find(text)
        if found is None:
            raise CellError(f'no {self.what} with {self.key} or id "{text.strip()}"')
        return found

    def shown(self, item_id: str | None) -> str:
        """What export writes for an id: the item's name (or email); an id the workspace no
        longer knows as it is."""
        if not item_id:
            return ""
        item = self.by_id.get(item_id)
        return item_id if item is None else str(item[self.key])


class WorkspaceNames:
    """Every lookup an import or export needs, from one Get Workspace answer."""

    def __init__(self, workspace: dict[str, Any]) -> None:
        self.contact_stages = Lookup("contact stage", workspace["contactStages"], "name")
        self.opportunity_stages = Lookup(
            "opportunity stage", workspace["opportunityStages"], "name"
        )
        self.agents = Lookup("agent", workspace["agents"], "email")
        self.segmentations = Lookup("segmentation", workspace["segmentations"], "name")
        self.tags = Lookup("tag", workspace["tags"], "name")
        # Bare digits are read in it, as the server reads them (contract N).
        self.default_country: str | None = workspace.get("defaultCountry")

    def tag_ids(self, names: list[str], *, maker: TagMaker | None, dry_run: bool) -> list[str]:
        """The ids of the tags named. An unknown one fails the row, unless `maker` is given
        (--create-tags): then it is created (in a dry run, only reported as known)."""
        ids: list[str] = []
        unknown: list[str] = []
        for name in names:
            found = self.tags.find(name)
            if found is not None:
                ids.append(found)
            elif maker is None:
                unknown.append(name)
            elif not dry_run:
                created = maker.create_tag(name)
                self.tags.add(created, any_case=False)
                ids.append(str(created["id"]))
        if unknown:
            listed = ", ".join(f'"{name}"' for name in unknown)
            raise CellError(f"unknown tag {listed} (--create-tags creates them)")
        return list(dict.fromkeys(ids))
