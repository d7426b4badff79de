"""The host's pool of fork servers (`sandbox.fork_server`): one per preload (`sandbox.preload`,
e.g. a corpus store), started on first use and shared by every sandbox with that preload.

A fork server stays alive while any sandbox uses it; idle ones are kept (up to `IDLE_KEEP`, most
recently used first) so that the next sandbox with the same preload starts in milliseconds.

Requests are pipelined: a thread sends its request and waits for its own reply, which one reader
thread per fork server hands out (the fork server answers in request order). With one lock
around send-and-receive instead, each exchange also held the lock while its thread waited to
get the GIL back, and at 64 concurrent questions the spawns queued 200 ms for that lock.
"""

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from sandbox.errors import PreloadError, SandboxError
from sandbox.preload import Preload

IDLE_KEEP = 2
# The directory holding the `sandbox` package, first on the fork server's path, so
# `python -m sandbox.fork_server` imports this very source tree.
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])


def worker_env() -> dict[str, str]:
    """A minimal environment: nothing from the host (no API keys), single-threaded math libs.
    The import path is the host's (a preload factory imports what the host can import): paths
    are no secret, and the worker is confined after importing."""
    host_path = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]  # "": the cwd
    path = [_PACKAGE_ROOT, *(p for p in host_path if p != _PACKAGE_ROOT)]
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": "/",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join(path),
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1",
    }


class ForkServer:
    """A running fork server process and the host's end of its socket (thread-safe)."""

    def __init__(self, preload: Preload | None, timeout_s: float) -> None:
        self.users = 0
        self.owner = os.getpid()
        self._send_lock = threading.Lock()  # also guards `_waiting` and `_closed`
        # Each request's reply (empty bytes: the fork server is gone), in the order sent.
        self._waiting: deque[Future[bytes]] = deque()
        self._closed = False
        host_end, server_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_fd, log_path = tempfile.mkstemp(prefix="rlm-sandbox-log-")
        os.unlink(log_path)  # the fork server's stderr, read only to explain a failed start
        self._log_fd = log_fd
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "sandbox.fork_server", str(server_end.fileno())],
            pass_fds=(server_end.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_fd,
            env=worker_env(),
            cwd="/",
            start_new_session=True,
        )
        server_end.close()
        self._sock = host_end
        threading.Thread(target=self._read_replies, name="fork-server-replies", daemon=True).start()
        try:
            spec = (
                None if preload is None else {"factory": preload.factory, "kwargs": preload.kwargs}
            )
            init = {"op": "init", "preload": spec}
            reply = self._ask(init, timeout_s=timeout_s)
        except (OSError, ValueError) as exc:
            self.close()
            raise SandboxError(
                f"sandbox fork server failed to start: {self._failure(exc)}"
            ) from None
        if reply.get("op") != "ready":
            self.close()
            raise PreloadError(str(reply.get("type")), str(reply.get("message")))
        self.phases: dict[str, float] = dict(reply.get("phases") or {})

    def _failure(self, exc: Exception) -> str:
        self._proc.kill()
        self._proc.wait()
        size = os.lseek(self._log_fd, 0, os.SEEK_END)
        os.lseek(self._log_fd, max(0, size - 2000), os.SEEK_SET)
        tail = os.read(self._log_fd, 2000).decode("utf-8", "replace").strip()
        return f"{exc or type(exc).__name__} (exit code {self._proc.returncode}) {tail}".strip()

    def _read_replies(self) -> None:
        """The socket's one reader: each reply goes to the oldest request still waiting; at
        EOF (the fork server exited, or `close`) every waiting request is told so."""
        while True:
            try:
                data = self._sock.recv(1 << 16)
            except OSError:
                data = b""
            with self._send_lock:
                if data and not self._waiting:
                    continue  # nobody asked: nothing to answer
                if data:
                    done = [self._waiting.popleft()]
                else:
                    self._closed = True
                    done, self._waiting = list(self._waiting), deque()
            for reply in done:
                reply.set_result(data)
            if not data:
                return

    def _ask(
        self,
        message: dict[str, Any],
        fds: list[int] | None = None,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        reply: Future[bytes] = Future()
        with self._send_lock:
            if self._closed:
                raise OSError("the sandbox fork server exited")
            socket.send_fds(self._sock, [json.dumps(message).encode()], fds or [])
            self._waiting.append(reply)
        try:
            data = reply.result(timeout_s)
        except TimeoutError:
            raise TimeoutError(f"no answer from the sandbox fork server in {timeout_s} s") from None
        if not data:
            raise OSError("the sandbox fork server exited")
        reply_message: dict[str, Any] = json.loads(data)
        return reply_message

    def spawn(self, request: dict[str, Any], fds: list[int]) -> int:
        """Fork a worker that reads requests from fds[0] and writes replies to fds[1]."""
        return int(self._ask({"op": "spawn", "request": request}, fds)["pid"])

    def reap(self, pid: int, wait: bool = True) -> int | None:
        """Kill a worker if it still runs. `wait`: reap it now and return its exit code
        (negative for a signal); otherwise return at once (None) and let the fork server reap
        it once it has exited."""
        code = self._ask({"op": "reap", "pid": pid, "wait": wait})["returncode"]
        return None if code is None else int(code)

    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes the reader; the fork server exits on EOF,
            self._sock.shutdown(socket.SHUT_RDWR)  # and its workers die with it
        self._sock.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._log_fd)

    def forget(self) -> None:
        """In a forked copy of the host: drop the inherited socket without telling the fork server
        (it belongs to the parent process)."""
        self._sock.detach()
        self.owner = -1


_servers: "OrderedDict[tuple[str, ...], ForkServer]" = OrderedDict()
_registry_lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked host process starts its own fork servers; the parent's stay the parent's."""
    global _registry_lock
    _registry_lock = threading.Lock()
    for server in _servers.values():
        server.forget()
    _servers.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def acquire(preload: Preload | None, timeout_s: float) -> ForkServer:
    """The fork server for `preload` (started if needed), counted as used until `release`.

    Fork servers are keyed by the preload's factory, arguments and `key` (e.g. a store's file
    identity: a store rewritten in place gets a fresh fork server instead of the stale copy)."""
    key: tuple[str, ...] = ()
    if preload is not None:
        kwargs = json.dumps(dict(preload.kwargs), sort_keys=True)
        key = (preload.factory, kwargs, preload.key or "")
    with _registry_lock:
        server = _servers.get(key)
        if server is not None and not server.alive():
            del _servers[key]
            server = None
        if server is None:
            server = ForkServer(preload, timeout_s)
            _servers[key] = server
        _servers.move_to_end(key)
        server.users += 1
        return server


def release(server: ForkServer) -> None:
    """A sandbox stopped using `server`; close the least recently used idle ones beyond
    IDLE_KEEP."""
    with _registry_lock:
        server.users -= 1
        idle = [key for key, z in _servers.items() if z.users <= 0]
        for key in idle[: max(0, len(idle) - IDLE_KEEP)]:
            _servers.pop(key).close()


def shutdown_idle() -> int:
    """Close every fork server no sandbox is using (frees their memory); returns how many."""
    with _registry_lock:
        idle = [key for key, z in _servers.items() if z.users <= 0]
        for key in idle:
            _servers.pop(key).close()
        return len(idle)
