"""The ASGI application: `create_app(settings)`."""

from __future__ import annotations

import asyncio
import gc
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from starlette.types import Scope

from chatcrm import __version__, logs
from chatcrm.api import docs, errors, openapi
from chatcrm.api.errors import all_routes
from chatcrm.api.gate import GateMiddleware
from chatcrm.api.home import router as home_router
from chatcrm.api.hotpath import HotRoutes
from chatcrm.api.idempotency import IdempotencyMiddleware, purge_forever
from chatcrm.api.middleware import RequestContextMiddleware
from chatcrm.api.ratelimit import RateLimiter
from chatcrm.auth.service import AuthCache
from chatcrm.config import Settings
from chatcrm.contacts import router as contacts_api
from chatcrm.contacts.router import router as contacts_router
from chatcrm.db.database import Database
from chatcrm.opportunities import router as opportunities_api
from chatcrm.opportunities.router import router as opportunities_router
from chatcrm.ops import metrics
from chatcrm.ops.router import router as ops_router
from chatcrm.workspaces.router import router as workspaces_router


def create_app(settings: Settings | None = None, *, hot_routes: bool = True) -> FastAPI:
    settings = settings or Settings()
    # With N worker processes each enforces 1/N of every rate limit (see api/ratelimit.py).
    share = 1.0 / settings.workers

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.db = Database(settings)
        # Everything built so far lives as long as the process: keep the collector from
        # walking it again and again (fewer, shorter pauses under load).
        gc.collect()
        gc.freeze()
        purge = asyncio.create_task(purge_forever(app.state.db))
        yield
        purge.cancel()
        await app.state.db.dispose()
        metrics.process_exited(os.getpid())

    def on_done(scope: Scope, status: int, seconds: float) -> None:
        route = getattr(scope.get("route"), "path", None) or "unmatched"
        metrics.observe(scope["method"], route, status, seconds)
        db: Database | None = getattr(app.state, "db", None)
        if db is not None:
            metrics.set_pool(*db.pool_stats())

    app = FastAPI(
        title="chatcrm",
        version=__version__,
        description="Contacts and opportunities of chat-driven sales teams.",
        lifespan=lifespan,
        # /api/contact/ must be a 404 in the envelope, not a redirect.
        redirect_slashes=False,
        docs_url=None,  # api/docs.py serves /docs and /redoc from the package, not from CDNs
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.auth_cache = AuthCache(settings.key_cache_ttl)
    errors.install(app)
    openapi.install(app)
    docs.install(app)
    app.include_router(home_router)
    for router in (contacts_router, opportunities_router, workspaces_router, ops_router):
        app.include_router(router)
    # Added last = runs first: request id and body limit, then the gate (key, rate limit),
    # then idempotent POSTs, then the hot routes' direct dispatch.
    if hot_routes:
        app.add_middleware(HotRoutes, **_hot_routes(app))
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(GateMiddleware, settings=settings, limiter=RateLimiter(share=share))
    app.add_middleware(
        RequestContextMiddleware,
        max_body_bytes=settings.max_body_bytes,
        access_log=settings.access_log,
        on_done=on_done,
    )
    return app


def _hot_routes(app: FastAPI) -> dict[str, Any]:
    """The routes api/hotpath.py dispatches directly, with their FastAPI route objects."""
    by_name = {getattr(r, "name", None): r for r in all_routes(app.router.routes)}

    def entry(endpoint: Any) -> tuple[Any, Any]:
        return endpoint, by_name[endpoint.__name__]

    return {
        "get_by_id": {
            "contact": entry(contacts_api.get_contact),
            "opportunity": entry(opportunities_api.get_opportunity),
        },
        "exact": {
            ("PUT", "/api/contact"): entry(contacts_api.update_contact),
            ("PUT", "/api/opportunity"): entry(opportunities_api.update_opportunity),
            ("GET", "/api/contact"): entry(contacts_api.list_contacts),
            ("GET", "/api/opportunity"): entry(opportunities_api.list_opportunities),
            ("GET", "/api/contact/searchByCellphone"): entry(contacts_api.search_by_cellphone),
            ("GET", "/api/contact/searchByEmail"): entry(contacts_api.search_by_email),
        },
    }


def create_app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory` and the worker processes of `chatcrm serve`."""
    settings = Settings()
    logs.configure(settings.log_level, json=settings.log_json)
    return create_app(settings)
