"""Ctrl-C and SIGTERM: one short message, exit code 130 (143 for SIGTERM), promptly.

Model calls run in worker threads (eval's questions, parallel sub-calls) that cannot be
interrupted mid-request; a normal interpreter exit joins them, so a Ctrl-C would wait for every
in-flight call (minutes with a slow provider) and a second Ctrl-C would print a traceback from
the thread join. After the command has cleaned up (results are fsynced line by line, stores and
files are written atomically, unfinished questions' trajectories are removed), nothing those
threads could still do is wanted, so the process leaves at once; the sandbox workers die with
it (their fork server exits when its socket closes).

SIGTERM, what a batch scheduler (Slurm, Kubernetes, systemd) or `kill` sends before it kills,
takes the same path: it is raised in the main thread as a KeyboardInterrupt, so an `eval` keeps
its finished questions and prints the `--resume` command, then exits 143 (128 + SIGTERM), as a
shell reports for a process that SIGTERM ended.
"""

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SIGTERM_EXIT = 128 + signal.SIGTERM
SIGINT_EXIT = 130


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C that a command has cleaned up after; its text tells the user how to continue."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread so that Ctrl-C's cleanup runs for it too."""


_terminated = threading.Event()  # set once SIGTERM arrived (the exception may be re-raised)


def _on_sigterm(signum: int, frame: object) -> None:
    _terminated.set()
    raise Terminated()


# Commands whose server (uvicorn) handles SIGTERM itself, as a graceful shutdown.
OWN_SIGTERM = ("serve", "mcp")


@contextmanager
def sigterm_as_interrupt(command: str) -> Iterator[None]:
    """While the block runs `command`, SIGTERM raises `Terminated` (in the main thread only,
    and not for the servers of `OWN_SIGTERM`)."""
    if command in OWN_SIGTERM or threading.current_thread() is not threading.main_thread():
        yield
        return
    _terminated.clear()
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def leave(command: str, exc: KeyboardInterrupt) -> int:
    """Print the interrupt message for `command` and exit 130, or 143 after SIGTERM (returns
    only when no other thread is running, so in-process callers such as tests get the code
    back)."""
    main = threading.current_thread() is threading.main_thread()
    previous = {}
    if main:  # no second traceback from a second Ctrl-C or SIGTERM during the exit
        previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    detail = str(exc) if isinstance(exc, Interrupted) and str(exc) else ""
    what, code = (
        ("terminated (SIGTERM)", SIGTERM_EXIT)
        if _terminated.is_set()
        else (
            "interrupted",
            SIGINT_EXIT,
        )
    )
    print(f"rlm-docs {command}: {what}" + (f"; {detail}" if detail else ""), file=sys.stderr)
    if threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    for sig, handler in previous.items():
        signal.signal(sig, handler)
    return code
