"""The client's one implementation of requests, retries, workspaces and paging, without I/O.

A resource method describes what to do (`Call`: one request and how to read its answer;
`Pages`: a first request, the items of each page and how to ask for the next). The engine
turns a description into a *plan*: a generator that yields steps — `Send` a request,
`Sleep`, `Emit` an item of a list — and receives the answer of each `Send` (an
`httpx.Response`, or the `httpx.TransportError` it raised). The sync and the async drivers
(_drivers.py) only carry the steps out, so both clients behave the same by construction.
"""

from __future__ import annotations

import contextlib
import email.utils
import random
import uuid
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx

from chatcrm_client import _errors as errors
from chatcrm_client._version import VERSION
from chatcrm_client._wire import dumps, loads, query_value

T = TypeVar("T")

# Statuses worth another attempt: the request may well succeed later. Any other 4xx is
# the request's own fault and would fail again.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 8.0
RETRY_AFTER_MAX = 60.0


@dataclass(frozen=True)
class Answer:
    """A successful answer: the envelope's `data` (Decimal numbers), or the body's bytes
    for a call without envelope, and its headers."""

    data: Any
    headers: httpx.Headers

    @property
    def etag(self) -> str | None:
        etag: str | None = self.headers.get("etag")
        return etag


def data_of(answer: Answer) -> Any:
    return answer.data


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and how to read its answer.

    `workspace`: where the workspace goes besides the `X-Workspace-Id` header ("query":
    also as `workspaceId` in the query, where the wire requires it), "none" (calls
    about workspaces themselves) or "if_known" (`request`: the client's workspace when it
    has one, else none, and the service says whether the call needs one)."""

    method: str
    path: str
    parse: Callable[[Answer], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    workspace: Literal["header", "query", "none", "if_known"] = "header"
    wait: float = 0.0  # seconds the service may hold the request (long polls): added to timeout
    # False: a success is the body itself (a message's media), given to `parse` as bytes.
    envelope: bool = True


@dataclass(frozen=True)
class Pages(Generic[T]):
    """A list over pages: `call` gets one page's data; `items` are its records; `follow`
    gives the query parameters of the next page, or None at the end."""

    call: Call[Any]
    items: Callable[[Any], Iterable[T]]
    follow: Callable[[Any], Mapping[str, Any] | None]
    # A stream: a service out of reach (after the retries) is waited for, never the end.
    endless: bool = False


@dataclass(frozen=True)
class Send:
    request: httpx.Request


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class Emit:
    item: Any


Step = Send | Sleep | Emit
Reply = httpx.Response | httpx.TransportError | None
Plan = Generator[Step, Reply, T]


def backoff(attempt: int) -> float:
    """Exponential from 0.5 s to 8 s: each wait between its step (0.5 s, 1 s, 2 s…) and
    twice that, never past 8 s. The jitter keeps clients that failed together from all
    coming back together; no wait is shorter than 0.5 s."""
    step = BACKOFF_FIRST * 2.0**attempt
    return min(BACKOFF_MAX, random.uniform(step, 2 * step))


def retry_after(response: httpx.Response) -> float | None:
    """The answer's Retry-After in seconds (a number or an HTTP date), at most 60 s."""
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), RETRY_AFTER_MAX)


def api_error(response: httpx.Response) -> errors.ApiError:
    """The exception of an error answer (an envelope, or whatever a proxy sent)."""
    status = response.status_code
    envelope: Any = None
    with contextlib.suppress(ValueError):  # a proxy's HTML page: no envelope to read
        envelope = loads(response.content)
    cls = errors.error_class(status)
    request_id = response.headers.get("x-request-id")
    wait = retry_after(response)
    if not isinstance(envelope, dict) or "errorCode" not in envelope:
        message = response.reason_phrase or "error"
        return cls(status, None, message, request_id=request_id, retry_after=wait)
    data = envelope.get("data")
    found = data.get("errors") if isinstance(data, dict) else None
    return cls(
        status,
        envelope.get("errorCode"),
        str(envelope.get("message") or ""),
        errors=found if isinstance(found, list) else None,
        data=data,
        request_id=request_id,
        retry_after=wait,
    )


class Engine:
    """The state the plans share: where the service is, the key, the workspace (looked up
    once when not given) and the retry settings."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace_id: str | None,
        *,
        timeout: float,
        max_retries: int,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = checked_key(api_key)
        self.workspace_id = workspace_id
        self.timeout = timeout
        self.max_retries = max_retries

    # -- plans -------------------------------------------------------------------------

    def call(self, call: Call[T]) -> Plan[T]:
        workspace = yield from self._workspace(call)
        request = self._request(call, workspace)
        response = yield from self._send(request)
        if not response.is_success:
            raise api_error(response)
        if not call.envelope:
            return call.parse(Answer(response.content, response.headers))
        try:
            envelope = loads(response.content)
        except ValueError as exc:
            raise _unreadable(response, "the answer is not JSON") from exc
        try:
            return call.parse(Answer(envelope.get("data"), response.headers))
        except (AttributeError, KeyError, TypeError, IndexError) as exc:
            # A success of another shape (a proxy's, a wrong base_url): an ApiError too.
            raise _unreadable(response, "the answer is not the envelope this call expects") from exc

    def pages(self, pages: Pages[T]) -> Plan[None]:
        call = pages.call
        outage = 0
        while True:
            try:
                data = yield from self.call(call)
            except (errors.ConnectionFailed, errors.ServerError, errors.RateLimited):
                if not pages.endless:
                    raise
                # A restart or an outage: the same page is asked again, ever more slowly,
                # up to BACKOFF_MAX apart; nothing is skipped (the feed has no gaps).
                yield Sleep(backoff(min(outage, 4)))
                outage += 1
                continue
            outage = 0
            for item in pages.items(data):
                yield Emit(item)
            follow = pages.follow(data)
            if follow is None:
                return
            call = replace(call, params={**call.params, **follow})

    # -- steps -------------------------------------------------------------------------

    def _workspace(self, call: Call[Any]) -> Plan[str | None]:
        if call.workspace == "none":
            return None
        if self.workspace_id is None:
            if call.workspace == "if_known":
                found = yield from self._only_workspace()
                return found
            found = yield from self._only_workspace()
            if found is None:
                raise errors.WorkspaceNotChosen(
                    "no workspace_id given and the account has more than one workspace, or "
                    "none: pass workspace_id= to the client"
                )
        return self.workspace_id

    def _only_workspace(self) -> Plan[str | None]:
        """The account's one workspace, kept as the client's; None when it has several."""
        # An error answer of the look-up is raised as it is (a wrong key: Unauthorized):
        # the workspace is not the caller's to choose then, the request is refused.
        lookup = Call("GET", "/api/workspace", data_of, workspace="none")
        listed = yield from self.call(lookup)
        found = [w["id"] for w in listed["data"]]
        if len(found) != 1:
            return None
        self.workspace_id = found[0]
        return self.workspace_id

    def _request(self, call: Call[Any], workspace: str | None) -> httpx.Request:
        headers = {
            "authorization": f"Bearer {self.api_key}",
            "accept": "application/json",
            "user-agent": f"chatcrm-client/{VERSION}",
            **call.headers,
        }
        params = {k: query_value(v) for k, v in call.params.items() if v is not None}
        if workspace is not None:
            headers["x-workspace-id"] = workspace
            if call.workspace == "query":
                params["workspaceId"] = workspace
        content = None
        if call.json is not None:
            content = dumps(call.json)
            headers["content-type"] = "application/json"
        if call.method == "POST":
            # The same key on every attempt: the service replays the first answer, so a
            # retried create never creates twice.
            headers.setdefault("idempotency-key", str(uuid.uuid4()))
        timeout = httpx.Timeout(self.timeout + call.wait)
        path = call.path
        if workspace is not None:  # `{workspace}` in a path: the client's workspace
            path = path.replace("{workspace}", quote(workspace, safe=""))
        return httpx.Request(
            call.method,
            self.base_url + path,
            params=params,
            headers=headers,
            content=content,
            extensions={"timeout": timeout.as_dict()},
        )

    def _send(self, request: httpx.Request) -> Plan[httpx.Response]:
        """The request, sent again after a connection error or a passing error status.

        Written here rather than taken from httpx: its transports retry failed connects
        only, with no backoff, statuses or Retry-After; and one loop here serves the sync
        and the async client alike."""
        attempt = 0
        while True:
            reply = yield Send(request)
            if isinstance(reply, httpx.TransportError):
                unsure = _may_have_arrived(reply) and not _repeatable(request)
                if attempt >= self.max_retries or not _retryable(reply) or unsure:
                    # httpx's text may quote a header: never the key's.
                    text = str(reply).replace(self.api_key, "…")
                    if unsure:
                        text += (
                            " (the request may have been applied: read the record before "
                            "sending it again)"
                        )
                    raise errors.ConnectionFailed(
                        f"{request.method} {request.url.path}: {type(reply).__name__}: {text}"
                    ) from reply
                delay = backoff(attempt)
            else:
                assert reply is not None
                if reply.status_code not in RETRY_STATUSES or attempt >= self.max_retries:
                    return reply
                told = retry_after(reply)
                delay = backoff(attempt) if told is None else told
            attempt += 1
            yield Sleep(delay)


def _unreadable(response: httpx.Response, why: str) -> errors.ApiError:
    """A success the call cannot read."""
    return errors.ApiError(
        response.status_code, None, why, request_id=response.headers.get("x-request-id")
    )


def checked_key(api_key: str) -> str:
    """The key as a header can carry it: surrounding blanks (the line end of a key read from
    a file) dropped; anything else not printable ASCII refused here, without showing it,
    rather than by the HTTP library, whose error would quote the header."""
    key = api_key.strip() if isinstance(api_key, str) else ""
    if not key or not key.isascii() or not key.isprintable() or " " in key:
        raise ValueError(
            "api_key must be a chatcrm API key: printable ASCII without spaces (ccrm_…)"
        )
    return key


def _may_have_arrived(exc: httpx.TransportError) -> bool:
    """Whether the request may have reached the service: anything but a connection never
    made (or never taken from the pool)."""
    return not isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def _repeatable(request: httpx.Request) -> bool:
    """Whether sending the request again after it may have been applied answers as the
    first time would have: a read, a POST (its Idempotency-Key replays the first answer),
    a PUT without `If-Match` (the same values again). A DELETE would answer 404, and a
    conditional update 412, about the caller's own change."""
    if request.method == "DELETE":
        return False
    return not (request.method in ("PUT", "PATCH") and "if-match" in request.headers)


def _retryable(exc: httpx.TransportError) -> bool:
    """A failure of the connection or of the wait, not a request httpx could not make."""
    return isinstance(exc, httpx.TimeoutException | httpx.NetworkError | httpx.RemoteProtocolError)
