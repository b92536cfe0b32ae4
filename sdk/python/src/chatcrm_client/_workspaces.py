"""`client.workspaces`: contract B.3 and E.2."""

from __future__ import annotations

from typing import Any

from chatcrm_client._describe import segment, update_body
from chatcrm_client._engine import Answer, Call
from chatcrm_client._operations import M, Resource, operation
from chatcrm_client._records import Workspace

Workspaces_ = list[Workspace]  # (inside the class, `list` is the method)


def _listed(answer: Answer) -> Workspaces_:
    return [Workspace(item) for item in answer.data["data"]]


def _workspace(answer: Answer) -> Workspace:
    return Workspace(answer.data)


class Workspaces(Resource[M]):
    @operation
    def list(self) -> Call[Workspaces_]:
        """The workspaces of the key's account (`id` and `name`)."""
        return Call("GET", "/api/workspace", _listed, workspace="none")

    @operation
    def get(self, id: str | None = None) -> Call[Workspace]:
        """A workspace with its stages, tags, segmentations and agents; by default the
        client's own."""
        if id is None:
            return Call("GET", "/api/workspace/{workspace}", _workspace)
        return Call("GET", f"/api/workspace/{segment(id)}", _workspace, workspace="none")

    @operation
    def update(self, id: str | None = None, **fields: Any) -> Call[Workspace]:
        """Change the client's own workspace (or `id`'s): `name`, `timezone`,
        `agents_see_only_assigned`, `default_country` (how phones of bare digits are read,
        `"PE"`, or None to remove it). Returns the workspace as `get` shows it."""
        path = "/api/workspace/{workspace}" if id is None else f"/api/workspace/{segment(id)}"
        body = update_body("workspace", fields)
        if id is None:
            return Call("PUT", path, _workspace, json=body)
        return Call("PUT", path, _workspace, json=body, workspace="none")
