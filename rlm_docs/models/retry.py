"""Retries done by us, not the SDKs, so every attempt is counted, bounded and testable.

Exponential backoff with full jitter (AWS style): attempt n waits uniform(0, min(cap, base·2ⁿ⁻¹)),
unless the server said how long via `Retry-After` / `retry-after-ms`, which is honoured.

A retry is announced as it happens (a warning on the `rlm_docs.models.retry` logger, with the
attempt number in `record.attempt`), so a slow provider is never silent. Within a wall-time
deadline (`rlm_docs.models.deadline`) each attempt gets only the time left as its timeout and no
attempt starts, and no backoff sleeps, past the deadline.
"""

import logging
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from rlm_docs.errors import ConfigError
from rlm_docs.models.deadline import seconds_left
from rlm_docs.models.errors import ModelUnavailableError

T = TypeVar("T")
log = logging.getLogger(__name__)
# Silent unless a caller installs a handler (the CLI's `retry_notices`): logging's last-resort
# handler would otherwise print server text, unsanitized, into any program using the library.
log.addHandler(logging.NullHandler())


class TransientError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection drop, unparseable body)."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to retry: attempts, backoff base/cap, and a total time bound (seconds)."""

    max_attempts: int = 6
    base_delay_s: float = 0.5
    max_delay_s: float = 30.0
    max_total_s: float = 300.0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ConfigError(f"retry max_attempts must be >= 1, got {self.max_attempts}")
        for name in ("base_delay_s", "max_delay_s", "max_total_s"):
            if getattr(self, name) < 0:
                raise ConfigError(f"retry {name} must be >= 0, got {getattr(self, name)}")

    def backoff(self, attempt: int, retry_after_s: float | None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        if retry_after_s is not None:
            return max(retry_after_s, 0.0)
        return random.uniform(0.0, min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)))


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Server-requested wait from `retry-after-ms` or `Retry-After` (seconds), if any."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return float(value) / scale
            except ValueError:
                continue  # an HTTP-date Retry-After: fall back to our own backoff
    return None


def call_with_retries(
    fn: Callable[[float | None], T], policy: RetryPolicy, spec: str
) -> tuple[T, int]:
    """Run `fn(timeout_s)` until it succeeds; returns (result, attempts). `timeout_s` is the
    time left before the call's deadline (None: no deadline). Non-transient errors pass through.
    """
    start = time.monotonic()
    attempt = 0
    while True:
        attempt += 1
        left = seconds_left()
        if left is not None and left <= 0:
            raise ModelUnavailableError(
                f"{spec}: the wall-time budget ran out before attempt {attempt}"
            )
        try:
            return fn(left), attempt
        except TransientError as exc:
            wait = policy.backoff(attempt, exc.retry_after_s)
            elapsed = time.monotonic() - start
            left = seconds_left()
            out_of_time = left is not None and wait >= left
            if attempt >= policy.max_attempts or elapsed + wait > policy.max_total_s or out_of_time:
                why = " (the wall-time budget ends first)" if out_of_time else ""
                raise ModelUnavailableError(
                    f"{spec}: gave up after {attempt} attempt(s) in {elapsed:.1f}s{why} "
                    f"(last error: {exc.reason})"
                ) from None
            log.warning(
                "%s: attempt %d failed (%s); retrying in %.1fs",
                spec,
                attempt,
                exc.reason,
                wait,
                extra={"attempt": attempt},
            )
            policy.sleep(wait)
