"""How much of the corpus a fixed-reading baseline actually read, over a run's questions.

`long-context` sends the page-aligned prefix of the corpus that fits its window and `map-reduce`
reads chunks until its sub-call budget ends (each records this in the row's `info`). A cut-short
reading changes what the accuracy means (long-context over a 40-filing store saw the
alphabetically first 2% of it), so the eval line, the report's comparison table and its notes
say it next to the accuracy. Systems that choose what to read (rlm, bm25-agent, static-rag)
have no such record; the decomposition table gives their share of pages read.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Coverage:
    """A run's reading: `read` of `total` units (pages or chunks) per question, as the range
    over its questions, and how many questions were cut short and by what."""

    system: str
    unit: str  # "pages" | "chunks"
    read_low: int
    read_high: int
    total: int
    share: float  # units read / units there, over all questions
    questions: int
    cut: int  # questions whose reading was cut short
    cut_by: tuple[str, ...]  # what cut them: the window, or a budget axis

    def short(self) -> str:
        """For a table cell: `2.2% (truncated)`, `58.5% (cut by sub_calls)`, `100%`."""
        if not self.cut:
            return f"{self.share:.1%}"
        how = "truncated" if self.unit == "pages" else "cut by " + ", ".join(self.cut_by)
        return f"{self.share:.1%} ({how})"

    def sentence(self) -> str:
        """`long-context saw 2.2% of the corpus (137 of 8,485 pages; truncated by
        context_window in 24 of 24 questions)`."""
        read = (
            f"{self.read_low:,}"
            if self.read_low == self.read_high
            else f"{self.read_low:,}-{self.read_high:,}"
        )
        text = f"{self.system} saw {self.share:.1%} of the corpus ({read} of {self.total:,}"
        text += f" {self.unit}"
        if self.cut:
            verb = "truncated" if self.unit == "pages" else "cut short"
            text += (
                f"; {verb} by {', '.join(self.cut_by)} in {self.cut} of {self.questions} questions"
            )
        return text + ")"


def _info(row: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    info = row.get("info")
    value = info.get(key) if isinstance(info, dict) else None
    return value if isinstance(value, dict) else None


def corpus_coverage(rows: Iterable[Mapping[str, Any]]) -> Coverage | None:
    """The run's reading, or None for a system that records none."""
    rows = list(rows)
    system = str(next((r.get("system") for r in rows if r.get("system")), "the system"))
    seen: list[tuple[int, int, bool, str | None]] = []  # (read, total, cut, by)
    unit = "pages"
    for row in rows:
        context, chunks = _info(row, "context"), _info(row, "map")
        if context is not None:
            truncated = bool(context.get("truncated"))
            by = str(context.get("limited_by")) if truncated else None
            seen.append((int(context["pages_kept"]), int(context["pages_total"]), truncated, by))
        elif chunks is not None:
            unit = "chunks"
            cut = int(chunks.get("not_read") or 0) > 0
            by = str(row.get("stop_axis") or "budget") if cut else None
            seen.append((int(chunks["read"]), int(chunks["chunks"]), cut, by))
    if not seen:
        return None
    totals = sum(t for _, t, _, _ in seen)
    return Coverage(
        system=system,
        unit=unit,
        read_low=min(r for r, _, _, _ in seen),
        read_high=max(r for r, _, _, _ in seen),
        total=max(t for _, t, _, _ in seen),
        share=sum(r for r, _, _, _ in seen) / totals if totals else 0.0,
        questions=len(seen),
        cut=sum(1 for _, _, c, _ in seen if c),
        cut_by=tuple(sorted({b for _, _, c, b in seen if c and b})),
    )
