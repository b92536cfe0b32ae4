"""Operations endpoints: liveness, readiness and metrics (no authentication)."""

from __future__ import annotations

from sqlalchemy import false, func, literal, literal_column, select
from starlette.requests import Request
from starlette.responses import Response

from chatcrm.api.envelope import ok
from chatcrm.api.errors import is_unavailable
from chatcrm.api.routing import Routes
from chatcrm.api.state import STATE_CONNECTION
from chatcrm.core import messages as m
from chatcrm.core.errors import ServiceUnavailable
from chatcrm.db.database import Connection
from chatcrm.ops import metrics

routes = Routes("operations")
_PING = select(literal(1).label("one"))
# How many of a Citus cluster's workers do not answer a statement of their own.
_ON_WORKERS = func.run_command_on_workers(literal_column("'SELECT 1'")).table_valued("success")
_SILENT_WORKERS = (
    select(func.count()).select_from(_ON_WORKERS).where(_ON_WORKERS.c.success.is_(false()))
)


def _status(*keys: str) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {key: {"type": "string"} for key in keys},
        "required": list(keys),
        "additionalProperties": False,
    }


# HEAD too, for load balancers that probe that way (same answer, no body).
@routes.operation(
    "GET",
    "/health",
    operation_id="health",
    summary="The process is up (does not touch the database)",
    message=m.HEALTHY,
    answer=_status("status"),
    authenticated=False,
)
async def health(request: Request) -> Response:
    return ok(m.HEALTHY, {"status": "ok"})


@routes.operation(
    "GET",
    "/ready",
    operation_id="ready",
    summary="The database answers a query",
    message=m.READY,
    answer=_status("status", "database"),
    errors=(503,),
    authenticated=False,
)
async def ready(request: Request) -> Response:
    conn: Connection = request.scope["state"][STATE_CONNECTION]
    try:
        await conn.fetchval(_PING)
        # On Citus the coordinator answering is not enough: every tenant statement runs
        # on a worker, so one that does not answer makes the API answer 503.
        silent = await conn.fetchval(_SILENT_WORKERS) if await conn.is_citus() else 0
    except Exception as exc:
        if is_unavailable(exc):
            raise ServiceUnavailable("The database is unreachable.") from exc
        raise
    if silent:
        raise ServiceUnavailable(f"{silent} Citus worker node(s) of the database do not answer.")
    return ok(m.READY, {"status": "ready", "database": conn.dialect})


@routes.operation(
    "GET",
    "/metrics",
    operation_id="metrics",
    summary="Prometheus text format (not enveloped): requests, latency, database pool",
    message="",
    answer=None,
    authenticated=False,
    enveloped=False,
)
async def metrics_endpoint(request: Request) -> Response:
    metrics.set_pool(request.app.state.db.pool_stats)  # this process's, as of now
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
