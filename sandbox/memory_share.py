"""One cap on the memory of every sandbox worker of this host process together.

Each worker's address space is limited (RLIMIT_AS, `Limits.memory_mb`, 6 GB by default), but
nothing bounded their sum: `serve` with four runs, each with a root and a child sandbox, could
reserve ~48 GB on a 23 GB machine, and the kernel's OOM killer would then pick the biggest
process, often the host itself. So:

- the workers of this process share `HOST_SHARE` of the machine's memory (the smaller of
  physical memory and the cgroup limit), or `RLM_DOCS_SANDBOX_MEMORY_MB` when set;
- a worker is offered `min(Limits.memory_mb, cap / live workers)`, raised to what it needs (the
  interpreter and the mapped corpus, which it measures after the fork: `confine`), and the live
  workers whose limit is above the new share are lowered to it, or to their own need, so the
  sum stays within the cap as long as the share covers each worker's need. A running worker
  lowers its own limit before its next request (the host may not change the limits of a
  worker running as another uid without CAP_SYS_RESOURCE, which containers withhold), so a
  cell already running keeps its old limit until it ends;
- workers set their `oom_score_adj` to 1000 (`confine`), so when memory runs out anyway, the
  kernel kills a worker (its question gets an error) rather than the host.
"""

import contextlib
import os
import threading
from pathlib import Path

from sandbox.errors import ConfigError

HOST_SHARE = 0.75  # of the machine's memory, for all sandbox workers of one host process
ENV = "RLM_DOCS_SANDBOX_MEMORY_MB"
_CGROUP_MAX = Path("/sys/fs/cgroup/memory.max")


class Reservation:
    """One worker's share: its address-space limit in MB, its pid and need once started."""

    def __init__(self, limit_mb: int) -> None:
        self.limit_mb = limit_mb
        self.pid: int | None = None
        self.need_mb = 0  # what the worker maps once loaded (known when it has started)


_lock = threading.Lock()
_live: list[Reservation] = []


def machine_mb() -> int:
    """The memory this process may use: physical memory, or a smaller cgroup (v2) limit."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20
    with contextlib.suppress(OSError, ValueError):
        limit = _CGROUP_MAX.read_text().strip()
        if limit != "max":
            total = min(total, int(limit) // 2**20)
    return total


def cap_mb() -> int:
    """The sandbox memory of this host process: `RLM_DOCS_SANDBOX_MEMORY_MB`, else HOST_SHARE
    of `machine_mb()`; ConfigError naming the variable when it is not a positive integer."""
    value = os.environ.get(ENV, "").strip() or None
    if value is None:
        return int(HOST_SHARE * machine_mb())
    if not value.isdigit() or int(value) <= 0:
        raise ConfigError(f"{ENV}={value}: expected a positive whole number of megabytes")
    return int(value)


def reserve(wanted_mb: int) -> Reservation:
    """The share offered to a worker about to start, asking `wanted_mb` (see the module
    docstring); the live workers above it are lowered to it (or to their need)."""
    with _lock:
        limit = min(wanted_mb, cap_mb() // (len(_live) + 1))
        for other in _live:
            other.limit_mb = min(other.limit_mb, max(limit, other.need_mb))
        reservation = Reservation(limit)
        _live.append(reservation)
        return reservation


def started(reservation: Reservation, pid: int, limit_mb: int, need_mb: int) -> None:
    """The worker of `reservation` runs as `pid` with `limit_mb` (its share raised to its
    `need_mb`), or less if a worker started meanwhile and lowered its share."""
    with _lock:
        reservation.pid, reservation.need_mb = pid, need_mb
        reservation.limit_mb = min(limit_mb, max(reservation.limit_mb, need_mb))


def release(reservation: Reservation) -> None:
    """The worker is gone: its share is free for the next one."""
    with _lock:
        if reservation in _live:
            _live.remove(reservation)


def live_mb() -> dict[int | None, int]:
    """{worker pid: address-space limit in MB} of the live workers (None: still starting)."""
    with _lock:
        return {r.pid: r.limit_mb for r in _live}
