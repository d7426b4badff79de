"""An append-only record of every model call, the ground truth for cost and effort analysis.

Totals are recomputed from the entries (costs summed in integer nano-dollars), so a roll-up
always equals the sum of what the providers reported, with nothing counted twice.
"""

import json
import os
import threading
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.errors import DatasetError
from rlm_docs.models.prices import sum_usd

ROLES = ("root", "sub", "judge", "extract")


@dataclass(frozen=True)
class LedgerEntry:
    """One model call (successful or not) and what it cost."""

    question_id: str
    depth: int
    role: str
    model: str
    backend: str
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost_usd: float
    latency_s: float
    cached: bool
    usage_source: str
    error: str | None
    started_at: float
    call_id: str
    parent_id: str | None
    price_known: bool = True
    attempts: int = 1
    cache_write_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form."""
        return asdict(self)


_FIELD_NAMES = {f.name for f in fields(LedgerEntry)}


class Ledger:
    """Thread-safe list of `LedgerEntry` shared by a governor and all its children."""

    def __init__(self, entries: list[LedgerEntry] | None = None) -> None:
        self._entries: list[LedgerEntry] = list(entries or [])
        self._lock = threading.Lock()
        self._seq = len(self._entries)

    def __repr__(self) -> str:
        return f"Ledger({len(self._entries)} entries)"

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> list[LedgerEntry]:
        """A snapshot copy of the entries, in recording order."""
        with self._lock:
            return list(self._entries)

    def new_call_id(self) -> str:
        """A call id unique within this ledger (`c000001`, ...)."""
        with self._lock:
            self._seq += 1
            return f"c{self._seq:06d}"

    def append(self, entry: LedgerEntry) -> None:
        """Record one call."""
        with self._lock:
            self._entries.append(entry)

    def totals(self, question_id: str | None = None, role: str | None = None) -> dict[str, Any]:
        """Sums over the entries matching `question_id` and `role` (None = all)."""
        rows = [
            e
            for e in self.entries
            if (question_id is None or e.question_id == question_id)
            and (role is None or e.role == role)
        ]
        return {
            "calls": len(rows),
            "errors": sum(1 for e in rows if e.error),
            "cache_hits": sum(1 for e in rows if e.cached),
            "input_tokens": sum(e.input_tokens for e in rows),
            "output_tokens": sum(e.output_tokens for e in rows),
            "cached_tokens": sum(e.cached_tokens for e in rows),
            "cache_write_tokens": sum(e.cache_write_tokens for e in rows),
            "cost_usd": sum_usd([e.cost_usd for e in rows]),
            "latency_s": sum(e.latency_s for e in rows),
            "max_depth": max((e.depth for e in rows), default=0),
            "price_unknown_calls": sum(1 for e in rows if not e.price_known),
        }

    def to_jsonl(self, path: str | os.PathLike[str]) -> None:
        """Write one JSON object per entry, atomically."""
        lines = [json.dumps(e.to_dict(), ensure_ascii=False) for e in self.entries]
        atomic_write_text(path, "".join(line + "\n" for line in lines))

    @classmethod
    def from_jsonl(cls, path: str | os.PathLike[str]) -> "Ledger":
        """Read a ledger written by `to_jsonl`; DatasetError names the file and line on bad input."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise DatasetError(f"ledger {p}: cannot read ({exc.strerror})") from None
        entries = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise TypeError("not an object")
                unknown = set(data) - _FIELD_NAMES
                if unknown:
                    raise TypeError(f"unknown fields {sorted(unknown)}")
                entries.append(LedgerEntry(**data))
            except (json.JSONDecodeError, TypeError) as exc:
                raise DatasetError(f"ledger {p}: line {n}: invalid entry ({exc})") from None
        return cls(entries)
