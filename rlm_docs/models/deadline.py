"""The wall-clock deadline of the model call in progress, visible to retries and HTTP clients.

The governor knows when a question's wall budget ends; the retry loop and the SDK request
timeout deep inside a backend need it too. A context variable carries it down the call stack
without widening every client's signature: `Governor.call` sets it around `client.complete`,
`call_with_retries` stops retrying past it and gives each attempt only the time that is left.
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("rlm_docs_call_deadline", default=None)


@contextmanager
def call_deadline(deadline: float | None) -> Iterator[None]:
    """Calls made inside the block must end by `deadline` (a `time.monotonic()` value)."""
    token = _DEADLINE.set(deadline)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def seconds_left() -> float | None:
    """Seconds until the current call's deadline (may be <= 0), or None when there is none."""
    deadline = _DEADLINE.get()
    return None if deadline is None else deadline - time.monotonic()
