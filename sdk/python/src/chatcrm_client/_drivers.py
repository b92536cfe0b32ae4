"""The I/O of the two clients: each carries out the steps of a plan (_engine.py) with its
own httpx client. Nothing else differs between `Client` and `AsyncClient`."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, TypeVar

import httpx

from chatcrm_client._engine import Emit, Engine, Plan, Reply, Send

T = TypeVar("T")


class SyncDriver:
    def __init__(self, engine: Engine, http: httpx.Client) -> None:
        self.engine = engine
        self.http = http

    def _next(self, plan: Plan[Any]) -> tuple[bool, Any]:
        """Carry out steps until the plan emits an item (True, item) or ends (False, its
        result)."""
        reply: Reply = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as stop:
                return False, stop.value
            reply = None
            if isinstance(step, Send):
                try:
                    reply = self.http.send(step.request)
                except httpx.TransportError as exc:
                    reply = exc
            elif isinstance(step, Emit):
                return True, step.item
            else:
                time.sleep(step.seconds)

    def run(self, plan: Plan[T]) -> T:
        emitted, value = self._next(plan)
        assert not emitted, "a single call emitted an item"
        result: T = value
        return result

    def iterate(self, plan: Plan[None]) -> Iterator[Any]:
        while True:
            emitted, item = self._next(plan)
            if not emitted:
                return
            yield item


class AsyncDriver:
    def __init__(self, engine: Engine, http: httpx.AsyncClient) -> None:
        self.engine = engine
        self.http = http

    async def _next(self, plan: Plan[Any]) -> tuple[bool, Any]:
        reply: Reply = None
        while True:
            try:
                step = plan.send(reply)
            except StopIteration as stop:
                return False, stop.value
            reply = None
            if isinstance(step, Send):
                try:
                    reply = await self.http.send(step.request)
                except httpx.TransportError as exc:
                    reply = exc
            elif isinstance(step, Emit):
                return True, step.item
            else:
                await asyncio.sleep(step.seconds)

    async def run(self, plan: Plan[T]) -> T:
        emitted, value = await self._next(plan)
        assert not emitted, "a single call emitted an item"
        result: T = value
        return result

    async def iterate(self, plan: Plan[None]) -> AsyncIterator[Any]:
        while True:
            emitted, item = await self._next(plan)
            if not emitted:
                return
            yield item
