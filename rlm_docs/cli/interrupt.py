"""Ctrl-C: one short message, exit code 130, promptly.

Model calls run in worker threads (eval's questions, parallel sub-calls) that cannot be
interrupted mid-request; a normal interpreter exit joins them, so a Ctrl-C would wait for every
in-flight call (minutes with a slow provider) and a second Ctrl-C would print a traceback from
the thread join. After the command has cleaned up (results are fsynced line by line, stores and
files are written atomically, unfinished questions' trajectories are removed), nothing those
threads could still do is wanted, so the process leaves at once; the sandbox workers die with
it (their fork server exits when its socket closes).
"""

import os
import signal
import sys
import threading


class Interrupted(KeyboardInterrupt):
    """A Ctrl-C that a command has cleaned up after; its text tells the user how to continue."""


def leave(command: str, exc: KeyboardInterrupt) -> int:
    """Print the interrupt message for `command` and exit 130 (returns only when no other
    thread is running, so in-process callers such as tests get the code back)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None  # no 2nd traceback
    detail = str(exc) if isinstance(exc, Interrupted) and str(exc) else ""
    print(f"rlm-docs {command}: interrupted" + (f"; {detail}" if detail else ""), file=sys.stderr)
    if threading.active_count() > 1:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    if main:
        signal.signal(signal.SIGINT, previous)
    return 130
