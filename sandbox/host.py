"""`Sandbox`: the host side of the isolated, persistent Python REPL worker.

The worker is a separate process (forked by a per-preload fork server, see
`sandbox.fork_server`) confined by RestrictedPython and by the OS
(`sandbox.confine`). The host sends cells over a framed pipe, answers the worker's calls
to host `functions` (this is how `llm_query` reaches the models, so API keys stay in the host),
enforces the wall-clock limit per cell and restarts the worker when it dies or runs over.
"""

import contextlib
import keyword
import os
import shutil
import signal
import tempfile
import time
import weakref
from collections.abc import Callable, Collection, Mapping
from dataclasses import asdict
from typing import Any, Self

from sandbox import fork_server_pool, memory_share, protocol
from sandbox.confine import open_stat, stat_cpu_s
from sandbox.errors import SandboxError
from sandbox.fork_server_pool import ForkServer
from sandbox.limits import CellOutcome, Limits
from sandbox.output import bounded
from sandbox.preload import Preload

_LOST = "the worker was restarted and all variables were lost"
# CPU seconds a worker may use while no request is running (it should be blocked on a read).
IDLE_CPU_S = 1.0
# While waiting for a reply the host checks the worker's CPU time this often; the kernel's
# RLIMIT_CPU normally stops the worker first, the host (with CPU_SLACK_S more) if it lifted it.
CPU_POLL_S = 0.5
CPU_SLACK_S = 1.0
# How long the host polls for the worker's next frame before it sleeps (`FrameReader`): a
# trivial cell's reply comes about 0.1 ms after its request; a longer cell costs the host at
# most this much extra CPU per frame.
REPLY_SPIN_S = 100e-6
_CELL_OPS = ("done", "error")
_VALUE_OPS = ("value", "error")


class _WorkerGone(Exception):
    """The worker exited or broke the protocol; `reason` says how when the host saw it."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason


class _TimedOut(Exception):
    """The worker did not answer within the wall-clock limit (`run_deadline`: the caller's
    absolute deadline passed, rather than the cell's own limit)."""

    def __init__(self, run_deadline: bool = False) -> None:
        super().__init__()
        self.run_deadline = run_deadline


def _death_reason(returncode: int | None, limits: Limits, memory_mb: int) -> str:
    if returncode is None:
        return "stopped answering"
    if returncode == -signal.SIGXCPU:
        return f"exceeded its CPU time limit of {limits.cpu_s} s"
    if returncode == -signal.SIGKILL:
        return f"was killed (likely out of memory; the limit is {memory_mb} MB)"
    if returncode == -signal.SIGSYS:
        return "was killed for a forbidden system call"
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


def _stop_worker(
    server: ForkServer,
    pid: int,
    workdir: str,
    fds: list[int],
    share: memory_share.Reservation,
    exit_code: bool = False,
) -> int | None:
    """Kill a worker through its fork server, free its pipes, directory and memory share; with
    `exit_code`, wait until it is reaped and return its exit code (if known). Also the
    finalizer of a sandbox that was never closed."""
    if server.owner != os.getpid():  # a forked copy of the host: the worker is the parent's
        return None
    code = None
    with contextlib.suppress(OSError, ValueError):
        if server.alive():
            code = server.reap(pid, wait=exit_code)
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    shutil.rmtree(workdir, ignore_errors=True)
    fork_server_pool.release(server)
    memory_share.release(share)
    return code


class Sandbox:
    """An isolated Python REPL whose variables persist across `run` calls.

    `functions` are host callables that sandbox code calls like plain functions; arguments and
    results must be JSON-able (str, int, float, bool, None, list, dict with str keys). An
    exception they raise reappears in the sandbox with the same class name (`BudgetExceeded`,
    and the exception classes of the preload, are pre-bound so code can catch them). Time spent
    inside host functions does not count toward `Limits.wall_s`. With a `preload` (see
    `sandbox.preload`), the namespace also has what its factory returned; `names` limits those
    preloaded names to the ones given (a prompt binds only what it introduces).
    A name the sandbox bound (helper, host function, `context`) that model code deletes is
    restored after the cell; one it rebinds becomes the model's own variable and is never
    overwritten (a model that calls its list `pages` keeps it).
    """

    def __init__(
        self,
        limits: Limits | None = None,
        functions: Mapping[str, Callable[..., Any]] | None = None,
        names: Collection[str] | None = None,
        preload: Preload | None = None,
    ) -> None:
        self.limits = limits or Limits()
        self.names = None if names is None else sorted(names)
        self.preload = preload
        self.functions = dict(functions or {})
        for name, fn in self.functions.items():
            if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
                raise ValueError(f"sandbox function name {name!r} is not a valid identifier")
            if name.startswith("_"):
                raise ValueError(f"sandbox function name {name!r} must not start with '_'")
            if not callable(fn):
                raise TypeError(f"sandbox function {name!r} is not callable")
        self._security: dict[str, Any] = {}
        self._finalizer: weakref.finalize[..., Sandbox] | None = None
        self._start()

    # -- process lifecycle ------------------------------------------------------------------

    def _start(self) -> None:
        server = fork_server_pool.acquire(self.preload, self.limits.start_timeout_s)
        workdir = tempfile.mkdtemp(prefix="rlm-sandbox-")
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        share = memory_share.reserve(self.limits.memory_mb)  # this host's workers share a cap
        requested = share.limit_mb
        self._share = share
        request = {
            "functions": sorted(self.functions),
            "names": self.names,
            "limits": asdict(self.limits) | {"memory_share_mb": requested},
            "workdir": workdir,
        }
        try:
            pid = server.spawn(request, [to_worker_r, from_worker_w])
        except (OSError, ValueError) as exc:
            for fd in (to_worker_r, to_worker_w, from_worker_r, from_worker_w):
                os.close(fd)
            shutil.rmtree(workdir, ignore_errors=True)
            fork_server_pool.release(server)
            memory_share.release(share)
            raise SandboxError(f"sandbox worker could not be started: {exc}") from None
        os.close(to_worker_r)
        os.close(from_worker_w)
        os.set_blocking(to_worker_w, False)  # sends wait with a deadline (see protocol)
        fds = [to_worker_w, from_worker_r]
        with contextlib.suppress(OSError):  # a worker already gone fails its first request
            fds.append(open_stat(pid))
        self._pid, self._workdir = pid, workdir
        self._write_fd = to_worker_w
        self._stat_fd = fds[-1] if len(fds) == 3 else -1
        self._request_id = 0
        self._idle_cpu: float | None = None
        self._reader = protocol.FrameReader(from_worker_r, spin_s=REPLY_SPIN_S)
        self._finalizer = weakref.finalize(self, _stop_worker, server, pid, workdir, fds, share)
        try:
            reply = self._reader.read(time.monotonic() + self.limits.start_timeout_s)
        except protocol.ProtocolError:
            reply = {"op": "fatal", "message": "the worker exited during start-up"}
        if reply is None:
            reply = {"op": "fatal", "message": "the worker did not start in time"}
        if reply["op"] != "ready":
            self._stop()
            raise SandboxError(f"sandbox worker failed to start: {reply.get('message')}")
        self._security = dict(reply.get("security") or {})
        rlimits = self._security.get("rlimits") or {}
        memory_share.started(
            share,
            pid,
            int(rlimits.get("RLIMIT_AS", requested * 2**20)) // 2**20,
            int(self._security.get("memory_needed_mb") or 0),
        )
        self.start_phases: dict[str, float] = dict(server.phases)

    def _stop(self, exit_code: bool = False) -> int | None:
        """Stop the current worker; with `exit_code`, wait for it to be reaped and return its
        exit code when known (what killed it), else return at once (None)."""
        finalizer, self._finalizer = self._finalizer, None
        stop = finalizer.detach() if finalizer is not None else None
        if stop is None:
            return None
        _, func, args, _ = stop
        code: int | None = func(*args, exit_code=exit_code)
        return code

    def restart(self) -> None:
        """Replace the worker by a fresh one (all variables are lost; the preload is not redone:
        the new worker is forked from the same fork server)."""
        self._stop()
        self._start()

    def close(self) -> None:
        """Stop the worker and remove its temporary directory (idempotent)."""
        self._stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def pid(self) -> int:
        """Process id of the current worker."""
        return self._pid

    @property
    def memory_mb(self) -> int:
        """The current worker's address-space limit: `Limits.memory_mb`, or less when this
        host's workers together would pass their cap (`memory_share`)."""
        return self._share.limit_mb

    def security(self) -> dict[str, Any]:
        """Which layers are active: uid, privileges_dropped, chroot, network_namespace,
        disk_limit_mb, rlimits, seccomp, cwd (and why a layer is missing, when known)."""
        return dict(self._security)

    # -- requests ---------------------------------------------------------------------------

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        try:
            protocol.send(self._write_fd, message, deadline)
        except TimeoutError:  # the worker stopped reading its requests
            raise _TimedOut() from None
        except BrokenPipeError:
            raise _WorkerGone() from None

    def _cpu_s(self) -> float:
        try:
            return stat_cpu_s(self._stat_fd)
        except OSError:  # gone
            raise _WorkerGone() from None

    def _prepare(self) -> float:
        """Before a request: the worker must have been idle (no frames, no CPU use) since the
        last one. Returns its CPU time so far."""
        if self._reader.pending():
            raise _WorkerGone("sent data between requests")
        used = self._cpu_s()
        if self._idle_cpu is not None and used - self._idle_cpu > IDLE_CPU_S:
            raise _WorkerGone(f"used {used - self._idle_cpu:.1f} s of CPU between requests")
        return used

    def _read(self, deadline: float, cpu_budget: float) -> dict[str, Any] | None:
        """The next frame, None at the deadline; checks the worker's CPU time meanwhile."""
        while True:
            wake = min(deadline, time.monotonic() + CPU_POLL_S)
            try:
                frame = self._reader.read(wake)
            except protocol.ProtocolError:
                raise _WorkerGone() from None
            if frame is not None or wake >= deadline:
                return frame
            if self._cpu_s() > cpu_budget:
                raise _WorkerGone(f"exceeded its CPU time limit of {self.limits.cpu_s} s")

    def _answer(self, frame: dict[str, Any]) -> dict[str, Any]:
        """Run a host function for the worker and build the reply frame."""
        name = frame.get("name")
        fn = self.functions.get(name) if isinstance(name, str) else None
        if fn is None:
            return {"op": "raise", "type": "NameError", "message": f"no host function {name!r}"}
        args = frame.get("args") or []
        kwargs = frame.get("kwargs") or {}
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # re-raised inside the sandbox under the same class name
            # Capped like cell output: the message may quote model input of any size.
            message = bounded(str(exc), self.limits.max_output_chars)
            return {"op": "raise", "type": type(exc).__name__[:100], "message": message}
        reply = {"op": "return", "value": value}
        try:
            protocol.encode(reply)
        except (TypeError, ValueError) as exc:
            return {
                "op": "raise",
                "type": "TypeError",
                "message": f"host function {name}() returned a value that is not JSON-able: {exc}",
            }
        return reply

    def _exchange(
        self,
        message: dict[str, Any],
        final_ops: tuple[str, ...],
        run_deadline: float | None = None,
    ) -> dict[str, Any]:
        """Send a request and serve host calls until the final reply; the cell's deadline
        excludes time spent in host functions, `run_deadline` (absolute) does not. If the host
        is interrupted meanwhile (Ctrl-C, or a host function raising a BaseException), the
        worker is restarted: it is mid-request and the conversation cannot be resumed."""
        if self._finalizer is None:
            raise SandboxError("the sandbox is closed")
        try:
            return self._serve_until_reply(message, final_ops, run_deadline)
        except (_TimedOut, _WorkerGone):
            raise
        except BaseException:
            self.restart()
            raise

    def _serve_until_reply(
        self, message: dict[str, Any], final_ops: tuple[str, ...], run_deadline: float | None
    ) -> dict[str, Any]:
        cpu_budget = self._prepare() + self.limits.cpu_s + CPU_SLACK_S
        self._request_id += 1
        deadline = time.monotonic() + self.limits.wall_s
        hard = float("inf") if run_deadline is None else run_deadline
        # The worker applies its current memory share itself (lowering only) before it serves
        # the request: the host may not change the limits of a worker of another uid.
        request = {**message, "id": self._request_id, "memory_mb": self._share.limit_mb}
        self._send(request, min(deadline, hard))
        while True:
            frame = self._read(min(deadline, hard), cpu_budget)
            if frame is None:
                raise _TimedOut(run_deadline=hard < deadline)
            if frame.get("id") != self._request_id or frame["op"] not in ("call", *final_ops):
                raise _WorkerGone(f"sent an unexpected {frame['op']!r} frame")
            if frame["op"] != "call":
                with contextlib.suppress(OSError):
                    self._idle_cpu = stat_cpu_s(self._stat_fd)
                return frame
            started = time.monotonic()
            reply = self._answer(frame)
            deadline += time.monotonic() - started
            if time.monotonic() >= hard:  # the host function used up the run's time
                raise _TimedOut(run_deadline=True)
            self._send(reply, min(deadline, hard))

    def _recover(self, exc: Exception) -> str:
        """Restart after a timeout or a crash; the message tells the model what happened."""
        if isinstance(exc, _TimedOut) and exc.run_deadline:
            message = f"TimeoutError: the run's wall-time budget ran out mid-cell; {_LOST}"
        elif isinstance(exc, _TimedOut):
            message = f"TimeoutError: cell exceeded {self.limits.wall_s} s wall clock; {_LOST}"
        else:
            code = self._stop(exit_code=True)
            reason = exc.reason if isinstance(exc, _WorkerGone) and exc.reason else None
            reason = reason or _death_reason(code, self.limits, self.memory_mb)
            message = f"WorkerDied: the sandbox worker {reason}; {_LOST}"
        self.restart()
        return message

    def run(self, code: str, deadline: float | None = None) -> CellOutcome:
        """Run one cell. Errors in the code come back in `error` (a short traceback pointing at
        the cell's lines); a timeout or a dead worker gives `restarted=True`. `deadline` (a
        `time.monotonic()` value, e.g. the run's wall budget) also stops the cell, counting
        the time spent in host functions, which the cell's own `wall_s` does not."""
        if not isinstance(code, str):
            raise TypeError(f"code must be a string, not {type(code).__name__}")
        started = time.monotonic()
        try:
            reply = self._exchange({"op": "run", "code": code}, _CELL_OPS, deadline)
        except (_TimedOut, _WorkerGone) as exc:
            message = self._recover(exc)
            return CellOutcome("", message, True, time.monotonic() - started)
        error = reply.get("error")
        if reply["op"] == "error":  # the worker could not even run the request
            error = f"{reply.get('type')}: {reply.get('message')}"
        limit = self.limits.max_output_chars  # enforced here too: the worker is not trusted
        stdout = bounded(str(reply.get("stdout", "")), limit)
        error = None if error is None else bounded(str(error), limit)
        return CellOutcome(stdout, error, False, time.monotonic() - started)

    def _request(self, message: dict[str, Any]) -> Any:
        try:
            reply = self._exchange(message, _VALUE_OPS)
        except (_TimedOut, _WorkerGone) as exc:
            raise SandboxError(self._recover(exc)) from None
        if reply["op"] == "value":
            return reply.get("value")
        if reply.get("type") == "KeyError":
            raise KeyError(reply.get("message"))
        raise ValueError(f"{reply.get('type')}: {reply.get('message')}")

    def get(self, name: str, max_chars: int | None = None) -> Any:
        """A JSON-able copy of variable `name` (KeyError if it is not defined); with
        `max_chars`, cut in the worker to that many characters and values (`values.capped`),
        so a value of any size costs the host no more than the cut copy."""
        message: dict[str, Any] = {"op": "get", "name": name}
        if max_chars is not None:
            message["max_chars"] = max_chars
        return self._request(message)

    def set(self, name: str, value: Any) -> None:
        """Bind a JSON-able `value` to `name` in the sandbox namespace."""
        try:
            protocol.encode({"op": "set", "name": name, "value": value})
        except TypeError as exc:
            raise TypeError(f"sandbox value for {name!r} must be JSON-able: {exc}") from None
        self._request({"op": "set", "name": name, "value": value})

    def variables(self) -> dict[str, str]:
        """User variables: name -> short description (`str, 1,234 chars`, `list, 3 items`)."""
        described: dict[str, str] = self._request({"op": "vars"})
        return described

    def log(self, name: str) -> list[Any]:
        """A copy of the preload's log `name` (`Preloaded.logs`; [] when there is none), as
        the preload's functions wrote it since the worker started. The worker keeps the logs
        outside the namespace, so model code cannot change this answer."""
        return list(self._request({"op": "log", "name": name}))
