"""An exclusive lock on a run directory, held by the one process that writes it.

Two writers of one run directory (two `eval --resume` started at once, a sweep and a hand-run
eval of one of its cells) would each run the questions neither had recorded yet: every such
question would be answered, paid for and appended twice. So every writer holds `fcntl.flock`
on `RUN_DIR/.writer.lock` for its whole life, and a second one is refused with one line naming
the holder.

A flock belongs to the open file, so the kernel releases it when the holder exits however it
exits (a crash, SIGKILL): a dead writer never leaves a stale lock to clean up, unlike a pid
file. The file itself stays: deleting it would let a newcomer lock a fresh file while the old
holder still holds the old one. The descriptor is close-on-exec, so helper processes the writer
starts (the sandbox fork server) do not keep the lock alive after it dies. The holder writes its
pid, host, command and start time into the file for the refusal message.
"""

import contextlib
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from rlm_docs.errors import ConfigError

LOCK_NAME = ".writer.lock"


def _command() -> str:
    """This process's command line, as a user would recognise it (`rlm-docs eval ...`,
    `python -m rlm_docs eval ...`)."""
    orig = list(getattr(sys, "orig_argv", sys.argv))
    if len(orig) > 2 and orig[1] == "-m":
        argv = ["python", *orig[1:]]
    else:
        argv = [Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python", *sys.argv[1:]]
    text = shlex.join(argv)
    return text if len(text) <= 300 else f"{text[:160]} ... {text[-135:]}"  # keeps --resume


def _holder(fd: int) -> str:
    """`pid 123 on host, since TIME: COMMAND` from the lock file, or what is known of it.

    The holder writes its details just after it takes the lock, so for a moment the file may
    still be empty or name the previous holder, a process on this host that is gone (a run
    killed with SIGKILL): such a reading is taken again for up to a second."""
    data: object = {}
    for _ in range(_READS):
        try:
            data = json.loads(os.pread(fd, 65536, 0) or b"{}")
        except (OSError, ValueError):
            data = {}
        if isinstance(data, dict) and "pid" in data and _may_hold(data):
            break
        time.sleep(1 / _READS)
    if not isinstance(data, dict) or "pid" not in data:
        return "a process that is still starting"
    return (
        f"pid {data.get('pid')} on {data.get('host')}, since {data.get('started_at')}: "
        f"{data.get('command')}"
    )


_READS = 20


def _may_hold(data: dict[str, Any]) -> bool:
    """False when the recorded holder is a process of this host that no longer exists."""
    if data.get("host") != socket.gethostname() or not isinstance(data.get("pid"), int):
        return True
    try:
        os.kill(data["pid"], 0)
    except ProcessLookupError:
        return False
    except OSError:  # alive, owned by someone else
        return True
    return True


class RunLock:
    """`with RunLock(directory):` the exclusive right to write `directory` (created if absent);
    ConfigError (exit 2 from the CLI) naming the holder when another process has it."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.path = self.directory / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> "RunLock":
        self.directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            raise ConfigError(
                f"{self.directory}: another process is writing this run ({holder}); wait for it "
                "to end or stop it, then run this command again"
            ) from None
        me = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "command": _command(),
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(me) + "\n").encode("utf-8"), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
