"""Two awaitables at once, with errors that come out as themselves.

anyio's task groups wrap every failure in an ExceptionGroup; callers here expect the
error itself (an EmbeddingError in recall, LeaseLost in curation).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

A = TypeVar("A")
B = TypeVar("B")


async def nothing() -> None:
    return None


async def side_by_side(first: Callable[[], Awaitable[A]], second: Callable[[], Awaitable[B]]) -> tuple[A, B]:
    """Both results; if either fails, the first failure is raised after both have ended."""
    results: list[Any] = [None, None]
    errors: list[Exception] = []

    async def run(index: int, fn: Callable[[], Awaitable[Any]]) -> None:
        try:
            results[index] = await fn()
        except Exception as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 0, first)
        tg.start_soon(run, 1, second)
    if errors:
        raise errors[0]
    return results[0], results[1]
