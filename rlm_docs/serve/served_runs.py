"""Running `RLM.ask` for a network caller: in a worker thread, cancellable, reporting each turn.

Servers (`rlm-docs serve`, `rlm-docs mcp`) answer from an event loop while a run blocks for
seconds to minutes, so each run gets a thread of a bounded pool. A caller that goes away (or a
server shutting down) sets the run's cancel event; every model call of the run goes through a
`CancellableClient`, which then refuses with `RunCancelled` (a `ModelError`), so the engine ends
the run the way it ends any model failure (`stop_reason="error"`, sandbox closed, trajectory
written) at its next model call instead of spending the rest of the budget for nobody.
"""

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM, Prediction
from rlm_docs.engine.records import Iteration
from rlm_docs.errors import ModelError
from rlm_docs.governor import Budget, Ledger
from rlm_docs.models import Client, Completion

log = logging.getLogger("rlm_docs.serve")


class RunCancelled(ModelError):
    """The caller of a served run went away (or the server is shutting down)."""


class CancellableClient:
    """A client that refuses every call once `cancel` is set (attributes pass through)."""

    def __init__(self, inner: Client, cancel: threading.Event, why: Callable[[], str]) -> None:
        self._inner = inner
        self._cancel = cancel
        self._why = why
        self.spec = inner.spec
        self.backend = inner.backend
        self.model = inner.model

    def __getattr__(self, name: str) -> Any:  # e.g. `price`, read by the governor
        return getattr(self._inner, name)

    def complete(self, messages: list[dict], **params: Any) -> Completion:
        if self._cancel.is_set():
            raise RunCancelled(f"run cancelled: {self._why()}")
        return self._inner.complete(messages, **params)


@dataclass
class ServedRunRequest:
    """One question with the clients and budget it runs with."""

    question: str
    model: Client
    sub_model: Client
    budget: Budget
    on_turn: Callable[[int, Iteration], None] | None = None


@dataclass
class ServedRun:
    """A submitted run: its future, cancel event and the reason it was cancelled."""

    id: str
    future: Future
    cancel: threading.Event = field(default_factory=threading.Event)
    reason: str = ""
    started: float = field(default_factory=time.monotonic)

    def stop(self, reason: str) -> None:
        """Ask the run to end at its next model call (no-op once it has finished)."""
        if not self.future.done() and not self.cancel.is_set():
            self.reason = reason
            self.cancel.set()
            log.warning("run %s: cancelling (%s)", self.id, reason)


class ServedRunPool:
    """At most `max_runs` runs at once over one corpus; `try_start` refuses beyond that.

    A run keeps its slot until its thread ends, also when its caller has gone, so the limit
    bounds what the host actually spends (sandboxes, model calls), not just open requests.
    """

    def __init__(
        self,
        corpus: Corpus,
        *,
        max_runs: int,
        prompt: str = "docs",
        log_dir: Any = None,
        ledger: Ledger | None = None,
    ) -> None:
        self.corpus = corpus
        self.max_runs = max_runs
        self.prompt = prompt
        self.log_dir = log_dir
        self.ledger = ledger if ledger is not None else Ledger()
        self.runs: dict[str, ServedRun] = {}
        self.durations: list[float] = []
        self._pool = ThreadPoolExecutor(max_workers=max_runs, thread_name_prefix="rlm-run")
        self._lock = threading.Lock()
        self._count = 0

    def retry_after(self) -> int:
        """Seconds a refused caller should wait: the median of recent run times (>= 1)."""
        recent = sorted(self.durations[-20:])
        return max(1, round(recent[len(recent) // 2])) if recent else 5

    def try_start(self, req: ServedRunRequest) -> ServedRun | None:
        """Start `req` in a worker thread, or None when `max_runs` runs are in flight."""
        with self._lock:
            if len(self.runs) >= self.max_runs:
                return None
            self._count += 1
            run_id = f"r{self._count}"
            cancel = threading.Event()
            holder: dict[str, ServedRun] = {}
            future = self._pool.submit(self._execute, req, cancel, lambda: holder["run"].reason)
            run = ServedRun(run_id, future, cancel)
            holder["run"] = run
            self.runs[run_id] = run
        future.add_done_callback(lambda f: self._finished(run))
        log.info("run %s: started: %.200r", run_id, req.question)
        return run

    def _execute(
        self, req: ServedRunRequest, cancel: threading.Event, why: Callable[[], str]
    ) -> Prediction:
        rlm = RLM(
            self.corpus,
            model=CancellableClient(req.model, cancel, why),
            sub_model=CancellableClient(req.sub_model, cancel, why),
            budget=req.budget,
            prompt=self.prompt,
            log_dir=self.log_dir,
            ledger=self.ledger,
            on_turn=req.on_turn,
        )
        return rlm.ask(req.question)

    def _finished(self, run: ServedRun) -> None:
        elapsed = time.monotonic() - run.started
        with self._lock:
            self.runs.pop(run.id, None)
            self.durations.append(elapsed)
        exc = None if run.future.cancelled() else run.future.exception()
        if run.future.cancelled():
            log.warning("run %s: cancelled before it started", run.id)
        elif exc is not None:
            log.error(
                "run %s: failed after %.1fs: %s: %s", run.id, elapsed, type(exc).__name__, exc
            )
        elif run.cancel.is_set():
            pred = run.future.result()
            log.warning(
                "run %s: cancelled after %.1fs (%s), stop: %s",
                run.id,
                elapsed,
                run.reason,
                pred.stop_reason,
            )
        else:
            pred = run.future.result()
            log.info("run %s: finished in %.1fs, stop: %s", run.id, elapsed, pred.stop_reason)

    def stop_all(self, reason: str) -> None:
        """Cancel every run in flight (server shutdown)."""
        with self._lock:
            runs = list(self.runs.values())
        for run in runs:
            run.stop(reason)

    def close(self) -> None:
        """Wait for the worker threads to end (cancelled runs end at their next model call)."""
        self._pool.shutdown(wait=True)
