"""Host side of the zygotes: one per corpus store, started on first use and shared.

A zygote stays alive while any sandbox uses it; idle ones are kept (up to `IDLE_KEEP`, most
recently used first) so that the next sandbox on the same corpus starts in milliseconds.
"""

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from rlm_docs.errors import CorpusError, RlmDocsError
from sandbox.context_cache import cache_key

IDLE_KEEP = 2
_PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)


class SandboxError(RlmDocsError):
    """The sandbox worker could not start or stopped answering."""


def worker_env() -> dict[str, str]:
    """A minimal environment: nothing from the host (no API keys), single-threaded math libs."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": "/",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": _PACKAGE_ROOT,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1",
    }


class Zygote:
    """A running zygote process and the host's end of its socket (thread-safe)."""

    def __init__(self, corpus: str | None, cache_dir: str | None, timeout_s: float) -> None:
        self.users = 0
        self.owner = os.getpid()
        self._lock = threading.Lock()
        host_end, zygote_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_fd, log_path = tempfile.mkstemp(prefix="rlm-sandbox-log-")
        os.unlink(log_path)  # the zygote's stderr, read only to explain a failed start
        self._log_fd = log_fd
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "sandbox.zygote", str(zygote_end.fileno())],
            pass_fds=(zygote_end.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_fd,
            env=worker_env(),
            cwd="/",
            start_new_session=True,
        )
        zygote_end.close()
        self._sock = host_end
        self._sock.settimeout(timeout_s)
        try:
            reply = self._ask({"op": "init", "corpus": corpus, "cache_dir": cache_dir})
        except (OSError, ValueError) as exc:
            self.close()
            raise SandboxError(f"sandbox zygote failed to start: {self._failure(exc)}") from None
        if reply.get("op") != "ready":
            self.close()
            if reply.get("type") == "CorpusError":
                raise CorpusError(str(reply.get("message")))
            raise SandboxError(
                f"sandbox failed to start: {reply.get('type')}: {reply.get('message')}"
            )
        self.phases: dict[str, float] = dict(reply.get("phases") or {})
        self._sock.settimeout(None)

    def _failure(self, exc: Exception) -> str:
        self._proc.kill()
        self._proc.wait()
        size = os.lseek(self._log_fd, 0, os.SEEK_END)
        os.lseek(self._log_fd, max(0, size - 2000), os.SEEK_SET)
        tail = os.read(self._log_fd, 2000).decode("utf-8", "replace").strip()
        return f"{exc or type(exc).__name__} (exit code {self._proc.returncode}) {tail}".strip()

    def _ask(self, message: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        with self._lock:
            socket.send_fds(self._sock, [json.dumps(message).encode()], fds or [])
            data = self._sock.recv(1 << 16)
        if not data:
            raise OSError("the sandbox zygote exited")
        return json.loads(data)

    def spawn(self, request: dict[str, Any], fds: list[int]) -> int:
        """Fork a worker that reads requests from fds[0] and writes replies to fds[1]."""
        return int(self._ask({"op": "spawn", "request": request}, fds)["pid"])

    def reap(self, pid: int) -> int:
        """Kill a worker if it still runs and reap it: its exit code, negative for a signal."""
        return int(self._ask({"op": "reap", "pid": pid})["returncode"])

    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self) -> None:
        self._sock.close()  # the zygote exits on EOF; its workers die with it
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._log_fd)

    def forget(self) -> None:
        """In a forked copy of the host: drop the inherited socket without telling the zygote
        (it belongs to the parent process)."""
        self._sock.detach()
        self.owner = -1


_zygotes: "OrderedDict[tuple, Zygote]" = OrderedDict()
_registry_lock = threading.Lock()


def _after_fork_in_child() -> None:
    """A forked host process starts its own zygotes; the parent's stay the parent's."""
    global _registry_lock
    _registry_lock = threading.Lock()
    for zygote in _zygotes.values():
        zygote.forget()
    _zygotes.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


def acquire(corpus: str | None, cache_dir: str | None, timeout_s: float) -> Zygote:
    """The zygote for `corpus` (started if needed), counted as used until `release`.

    Zygotes are keyed by the store's identity, not only its path: a store rewritten in place
    (re-ingested) gets a fresh zygote instead of the stale copy."""
    identity = None
    if corpus is not None:
        with contextlib.suppress(OSError):  # not a store: the zygote's load will say why
            identity = cache_key(Path(corpus))
    key = (corpus, identity, cache_dir)
    with _registry_lock:
        zygote = _zygotes.get(key)
        if zygote is not None and not zygote.alive():
            del _zygotes[key]
            zygote = None
        if zygote is None:
            zygote = Zygote(corpus, cache_dir, timeout_s)
            _zygotes[key] = zygote
        _zygotes.move_to_end(key)
        zygote.users += 1
        return zygote


def release(zygote: Zygote) -> None:
    """A sandbox stopped using `zygote`; close the least recently used idle ones beyond
    IDLE_KEEP."""
    with _registry_lock:
        zygote.users -= 1
        idle = [key for key, z in _zygotes.items() if z.users <= 0]
        for key in idle[: max(0, len(idle) - IDLE_KEEP)]:
            _zygotes.pop(key).close()


def shutdown_idle() -> int:
    """Close every zygote no sandbox is using (frees their memory); returns how many."""
    with _registry_lock:
        idle = [key for key, z in _zygotes.items() if z.users <= 0]
        for key in idle:
            _zygotes.pop(key).close()
        return len(idle)
