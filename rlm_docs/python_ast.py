"""`ast.parse` that host threads may call at once.

CPython 3.11's AST conversion keeps a recursion counter that is not thread-safe (gh-106905):
two threads parsing at once can fail with "AST constructor recursion depth mismatch". Eval runs
questions in worker threads, and both the offline policy (shipping its REPL source) and the
decomposition record (reading each cell's code) parse Python there, so every host-side parse
goes through one lock. Parsing is fast next to a model call, so the lock costs nothing visible.
"""

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str) -> ast.Module:
    """`ast.parse(source)`, one thread at a time."""
    with _LOCK:
        return ast.parse(source)
