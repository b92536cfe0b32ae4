"""The ASGI application: `create_app(settings)`."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy.engine import make_url
from starlette.types import ASGIApp, Receive, Scope, Send

from chatcrm import __version__, logs
from chatcrm.api import docs, errors, openapi
from chatcrm.api.gate import GateMiddleware
from chatcrm.api.home import router as home_router
from chatcrm.api.idempotency import IdempotencyMiddleware, purge_forever
from chatcrm.api.middleware import DirectDispatch, RequestContextMiddleware
from chatcrm.api.node_buckets import NodeRateLimiter, buckets_file
from chatcrm.api.ratelimit import Limiter, RateLimiter, SharedRateLimiter
from chatcrm.api.routing import Dispatch, api_routes, reserve_literal_paths
from chatcrm.auth.repository import KEYS_CHANNEL
from chatcrm.auth.service import AuthCache
from chatcrm.channels.receive_routes import routes as receive_routes
from chatcrm.channels.router import routes as channel_routes
from chatcrm.config import Settings
from chatcrm.console import pages as console_pages
from chatcrm.contacts.router import routes as contact_routes
from chatcrm.db.database import Database
from chatcrm.db.engine import backend_name, standalone_engine
from chatcrm.db.migrate import schema_behind
from chatcrm.events import retention
from chatcrm.events.notifications import Handler, listen_forever
from chatcrm.events.publisher import NOTIFY_CHANNEL, Publisher
from chatcrm.events.reading import EventsRuntime
from chatcrm.events.router import routes as event_routes
from chatcrm.events.signals import Broadcast
from chatcrm.messages.router import routes as message_routes
from chatcrm.opportunities.router import routes as opportunity_routes
from chatcrm.ops import metrics
from chatcrm.ops.orphans import stop_when_orphaned
from chatcrm.ops.router import routes as ops_routes
from chatcrm.ops.stopping import on_stop_signals
from chatcrm.people.key_routes import routes as key_routes
from chatcrm.people.session_routes import routes as session_routes
from chatcrm.people.upkeep import upkeep_forever
from chatcrm.people.user_routes import routes as user_routes
from chatcrm.webhooks.router import routes as webhook_routes
from chatcrm.webhooks.running import RunningDispatcher
from chatcrm.workspaces.router import routes as workspace_routes

log = logging.getLogger("chatcrm")

# The route table, in the order routes match (a path's fixed forms before its templates).
ROUTES = (
    contact_routes,
    message_routes,
    opportunity_routes,
    workspace_routes,
    event_routes,
    webhook_routes,
    user_routes,
    session_routes,
    key_routes,
    channel_routes,
    receive_routes,
    ops_routes,
)


class ServiceApp(FastAPI):
    """FastAPI, with one shortcut: a request for a route of the table (api/routing.py) goes
    straight to chatcrm's own middleware, past the framework's outer layers (its error,
    telemetry and body-limit middlewares: three more calls, each with its own wrapper of
    `send`, about 8 µs of a GET's CPU). Those have nothing left to do there: the request
    context answers every failure itself (api/middleware.py), the telemetry is off, and no
    route sets the framework's body limit. Anything else (the console, docs, probes, a 404
    or a 405, lifespan) runs the whole framework, the same middleware included."""

    _shortcut = False
    _dispatch: Dispatch | None = None
    _direct: ASGIApp | None = None

    def take_table_routes_directly(self) -> None:
        """Serve the table's routes by the shortcut (needs `DirectDispatch` innermost)."""
        self._shortcut = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._shortcut and scope["type"] == "http":
            if self._dispatch is None:
                # Derived from the app's own routes at the first request: a route removed
                # from the app is gone from the shortcut too.
                self._dispatch = Dispatch(api_routes(self.router.routes))
                self._direct = self._middleware_only()
            found = self._dispatch.match(scope["method"], scope["path"])
            if found is not None:
                assert self._direct is not None
                if self.root_path:
                    scope["root_path"] = self.root_path
                scope["app"] = self
                scope["route"], scope["path_params"] = found
                await self._direct(scope, receive, send)
                return
        await super().__call__(scope, receive, send)

    def _middleware_only(self) -> ASGIApp:
        """chatcrm's middleware (added by `add_middleware`, innermost the direct dispatch),
        around the router."""
        app: ASGIApp = self.router
        for cls, args, kwargs in reversed(self.user_middleware):
            app = cls(app, *args, **kwargs)
        return app


def _limiter(settings: Settings) -> Limiter:
    """PostgreSQL: one budget per key in the database, whichever process or node answers.
    SQLite (one node): one process's buckets in its memory; several processes' in a file
    they share (api/node_buckets.py), or, when it cannot be opened, 1/N of every limit in
    each of the N."""
    if backend_name(settings.database_url) == "postgresql":
        return SharedRateLimiter()
    if settings.workers == 1:
        return RateLimiter()
    path = buckets_file(make_url(settings.database_url).database or "")
    try:
        return NodeRateLimiter(path)
    except OSError as exc:
        log.warning(
            "rate buckets file unusable: each worker keeps 1/N of every limit",
            extra={"path": str(path), "error": exc.strerror or type(exc).__name__},
        )
        return RateLimiter(share=1.0 / settings.workers)


def create_app(
    settings: Settings | None = None, *, direct_dispatch: bool = True, check_schema: bool = False
) -> FastAPI:
    """The service. `check_schema`: refuse to start on a database whose schema is not this
    code's (workers started by `uvicorn --factory`, which do not migrate)."""
    settings = settings or Settings()
    limiter = _limiter(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if check_schema:
            await _refuse_another_schema(settings)
        app.state.db = Database(settings)
        # Every worker sends webhooks unless CHATCRM_DISPATCH=0; the event publisher calls
        # app.state.dispatcher.wake() (when not None) after queueing deliveries. Made
        # first: a malformed retry schedule stops the start before any task runs.
        dispatch = RunningDispatcher(settings) if settings.dispatch else None
        app.state.dispatcher = dispatch.dispatcher if dispatch is not None else None
        # Everything built so far lives as long as the process: keep the collector from
        # walking it again and again (fewer, shorter pauses under load).
        gc.collect()
        gc.freeze()
        db: Database = app.state.db
        # Background work (publishing, purges) has a small pool of its own: it never takes
        # the connections requests wait for, and a request's count stays its own.
        app.state.background_db = Database(
            settings.model_copy(update={"db_pool_size": 2, "db_max_overflow": 2})
        )
        background_db: Database = app.state.background_db
        published = Broadcast()
        hooks = [published.fire] + ([dispatch.wake] if dispatch is not None else [])
        publisher = Publisher(background_db, on_published=hooks)
        app.state.events = EventsRuntime(publisher, published)
        on_stop_signals(app.state.events.stop_waiting)  # long polls answer at a stop
        db.on_events_committed = publisher.wake
        if dispatch is not None:  # a send's status change is an event too
            dispatch.db.on_events_committed = publisher.wake
        # One LISTEN connection per process (PostgreSQL): events published elsewhere, and
        # keys revoked or changed anywhere (dropped from this process's cache at once).
        notified: dict[str, Handler] = {
            NOTIFY_CHANNEL: lambda _: publisher.notified(),
            KEYS_CHANNEL: app.state.auth_cache.key_notified,
        }
        stop = asyncio.Event()
        background = [
            asyncio.create_task(purge_forever(db)),
            asyncio.create_task(publisher.run(stop)),
            *(
                [
                    asyncio.create_task(
                        listen_forever(
                            background_db,
                            notified,
                            on_lost=app.state.auth_cache.notifications_lost,
                        )
                    )
                ]
                if background_db.is_postgres
                else []
            ),
            asyncio.create_task(
                retention.purge_forever(background_db, days=settings.event_retention_days)
            ),
            asyncio.create_task(upkeep_forever(background_db, app.state.auth_cache)),
            asyncio.create_task(metrics.pool_forever(db.pool_stats)),
            # One of `serve --workers N`'s processes (with one, serve itself runs the app).
            *([asyncio.create_task(stop_when_orphaned())] if settings.workers > 1 else []),
        ]
        if dispatch is not None:
            dispatch.start()
        yield
        if dispatch is not None:
            await dispatch.stop()
        stop.set()
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
        await background_db.dispose()
        await db.dispose()
        metrics.process_exited(os.getpid())

    def on_done(scope: Scope, status: int, seconds: float) -> None:
        route = getattr(scope.get("route"), "path", None) or "unmatched"
        metrics.observe(scope["method"], route, status, seconds)

    app = ServiceApp(
        title="chatcrm",
        version=__version__,
        description="Contacts and opportunities of chat-driven sales teams.",
        lifespan=lifespan,
        # /api/contact/ must be a 404 in the envelope, not a redirect.
        redirect_slashes=False,
        docs_url=None,  # api/docs.py serves /docs and /redoc from the package, not from CDNs
        redoc_url=None,
        # FastAPI's own OpenTelemetry off: chatcrm has its metrics (/metrics) and its log
        # lines, whose fields are chosen so that no secret is written. Left on, it looks up
        # the global providers on every request (about 17 µs of a GET's 300) and would
        # record failed bodies, passwords included, for any exporter set up around it.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    app.state.settings = settings
    # SQLite has no notifications: its processes read the key-change counter instead.
    app.state.auth_cache = AuthCache(
        settings.key_cache_ttl, poll_changes=backend_name(settings.database_url) == "sqlite"
    )
    errors.install(app)
    for routes in ROUTES:
        app.router.routes.extend(routes.routes)
    reserve_literal_paths(app.router.routes)
    openapi.install(app)
    docs.install(app)
    console_pages.install(app)
    app.include_router(home_router)
    # Added last = runs first: request id, connection, route and body limit, then the gate
    # (key, rate limit), then idempotent POSTs, then the route itself.
    if direct_dispatch:
        app.add_middleware(DirectDispatch)
        app.take_table_routes_directly()
    app.add_middleware(IdempotencyMiddleware)
    app.add_middleware(GateMiddleware, settings=settings, limiter=limiter)
    app.add_middleware(
        RequestContextMiddleware,
        max_body_bytes=settings.max_body_bytes,
        access_log=settings.access_log,
        on_done=on_done,
    )
    return app


def create_app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory` and the worker processes of `chatcrm serve`."""
    settings = Settings()
    logs.configure(settings.log_level, json=settings.log_json)
    return create_app(settings, check_schema=True)


class SchemaMismatch(RuntimeError):
    """The database's schema is not this code's: the start stops, saying what to run."""


async def _refuse_another_schema(settings: Settings) -> None:
    # Served anyway, every request would answer 500 and the publisher log a traceback
    # every half second ("no such table"), with no word of what to do.
    engine = standalone_engine(settings.database_url, settings)
    try:
        reason = await schema_behind(engine)
    finally:
        await engine.dispose()
    if reason is not None:
        log.error("cannot start: %s", reason)
        raise SchemaMismatch(reason)
