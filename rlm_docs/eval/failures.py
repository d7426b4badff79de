"""Failed questions grouped by cause, for the line `eval` prints after a run.

A failed question (a model outage, a broken store) scores like a wrong answer, so a run with
failures still has an accuracy; the cause must be said where the accuracy is read, not only in
results.jsonl. Errors that went through the retry loop (`models.retry`) end with `(last error:
...)`: that last error is the cause (the attempt count and seconds around it differ per
question and would split one outage into many groups).
"""

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

_LAST_ERROR = re.compile(r"\(last error: (.*)\)\s*$", re.S)
MAX_CAUSE_CHARS = 200


def cause(error: str) -> str:
    """The part of a failed question's `error` that names what went wrong."""
    found = _LAST_ERROR.search(error)
    text = " ".join((found.group(1) if found else error).split())
    return text if len(text) <= MAX_CAUSE_CHARS else text[: MAX_CAUSE_CHARS - 3] + "..."


def failure_causes(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, int]]:
    """(cause, questions) of the failed rows, most frequent first."""
    counts = Counter(
        cause(str(r.get("error") or "unknown error")) for r in rows if r.get("status") == "failed"
    )
    return counts.most_common()


def failures_line(causes: list[tuple[str, int]]) -> str:
    """`3 failed: HTTP 500: boom (3)`; several causes joined by `; `."""
    total = sum(n for _, n in causes)
    return f"{total} failed: " + "; ".join(f"{text} ({n})" for text, n in causes)
