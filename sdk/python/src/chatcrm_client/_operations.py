"""How one resource method serves both clients.

A resource method is written once and returns a description (`Call` or `Pages`). The
decorators below make it, on a resource of the sync client, a method that runs the call
and returns its result (or an iterator over a list); on a resource of the async client, a
coroutine function (or an async iterator). Their `__get__` overloads tell type checkers
the same: `Client().contacts.get` is `(id: str) -> Contact`,
`AsyncClient().contacts.get` is `(id: str) -> Coroutine[..., Contact]`.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from chatcrm_client._drivers import AsyncDriver, SyncDriver
from chatcrm_client._engine import Call, Engine, Pages

P = ParamSpec("P")
T = TypeVar("T")


class Sync:
    """The mode of the blocking client's resources."""


class Async:
    """The mode of the asyncio client's resources."""


M = TypeVar("M", Sync, Async)


def _public_signature(describe: Callable[..., Any]) -> inspect.Signature:
    """The signature callers see: without `self`, and without the description's type."""
    signature = inspect.signature(describe)
    parameters = list(signature.parameters.values())[1:]
    return signature.replace(parameters=parameters, return_annotation=inspect.Signature.empty)


def _bind(describe: Callable[..., Any], bound: Callable[..., Any]) -> Callable[..., Any]:
    functools.update_wrapper(bound, describe)
    del bound.__wrapped__  # type: ignore[attr-defined]  # help() shows __signature__ instead
    bound.__signature__ = _public_signature(describe)  # type: ignore[attr-defined]
    return bound


class Resource(Generic[M]):
    """A group of operations, bound to one client's driver."""

    def __init__(self, driver: SyncDriver | AsyncDriver) -> None:
        self._driver = driver

    @property
    def _engine(self) -> Engine:
        return self._driver.engine


class operation(Generic[P, T]):  # lower case: used as a decorator, like `property`
    """A method that makes one call (see the module's docstring)."""

    def __init__(self, describe: Callable[Concatenate[Any, P], Call[T]]) -> None:
        self.describe = describe
        functools.update_wrapper(self, describe)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, obj: Resource[Sync], owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(
        self, obj: Resource[Async], owner: type[Any]
    ) -> Callable[P, Coroutine[Any, Any, T]]: ...
    def __get__(self, obj: Resource[Any] | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        describe, driver = self.describe, obj._driver

        def bound(*args: Any, **kwargs: Any) -> Any:
            return driver.run(driver.engine.call(describe(obj, *args, **kwargs)))

        return _bind(describe, bound)


class listing(Generic[P, T]):  # lower case: used as a decorator, like `property`
    """A method that lists records over pages: an iterator (async iterator) that asks for
    the next page when it needs it."""

    def __init__(self, describe: Callable[Concatenate[Any, P], Pages[T]]) -> None:
        self.describe = describe
        functools.update_wrapper(self, describe)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type[Any]) -> Self: ...
    @overload
    def __get__(self, obj: Resource[Sync], owner: type[Any]) -> Callable[P, Iterator[T]]: ...
    @overload
    def __get__(self, obj: Resource[Async], owner: type[Any]) -> Callable[P, AsyncIterator[T]]: ...
    def __get__(self, obj: Resource[Any] | None, owner: type[Any]) -> Any:
        if obj is None:
            return self
        describe, driver = self.describe, obj._driver

        def bound(*args: Any, **kwargs: Any) -> Any:
            return driver.iterate(driver.engine.pages(describe(obj, *args, **kwargs)))

        return _bind(describe, bound)
