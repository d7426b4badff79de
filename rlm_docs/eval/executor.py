"""Where questions run: a tiny executor interface, a bounded thread pool, and Ray.

Each question is an independent task (`fn(item) -> record`) whose result comes back to the
caller, which alone writes the results file. `ThreadExecutor` runs the tasks in this process;
`RayExecutor` (`rlm_docs.eval.ray_executor`, the optional `ray` extra) on a Ray cluster. An
executor with `remote = True` runs `fn` in other processes, possibly on other machines: `fn`
must then be picklable and must not write the caller's files itself.
"""

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from rlm_docs.errors import ConfigError

if TYPE_CHECKING:  # the `ray` extra is optional: imported only where it is used
    from rlm_docs.eval.ray_executor import RayExecutor

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Runs `fn` over `items`, yielding results as they finish (any order)."""

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]: ...


EXECUTORS = ("thread", "ray")


class ThreadExecutor:
    """At most `workers` tasks in flight; tasks not yet started are cancelled on interrupt."""

    remote = False

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


def ray_executor_class() -> "type[RayExecutor]":
    """`RayExecutor`; ConfigError when the `ray` extra is not installed, so a caller (a sweep)
    can refuse before it writes anything."""
    try:
        from rlm_docs.eval.ray_executor import RayExecutor
    except ModuleNotFoundError as exc:
        if exc.name != "ray":
            raise
        raise ConfigError(
            '--executor ray needs Ray, which is not installed: pip install -e ".[ray]"'
        ) from None
    return RayExecutor


def make_executor(settings: Any) -> Executor:
    """The executor `settings.executor` names (`EvalSettings` or anything with its executor
    fields); ConfigError for an unknown name, or for `ray` without the `ray` extra."""
    if settings.executor == "thread":
        if settings.ray_address or settings.ship_corpus:
            raise ConfigError("--ray-address and --ray-ship-corpus need --executor ray")
        return ThreadExecutor(settings.workers)
    if settings.executor == "ray":
        return ray_executor_class()(
            settings.workers, address=settings.ray_address, ship_corpus=settings.ship_corpus
        )
    raise ConfigError(f"--executor {settings.executor!r}: expected one of {', '.join(EXECUTORS)}")
