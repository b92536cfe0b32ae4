"""`/`: where a person who opens the service's address in a browser lands.

The web console (contract H); the API documentation stays at /docs.
"""

from __future__ import annotations

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import RedirectResponse

HOME_PAGE = "/console"

router = APIRouter()


@router.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
async def home(request: Request) -> RedirectResponse:
    # 307, not a permanent redirect: browsers would remember that, and the target will change.
    root = str(request.scope.get("root_path", "")).rstrip("/")
    return RedirectResponse(root + HOME_PAGE, status_code=307)
