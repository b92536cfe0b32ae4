"""What a database is to Citus: whether it has the extension, whether `chatcrm citus
distribute` laid it out, and whether it is a coordinator it can be laid out on."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection


class NotACoordinator(Exception):
    """The database is not a Citus coordinator with workers; says what is missing."""


async def is_citus(conn: AsyncConnection) -> bool:
    """Whether the citus extension is installed in this database."""
    found = await conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'citus'"))
    return found.first() is not None


async def is_laid_out(conn: AsyncConnection) -> bool:
    """Whether `distribute` has run here: `workspaces` is a reference table."""
    if conn.dialect.name != "postgresql" or not await is_citus(conn):
        return False
    found = await conn.execute(
        text(
            "SELECT 1 FROM pg_dist_partition "
            "WHERE logicalrelid = to_regclass('workspaces') AND partmethod = 'n'"
        )
    )
    return found.first() is not None


async def check_coordinator(conn: AsyncConnection) -> None:
    """Raise NotACoordinator unless this is a Citus coordinator with at least one worker."""
    if conn.dialect.name != "postgresql":
        raise NotACoordinator("not PostgreSQL: Citus needs a PostgreSQL coordinator")
    if not await is_citus(conn):
        raise NotACoordinator(
            "the citus extension is not installed in this database (CREATE EXTENSION citus)"
        )
    if not (await conn.execute(text("SELECT citus_is_coordinator()"))).scalar():
        # A worker knows the cluster's nodes (metadata synced to it): the fix is the URL.
        known = (await conn.execute(text("SELECT count(*) FROM pg_dist_node"))).scalar()
        if known:
            raise NotACoordinator(
                "this database is on a Citus worker node: point --database-url at the "
                "coordinator's database"
            )
        raise NotACoordinator(
            "this database is not a Citus coordinator yet "
            "(on the coordinator: SELECT citus_set_coordinator_host(host, port))"
        )
    workers = (
        await conn.execute(
            text("SELECT count(*) FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary'")
        )
    ).scalar()
    if not workers:
        raise NotACoordinator("no Citus worker nodes (SELECT citus_add_node(host, port) first)")


async def check_workers_answer(conn: AsyncConnection) -> None:
    """Raise NotACoordinator naming the workers that do not answer: laying tables out needs
    every one (else the first step to reach one fails, saying something else)."""
    found = await conn.execute(
        text("SELECT nodename, nodeport, success, result FROM run_command_on_workers('SELECT 1')")
    )
    silent = [f"{n.nodename}:{n.nodeport} ({n.result})" for n in found.all() if not n.success]
    if silent:
        raise NotACoordinator(
            f"{len(silent)} Citus worker node(s) do not answer: {', '.join(silent)}; start "
            "them (or remove them from the cluster) and run this again"
        )
