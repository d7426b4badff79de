"""Connection guards for the HTTP servers (`serve`, `mcp --transport http`): what uvicorn does
not bound by itself.

A slowloris client opens many connections and sends each request head a byte at a time, or
never: uvicorn waits for a head without a deadline, so each connection holds a file descriptor
for good. Past the process's open-file limit `accept()` fails, no real client gets in, and
asyncio logs a traceback for every failed accept (about 100 MB in a minute). So:

- a request head (request line and headers) must arrive within `header_timeout_s` of the
  connection opening, or of the previous response on a kept-alive connection; else it closes;
- at most `max_connections` connections are open, below the open-file limit (and at most
  ACCEPT_BATCH are accepted at a time): a connection past the cap closes the oldest one still
  waiting for its head (an attacker's half-open sockets cannot lock a real client out), or
  itself when every connection is serving a request;
- failed accepts are logged at most once per `ACCEPT_LOG_EVERY_S`, one line without the
  traceback, with how many were left out.
"""

import asyncio
import logging
import resource
import time
from dataclasses import dataclass
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from rlm_docs.errors import ConfigError

HEADER_TIMEOUT_S = 10.0
ACCEPT_LOG_EVERY_S = 10.0
# File descriptors kept free for everything but client connections (corpus files, sandbox
# pipes, the log, Python's own).
FD_RESERVE = 64
# Connections asyncio accepts in one event-loop turn (uvicorn's `backlog`, also the kernel's
# listen queue). The cap is enforced as each connection starts, after the turn that accepted
# it: with uvicorn's default of 2,048 one burst of half-open sockets ran out of descriptors
# before any was counted. A quarter of the reserve keeps the cap plus the few turns whose
# connections are accepted but not yet started below the limit.
ACCEPT_BATCH = FD_RESERVE // 4


def open_file_limit() -> int:
    """The soft RLIMIT_NOFILE of this process."""
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connection_cap(requested: int | None) -> int:
    """`requested`, or half the open-file limit (at most 1,000); ConfigError when `requested`
    would not leave FD_RESERVE descriptors below the limit."""
    limit = open_file_limit()
    if requested is None:
        return max(16, min(1000, limit // 2))
    if requested > limit - FD_RESERVE:
        raise ConfigError(
            f"--max-connections {requested}: must leave {FD_RESERVE} of this process's "
            f"{limit} open files free (at most {limit - FD_RESERVE}; raise `ulimit -n` first)"
        )
    return requested


@dataclass(frozen=True)
class Guards:
    """The limits a server's connections live under."""

    max_connections: int
    header_timeout_s: float = HEADER_TIMEOUT_S


class GuardedH11(H11Protocol):
    """uvicorn's h11 protocol with a request-head deadline and a connection cap."""

    guards: Guards = Guards(1000)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._seen_cycle: Any = None
        self._head_timer: asyncio.TimerHandle | None = None
        self._wait_for_head()
        open_now = [c for c in self.connections if not c.transport.is_closing()]
        if len(open_now) > self.guards.max_connections:
            waiting = [c for c in open_now if isinstance(c, GuardedH11) and c.waiting_since]
            oldest = min(waiting, key=lambda c: c.waiting_since or 0.0)  # self waits too
            oldest.waiting_since = None
            oldest.transport.close()  # leaves `connections` a loop turn later

    def _wait_for_head(self) -> None:
        self.waiting_since: float | None = time.monotonic()
        self._cancel_timer()
        self._head_timer = self.loop.call_later(self.guards.header_timeout_s, self._too_slow)

    def _cancel_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _check_head(self) -> None:
        """A new request cycle means its head arrived: the deadline is met."""
        if self.cycle is not None and self.cycle is not self._seen_cycle:
            self._seen_cycle = self.cycle
            self.waiting_since = None
            self._cancel_timer()

    def _too_slow(self) -> None:
        if self.waiting_since is not None and not self.transport.is_closing():
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._check_head()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._wait_for_head()
            self._check_head()  # a pipelined request already parsed

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_timer()
        self.waiting_since = None
        super().connection_lost(exc)


def guarded_protocol(guards: Guards) -> type[GuardedH11]:
    """The protocol class to pass as uvicorn's `http` (it instantiates the class itself)."""
    return type("Guarded", (GuardedH11,), {"guards": guards})


class AcceptErrorFilter(logging.Filter):
    """Lets one `socket.accept() out of system resource` record through per `every_s`, without
    its traceback, saying how many were left out since the last one."""

    def __init__(self, every_s: float = ACCEPT_LOG_EVERY_S) -> None:
        super().__init__()
        self.every_s = every_s
        self.last = -float("inf")
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("socket.accept() out of system resource"):
            return True
        now = time.monotonic()
        if now - self.last < self.every_s:
            self.dropped += 1
            return False
        reason = record.exc_info[1] if record.exc_info else None
        record.msg = f"accept failed: {reason or record.msg}" + (
            f" ({self.dropped} more in the last {self.every_s:.0f} s)" if self.dropped else ""
        )
        record.args, record.exc_info, record.exc_text = (), None, None
        self.last, self.dropped = now, 0
        return True


def server_config(app: Any, guards: Guards, **options: Any) -> Any:
    """A `uvicorn.Config` for `app` under `guards`, with accept errors rate-limited."""
    import uvicorn

    asyncio_log = logging.getLogger("asyncio")
    if not any(isinstance(f, AcceptErrorFilter) for f in asyncio_log.filters):
        asyncio_log.addFilter(AcceptErrorFilter())
    return uvicorn.Config(app, http=guarded_protocol(guards), backlog=ACCEPT_BATCH, **options)
