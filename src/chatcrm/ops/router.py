"""Operations endpoints: liveness, readiness and metrics (no authentication)."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel
from sqlalchemy import literal, select
from starlette.responses import Response

from chatcrm.api import messages as m
from chatcrm.api.deps import Db
from chatcrm.api.envelope import ok
from chatcrm.api.errors import ServiceUnavailable, is_unavailable
from chatcrm.api.openapi import responses
from chatcrm.ops import metrics

router = APIRouter(tags=["operations"])
_PING = select(literal(1).label("one"))


class Health(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    database: str


# HEAD too, for load balancers that probe that way (kept out of the schema: same answer).
@router.head("/health", include_in_schema=False)
@router.get("/health", operation_id="health", responses=responses(Health, authenticated=False))
async def health() -> Response:
    """The process is up (does not touch the database)."""
    return ok(m.HEALTHY, {"status": "ok"})


@router.head("/ready", include_in_schema=False)
@router.get(
    "/ready", operation_id="ready", responses=responses(Readiness, 503, authenticated=False)
)
async def ready(db: Db) -> Response:
    """The database answers a query."""
    try:
        async with db.read() as conn:
            await conn.fetchval(_PING)
    except Exception as exc:
        if is_unavailable(exc):
            raise ServiceUnavailable("The database is unreachable.") from exc
        raise
    return ok(m.READY, {"status": "ready", "database": db.dialect})


@router.head("/metrics", include_in_schema=False)
@router.get(
    "/metrics",
    operation_id="metrics",
    response_class=Response,
    responses={200: {"content": {"text/plain": {}}, "description": "Prometheus text format"}},
)
async def metrics_endpoint() -> Response:
    """Prometheus text format (not enveloped): requests, latency, database pool."""
    body, content_type = metrics.render()
    return Response(body, media_type=content_type)
