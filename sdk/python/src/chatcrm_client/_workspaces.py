"""`client.workspaces`: contract B.3 and E.2."""

from __future__ import annotations

from chatcrm_client._describe import segment
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
