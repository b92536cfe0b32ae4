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
        # Names as the API keeps them (edge blanks included), then without edge blanks,
        # each also case-folded: the API takes `sp` and ` sp ` as two tags (and stages).
        self.by_exact: dict[str, dict[str, Any]] = {}
        self.by_stripped: dict[str, dict[str, Any]] = {}
        self.by_key: dict[str, dict[str, Any]] = {}
        self.by_stripped_key: dict[str, dict[str, Any]] = {}
        for item in items:
            self.add(item)

    def add(self, item: dict[str, Any], *, any_case: bool = True) -> None:
        """`any_case=False` (a tag this run creates): found by its name as written only.
        A cell's `vip` finds the workspace's `VIP` when the workspace had it before the
        run; a `VIP` the run made for an earlier cell names another tag, and `vip` is
        made too (a contact exported holding `VIP` and `vip` comes back holding both)."""
        self.by_id[item["id"]] = item
        written = str(item[self.key])
        self.by_exact.setdefault(written, item)
        if any_case:  # a tag this run made is found by its name as written only
            self.by_stripped.setdefault(written.strip(), item)
            self.by_key.setdefault(written.casefold(), item)
            self.by_stripped_key.setdefault(written.strip().casefold(), item)

    def find(self, text: str, *, blanks_meant: bool = False) -> str | None:
        """The id that `text` names, or None: an id; a name exactly as written (` sp ` is
        not `sp`, the edge blanks kept as an export writes or escapes them), else without
        its edge blanks (a cell typed "VIP " finds `VIP` or ` VIP `) unless they were
        `blanks_meant` (escaped in a list); in each, the case as written first (tags `VIP`
        and `vip` are two), then any case."""
        bare = text.strip()
        if bare in self.by_id:
            return bare
        item = self.by_exact.get(text) or self.by_key.get(text.casefold())
        if item is None and not blanks_meant:
            item = (
                self.by_exact.get(bare)
                or self.by_stripped.get(bare)
                or self.by_key.get(bare.casefold())
                or self.by_stripped_key.get(bare.casefold())
            )
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
            # A list's item keeps edge blanks only where they were escaped: meant.
            found = self.tags.find(name, blanks_meant=name != name.strip())
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
