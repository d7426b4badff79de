"""`RayExecutor`: an eval's questions on a Ray cluster, one actor per node.

Each alive node, including one that joins while questions still wait, gets one `NodeWorker`
actor that unpickles the task once (for `QuestionTask`: loads the corpus and, on its first
question, the sandbox fork server) and runs up to `workers` questions at once in threads, so a
node's fork server serves every question it runs. Results come back to the driver, which alone
writes the run directory.

Exactly once: a question runs on one actor at a time (Ray's own retries stay off,
`max_task_retries=0`). When its actor or node dies, or its result is lost with the node, the
driver gives the question to another node; a question can therefore run twice but is delivered
once, and the runner records each id once.

Secrets: API keys (`models.factory.secret_env`) go to each actor as a constructor argument,
never in `runtime_env`: Ray's runtime-env agent logs every `runtime_env` it creates verbatim
at INFO (`runtime_env_agent.log`: `Creating runtime env: {"env_vars": ...}`). Only the other
client settings (base URLs, RLM_DOCS_*) travel in `runtime_env={"env_vars": ...}`. Keys go only
to a cluster the user named (`endpoints.cluster_may_get_keys`), and each actor applies the
driver's rule for where its clients may send them.

Corpus: by default every node reads the store at the driver's path (a shared filesystem);
`ship_corpus=True` sends the store once through the object store and each node unpacks it
once (`shipped_store`).
"""

import logging
import os
import socket
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import ray
from ray.exceptions import ObjectLostError, RayActorError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from rlm_docs.errors import ConfigError
from rlm_docs.eval.shipped_store import pack_store, unpack_store
from rlm_docs.models import endpoints
from rlm_docs.models.factory import client_settings, secret_env

T = TypeVar("T")
R = TypeVar("R")

# Times one question may lose its worker (node died, actor killed), and times actors may be
# started on every node, before the run gives up.
MAX_LOSSES = 3
# While questions wait, the cluster is asked this often (seconds) for nodes that joined since
# (an autoscaler's, or `ray start --address` by hand); each gets an actor and takes its share.
NODE_POLL_S = 2.0


class Secrets(dict[str, str]):
    """Environment variables that must not be shown: their repr names them only."""

    def __repr__(self) -> str:
        return f"Secrets({', '.join(f'{k}=***' for k in self)})"


def client_env(address: str | None = None) -> tuple[dict[str, str], Secrets]:
    """(settings for `runtime_env`, secrets for the actors) from this process's environment;
    no secrets for a cluster the user did not name (`endpoints.cluster_may_get_keys`)."""
    secrets = Secrets({k: os.environ[k] for k in secret_env() if os.environ.get(k)})
    if not endpoints.cluster_may_get_keys(address):
        secrets = Secrets()
    return client_settings(), secrets


def secrets_named() -> list[str]:
    """The API key variables set in this process's environment."""
    return [k for k in secret_env() if os.environ.get(k)]


@ray.remote(num_cpus=0, max_restarts=0, max_task_retries=0)
class NodeWorker:
    """Runs one task on one node; a start error is kept and reported by `ready`, so a node
    that cannot read the corpus stops the run with its reason instead of being retried."""

    def __init__(
        self, fn: Any, secrets: Secrets, store: bytes | None, rule: endpoints.KeyRule | None
    ) -> None:
        os.environ.update(secrets)
        endpoints.install(rule)  # the driver's: where keys may go
        self.error: str | None = None
        try:
            if store is not None:
                fn = fn.copy(corpus=unpack_store(store))
            build = getattr(fn, "build", None)
            if build is not None:
                build()
        except Exception as exc:  # noqa: BLE001 - reported to the driver by ready()
            self.error = f"{type(exc).__name__}: {exc}"
        self.fn = fn

    def ready(self) -> tuple[str, str | None]:
        """(this node's id, the start error or None)."""
        return ray.get_runtime_context().get_node_id(), self.error

    def run(self, item: Any) -> Any:
        return self.fn(item)


def _check_reachable(address: str) -> None:
    """ConfigError unless something accepts connections at HOST:PORT (`ray.init` would retry
    an unreachable address for minutes)."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray-address {address}: expected auto or HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ConfigError(
            f"--ray-address {address}: no Ray cluster answers there ({exc.strerror or exc})"
        ) from None


class RayExecutor:
    """One actor per alive Ray node, `workers` questions in flight on each."""

    remote = True

    def __init__(
        self, workers: int = 4, *, address: str | None = None, ship_corpus: bool = False
    ) -> None:
        """Connect to the cluster at `address` (`auto`, `HOST:PORT`; None starts a new local
        Ray, never one found on this machine) unless this process is already connected (then
        that connection is used and kept)."""
        if workers < 1:
            raise ConfigError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self.ship_corpus = ship_corpus
        self.address = address
        if secrets_named() and not endpoints.cluster_may_get_keys(address):
            print(
                f"warning: API keys are not sent to the Ray cluster at {address}: it was not "
                f"named on the command line or in the environment (allow it with "
                f"--allow-endpoint {address} or {endpoints.ALLOW_ENV}={address})",
                file=sys.stderr,
            )
        self._owns_connection = not ray.is_initialized()
        if self._owns_connection:
            if address not in (None, "auto"):
                _check_reachable(address)
            try:
                ray.init(
                    address=address or "local",
                    include_dashboard=False,
                    log_to_driver=False,
                    logging_level=logging.WARNING,
                    configure_logging=True,
                )
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = address or "a local Ray"
                raise ConfigError(f"--ray-address {where}: cannot connect ({exc})") from None

    def close(self) -> None:
        """Disconnect, if this executor made the connection."""
        if self._owns_connection and ray.is_initialized():
            ray.shutdown()

    def _launch(
        self, fn: Callable[..., Any], store: Any, skip: set[str]
    ) -> dict[Any, tuple[str, Any]]:
        """An actor on every alive node not in `skip`, not waited for: {its `ready()` ref:
        (node id, actor)}."""
        plain, secrets = client_env(self.address)
        starting = {}
        for node in (n["NodeID"] for n in ray.nodes() if n["Alive"]):  # type: ignore[no-untyped-call]
            if node in skip:
                continue
            actor = NodeWorker.options(  # type: ignore[attr-defined]  # added by @ray.remote
                max_concurrency=self.workers,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False),
                runtime_env={"env_vars": plain},
            ).remote(fn, secrets, store, endpoints.current_rule())
            starting[actor.ready.remote()] = (node, actor)
        return starting

    def map_unordered(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """Questions go to each node's actor as soon as it is ready, `workers` at a time."""
        store = ray.put(pack_store(fn.corpus)) if self.ship_corpus else None  # type: ignore[attr-defined]
        pending: deque[T] = deque(items)
        losses: dict[int, int] = {}
        launches = 0
        starting: dict[Any, tuple[str, Any]] = {}
        actors: dict[str, Any] = {}
        load: dict[str, int] = {}
        running: dict[Any, tuple[T, str]] = {}
        known: set[str] = set()  # nodes given an actor in this run (working, starting or lost)
        next_poll = time.monotonic() + NODE_POLL_S
        try:
            while pending or running:
                if pending and not actors and not starting:
                    launches += 1
                    if launches > MAX_LOSSES:
                        raise RuntimeError(f"no Ray actor could start in {MAX_LOSSES} tries")
                    starting = self._launch(fn, store, skip=set())
                    if not starting:
                        raise RuntimeError("no alive Ray node to run the questions on")
                    known |= {node for node, _ in starting.values()}
                elif pending and time.monotonic() >= next_poll:  # a node that joined mid-run
                    joined = self._launch(fn, store, skip=known)
                    starting |= joined
                    known |= {node for node, _ in joined.values()}
                    next_poll = time.monotonic() + NODE_POLL_S
                for node, actor in actors.items():
                    while pending and load[node] < self.workers:
                        item = pending.popleft()
                        running[actor.run.remote(item)] = (item, node)
                        load[node] += 1
                ready, _ = ray.wait([*running, *starting], num_returns=1, timeout=NODE_POLL_S)
                if not ready:
                    continue
                ref = ready[0]
                if ref in starting:
                    node, actor = starting.pop(ref)
                    try:
                        _, error = ray.get(ref)
                    except RayActorError:
                        continue  # its node died, or the worker could not start: the others go on
                    if error is not None:
                        raise ConfigError(f"Ray node {node[:12]}: {error}")
                    actors[node], load[node] = actor, 0
                    continue
                item, node = running.pop(ref)
                try:
                    result = ray.get(ref)
                except RayTaskError as exc:
                    raise exc.as_instanceof_cause() from None  # type: ignore[no-untyped-call]
                except (RayActorError, ObjectLostError):
                    # The worker or the node holding the result is gone: run it elsewhere.
                    if node in actors:
                        ray.kill(actors.pop(node))
                    losses[id(item)] = losses.get(id(item), 0) + 1
                    if losses[id(item)] >= MAX_LOSSES:
                        raise RuntimeError(
                            f"a question lost its Ray worker {MAX_LOSSES} times; stopping"
                        ) from None
                    pending.appendleft(item)
                    continue
                if node in load:
                    load[node] -= 1
                yield result
        finally:
            for actor in [*actors.values(), *(actor for _, actor in starting.values())]:
                ray.kill(actor)
