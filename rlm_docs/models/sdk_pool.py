"""A free list of SDK clients, one per call in flight, so concurrent calls never share an HTTP
connection pool.

One SDK client shared by every question thread means one httpx connection pool: each request
takes the pool's lock and scans every connection in it (expiry checks with a `poll` per idle
socket, then an assignment pass), twice per request. At 64 questions in flight that is 64
connections scanned 128 times per call, under one lock: a tenth of the host's CPU in
`benchmarks/bench_concurrency.py`. Leasing a whole client per call instead gives each call a
pool holding the one connection it reuses (keep-alive is kept: a returned client is the next
one leased), and the list grows only to the most calls ever in flight at once.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

Client = TypeVar("Client")


class SdkPool(Generic[Client]):
    """`with pool.lease() as sdk:` an idle client (the most recently returned), or a new one
    from `factory` when every client is busy. The first is built at once, so a bad setting
    (a malformed base URL) fails where the client is configured, not at its first call."""

    def __init__(self, factory: Callable[[], Client]) -> None:
        self._factory = factory
        self._idle: list[Client] = [factory()]
        self._lock = threading.Lock()
        self.created = 1  # clients made so far: the most calls that were in flight at once

    @contextmanager
    def lease(self) -> Iterator[Client]:
        with self._lock:
            client = self._idle.pop() if self._idle else None
            if client is None:
                self.created += 1
        if client is None:
            client = self._factory()
        try:
            yield client
        finally:
            with self._lock:
                self._idle.append(client)
