"""The fork server: one process per preload (see `preload`) that loads everything once and forks
sandbox workers (what Android and Chromium call a "zygote").

Loading a 50k-page corpus (Parquet tables, BM25 index, a 200M-character context string) takes
seconds; forking a process that already holds it takes milliseconds, and the children share
its memory copy-on-write. So the host starts one fork server per preload (`python -m
sandbox.fork_server SOCKET_FD`, pooled by `fork_server_pool`), and every worker start or
restart is a fork. The fork server itself never runs sandbox code; each child confines itself (chroot, nobody, rlimits, seccomp) before
answering the host.

Protocol: one JSON object per SOCK_SEQPACKET packet on a Unix socket pair.
  host -> {"op": "init", "preload": {"factory": "module:function", "kwargs": {...}} | None}
       <- {"op": "ready", "phases": {...}} | {"op": "fatal", "type": str, "message": str}
  host -> {"op": "spawn", "request": {...}} with two fds (worker's read end, write end)
       <- {"op": "spawned", "pid": int}
  host -> {"op": "reap", "pid": int, "wait": bool}   kill the worker if it still runs
       <- {"op": "reaped", "returncode": int | None}   (negative: killed by that signal)

With `"wait": false` (a sandbox closed, whose exit code nobody needs) the reply comes at once
and the worker is reaped later: waiting for a killed worker to exit (its address space torn
down, ~10 ms of CPU that, with dozens of questions, waits its turn for a core) would hold up
every spawn queued behind it in this one process. `"wait": true` (the host explaining a
worker's death) waits, so the code is the worker's own.
"""

import contextlib
import gc
import json
import os
import signal
import socket
import sys
import threading
import time
from typing import Any

from sandbox import preload
from sandbox.huge_pages import collapse_private_memory
from sandbox.modules import load_modules
from sandbox.worker import run_worker

MAX_PACKET = 1 << 16
REAP_POLL_S = 0.2  # how often killed workers are looked for while no request comes


class Phases(dict[str, float]):
    """Seconds spent in each start-up phase (reported to the host for benchmarks)."""

    def __init__(self) -> None:
        super().__init__()
        self._last = time.perf_counter()

    def mark(self, name: str) -> None:
        now = time.perf_counter()
        self[name] = round(now - self._last, 4)
        self._last = now


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.send(json.dumps(message).encode())


def _reap(pid: int, wait: bool, dying: set[int]) -> int | None:
    """Kill worker `pid` (and its process group) if still running; reap it now (`wait`: its
    exit code) or later (None; `dying` holds it until `_reap_dying` finds it exited)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    if not wait:
        dying.add(pid)
        return None
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:  # not ours, or already reaped
        return -signal.SIGKILL
    return os.waitstatus_to_exitcode(status)


def _reap_dying(dying: set[int]) -> None:
    """Reap the killed workers that have exited by now (never one the host has not let go:
    its exit code is still to be asked for)."""
    for pid in list(dying):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            dying.discard(pid)


def _spawn(
    sock: socket.socket, request: dict[str, Any], fds: list[int], preloaded: dict[str, Any]
) -> int:
    pid = os.fork()
    if pid == 0:  # the worker: never returns into the server loop
        try:
            os.setsid()
            sock.close()
            run_worker(fds[0], fds[1], request, preloaded)
        finally:
            os._exit(0)
    for fd in fds:
        os.close(fd)
    return pid


def serve(sock: socket.socket) -> None:
    """Load, then fork workers on request until the host closes the socket."""
    phases = Phases()
    init = json.loads(sock.recv(MAX_PACKET))
    try:
        loaded = preload.Preloaded()
        if init.get("preload"):
            loaded = preload.call(init["preload"]["factory"], init["preload"].get("kwargs") or {})
            phases.mark("preload")
            if loaded.phases:  # the factory's own account replaces the total
                del phases["preload"]
                phases.update(loaded.phases)
        preloaded = {
            "modules": load_modules(loaded.modules),
            "namespace": loaded.namespace,
            "logs": loaded.logs,
        }
        phases.mark("modules")
    except Exception as exc:  # reported to the host, which raises PreloadError
        _send(sock, {"op": "fatal", "type": type(exc).__name__, "message": str(exc)})
        return
    gc.freeze()  # keep the collector from touching (and so copying) the shared objects
    _send(sock, {"op": "ready", "phases": phases})
    # Cheap forks (see huge_pages), made after "ready": collapsing the FinanceBench store takes
    # seconds, which the first worker must not wait for; forks get cheap once it is done.
    threading.Thread(target=collapse_private_memory, name="huge-pages", daemon=True).start()
    dying: set[int] = set()
    while True:
        _reap_dying(dying)
        sock.settimeout(REAP_POLL_S if dying else None)  # idle: still reap the last ones
        try:
            data, fds, _flags, _addr = socket.recv_fds(sock, MAX_PACKET, 2)
        except TimeoutError:
            continue
        if not data:
            return
        message = json.loads(data)
        if message["op"] == "spawn":
            pid = _spawn(sock, message["request"], fds, preloaded)
            _send(sock, {"op": "spawned", "pid": pid})
        elif message["op"] == "reap":
            code = _reap(int(message["pid"]), bool(message.get("wait", True)), dying)
            _send(sock, {"op": "reaped", "returncode": code})


def main(argv: list[str]) -> int:
    """Serve until the host closes the socket (or dies); the workers then die with us."""
    with socket.socket(fileno=int(argv[1])) as sock, contextlib.suppress(OSError):
        serve(sock)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
