"""Where questions run: a tiny executor interface, with a bounded thread pool today.

Each question is an independent task (`fn(item) -> record`) whose result comes back to the
caller, which alone writes the results file. A cluster engine (e.g. Ray's `ray.util.
ActorPool.map_unordered`) can implement the same one method without touching systems or metrics.
"""

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Protocol, TypeVar

from rlm_docs.errors import ConfigError

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs `fn` over `items`, yielding results as they finish (any order)."""

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]: ...


class ThreadExecutor:
    """At most `workers` tasks in flight; tasks not yet started are cancelled on interrupt."""

    def __init__(self, workers: int = 4) -> None:
        if workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {workers}")
        self.workers = workers

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        pending = iter(items)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="rlm-eval")
        running: set[Future[R]] = set()
        try:
            for item in pending:
                running.add(pool.submit(fn, item))
                if len(running) >= self.workers:
                    break
            while running:
                done, running = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield future.result()
                    nxt = next(pending, None)
                    if nxt is not None:
                        running.add(pool.submit(fn, nxt))
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
