"""Kuiper K/N with its bootstrap CI for every effort measure a run records.

The comparison table gives K for steps and tokens; a decomposing system spends its effort on
other axes too (sub-calls, pages read, dollars), and calibration can differ per axis: errors
may cluster among the questions that read the most pages but not among those that took the most
steps. A measure that is the same for every question (all $0 offline, no pages recorded) has no
order to calibrate against and is reported as n/a rather than as a perfect K = 0; so is a run
whose questions are all right (or all wrong).
"""

from collections.abc import Sequence
from typing import Any

from rlm_docs.eval.aggregate import effort_value, kuiper_block
from rlm_docs.eval.decomposition_table import field
from rlm_docs.eval.effort import kuiper_applicable
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.governor import axes


def measures() -> list[tuple[str, str]]:
    """(row field, human name) of the report's Kuiper table and figure, in their order: the
    `kuiper` measures of `governor.axes`."""
    return [(a.name, a.noun) for a in axes.kuiper_measures()]


def _values(rows: Sequence[ResultRow], measure: str) -> list[float]:
    axis = axes.axis(measure)
    if axis is not None and axis.source == "decomposition":  # flat column or record entry
        return [float(field(r, measure) or 0) for r in rows]
    return [effort_value(r, measure) for r in rows]


def kuiper_by_measure(rows: Sequence[ResultRow]) -> dict[str, dict[str, Any] | None]:
    """{measure: `aggregate.kuiper_block`} for each of `measures()`; None where every question has
    the same effort (or the run does not record the measure) or the same correctness (all right
    or all wrong: K is 0 whatever the effort)."""
    out: dict[str, dict[str, Any] | None] = {}
    correct = [float(bool(r.get("correct"))) for r in rows]
    for measure, _ in measures():
        values = _values(rows, measure)
        if not kuiper_applicable(values, correct):  # the rule of the comparison table too
            out[measure] = None
            continue
        flat = [dict(r) | {measure: v} for r, v in zip(rows, values, strict=True)]
        out[measure] = kuiper_block(flat, measure)
    return out
