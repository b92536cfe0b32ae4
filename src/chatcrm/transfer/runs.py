"""One import or one export from start to end: the file and its header are checked before
anything is sent, then the workspace's names are read, then the rows go."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.columns import COLUMNS
from chatcrm.transfer.contact_import import import_contacts
from chatcrm.transfer.csv_source import open_csv
from chatcrm.transfer.export import RowWriter, contact_labels, records, write_csv, write_jsonl
from chatcrm.transfer.export_filters import list_filters
from chatcrm.transfer.names import WorkspaceNames
from chatcrm.transfer.opportunity_import import ContactFinder, import_opportunities
from chatcrm.transfer.outcome import Rejects, Tally
from chatcrm.transfer.problems import BadInput
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote


@dataclass(frozen=True)
class Target:
    """The server and workspace a run talks to."""

    url: str
    api_key: str
    workspace_id: str


@contextmanager
def connected(target: Target) -> Iterator[tuple[Remote, WorkspaceNames]]:
    try:
        remote = Remote(target.url, target.api_key, target.workspace_id)
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    try:
        yield remote, WorkspaceNames(remote.workspace())
    finally:
        remote.close()


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file (through links too); a missing one names none."""
    try:
        return one.samefile(other)
    except OSError:
        return False


def run_import(
    kind: str,
    path: Path,
    target: Target,
    *,
    match_by: str = "auto",
    dry_run: bool = False,
    rejects_path: Path | None = None,
    create_tags: bool = False,
    bom: bool = False,
    progress_interval: float,
) -> Tally:
    if rejects_path is not None and _same_file(rejects_path, path):
        # Opened for writing, the rejects file would empty the file before it is read.
        raise BadInput(
            f"{rejects_path}: --rejects names the file being imported; name another file"
        )
    columns = COLUMNS[kind]
    source = open_csv(path)
    read = columns.read_header(source.header)
    # The whole file is read once before anything is sent (a file that cannot be read to
    # its end is refused here, not half imported), and its rows counted for the progress.
    total = source.count_rows()
    tally = Tally()
    with connected(target) as (remote, names):
        rejects = Rejects(rejects_path, source.header, source.delimiter, bom=bom or source.bom)
        try:
            with RowProgress(total, f"import {kind}", interval=progress_interval) as progress:
                if kind == "contacts":
                    builder = BodyBuilder(
                        read,
                        names,
                        stages=names.contact_stages,
                        tag_maker=remote if create_tags else None,
                        dry_run=dry_run,
                    )
                    import_contacts(
                        source.rows(),
                        builder,
                        remote,
                        match_by=match_by,
                        country=names.default_country,
                        dry_run=dry_run,
                        tally=tally,
                        rejects=rejects,
                        progress=progress,
                    )
                else:
                    finder = ContactFinder(remote, names.default_country)
                    builder = BodyBuilder(
                        read,
                        names,
                        stages=names.opportunity_stages,
                        dry_run=dry_run,
                        find_contact=finder,
                    )
                    import_opportunities(
                        source.rows(),
                        builder,
                        remote,
                        finder=finder,
                        dry_run=dry_run,
                        tally=tally,
                        rejects=rejects,
                        progress=progress,
                    )
        finally:
            rejects.close()
            tally.first_failures = rejects.first
    return tally


def run_export(
    kind: str,
    target: Target,
    output: Callable[[], AbstractContextManager[TextIO]],
    *,
    fmt: str,
    filters: dict[str, str | None],
    progress_interval: float,
) -> int:
    """Writes the records and returns how many. `filters` are the filter options given
    (`{"--stage": "Contacted"}`), naming stages, agents, tags and contacts the way the
    columns do. `output` is opened once they are found good: a refused option leaves no
    file behind, nor an earlier one emptied."""
    columns = COLUMNS[kind]
    with connected(target) as (remote, names):
        stages = names.contact_stages if kind == "contacts" else names.opportunity_stages
        query = list_filters(kind, filters, names=names, stages=stages, remote=remote)
        with output() as out:
            labels = contact_labels(remote) if kind == "opportunities" else None
            writer = RowWriter(columns, names, stages, labels)
            pages = remote.contacts(query) if kind == "contacts" else remote.opportunities(query)
            with RowProgress(None, f"export {kind}", interval=progress_interval) as progress:
                rows = records(pages, progress)
                if fmt == "jsonl":
                    return write_jsonl(rows, writer, out)
                return write_csv(rows, writer, out, variables=columns.variables)
