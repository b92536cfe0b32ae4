"""The ASGI application: `create_app(settings)`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from chatcrm import __version__
from chatcrm.api import errors, openapi
from chatcrm.api.middleware import RequestContextMiddleware
from chatcrm.auth.service import AuthCache
from chatcrm.config import Settings
from chatcrm.contacts.router import router as contacts_router
from chatcrm.db.engine import Database
from chatcrm.opportunities.router import router as opportunities_router
from chatcrm.ops.router import router as ops_router
from chatcrm.workspaces.router import router as workspaces_router


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.db = Database(settings)
        yield
        await app.state.db.dispose()

    app = FastAPI(
        title="chatcrm",
        version=__version__,
        description="Contacts and opportunities of chat-driven sales teams.",
        lifespan=lifespan,
        # /api/contact/ must be a 404 in the envelope, not a redirect.
        redirect_slashes=False,
    )
    app.state.settings = settings
    app.state.auth_cache = AuthCache(settings.key_cache_ttl)
    errors.install(app)
    openapi.install(app)
    for router in (contacts_router, opportunities_router, workspaces_router, ops_router):
        app.include_router(router)
    app.add_middleware(RequestContextMiddleware, max_body_bytes=settings.max_body_bytes)
    return app


def create_app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory` and the worker processes of `chatcrm serve`."""
    return create_app(Settings())
