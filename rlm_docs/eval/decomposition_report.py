"""The decomposition part of `rlm-docs report`: how each system cut the corpus and whether its
effort went where it paid.

Given the report's runs it draws what their rows support and says why the rest is absent:
- the decomposition table (`decomposition_table`) per system, workload and length;
- Kuiper K/N with the bootstrap CI per effort measure (`kuiper_measures`), table and figure;
- accuracy and cost against context length (`scaling.plot_scaling`, the study's own figure)
  when some workload was run at two or more lengths;
- the fan-out histogram and share of corpus read vs correctness (`decomposition_plots`) when
  the rows carry decomposition records with batches / shares.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rlm_docs.eval import decomposition_plots, decomposition_table, plots
from rlm_docs.eval.aggregate import decided_rows, summarize
from rlm_docs.eval.kuiper_measures import kuiper_by_measure, measures
from rlm_docs.eval.scaling import plot_scaling, scaling_row

Section = tuple[str, list[str], list[list[str]]]
SCALING_PNG = "accuracy_cost_vs_context_length.png"
FANOUT_PNG = "fanout_histogram.png"
SHARE_PNG = "corpus_share_vs_correctness.png"
KUIPER_PNG = "kuiper_by_measure.png"
_NO_RECORDS = "no decomposition records in these runs"


def _kuiper_cell(block: dict[str, Any] | None) -> str:
    if not block:
        return "n/a"
    return f"{block['normalized']:.3f} [{block['low']:.3f}, {block['high']:.3f}]"


def _scaling_rows(found: Sequence[decomposition_table.Group]) -> list[dict[str, Any]]:
    """The study's rows for every (workload, length, system) group; empty unless some workload
    of some system has two or more lengths (one point is not a curve)."""
    lengths: dict[tuple[str, str], set[int]] = {}
    for g in found:
        if g.workload is not None and g.target_tokens:
            lengths.setdefault((g.workload, g.system), set()).add(g.target_tokens)
    if not any(len(v) >= 2 for v in lengths.values()):
        return []
    return [
        scaling_row(
            g.workload,
            g.target_tokens,
            g.context_tokens,
            g.system,
            g.rows,
            summarize(g.rows, with_kuiper=False),
        )
        for g in found
        if g.workload is not None and g.target_tokens
    ]


def decomposition_part(
    runs: Sequence[Any], target: Path
) -> tuple[list[Section], list[tuple[str, str]], list[str]]:
    """(table sections, drawn figures as (file, title), notes on what was not drawn) for the
    report's runs (objects with `label`, `series` and `rows`); figures are written into
    `target`."""
    found = decomposition_table.groups([(r.series, r.rows) for r in runs])
    headers, rows = decomposition_table.table(found)
    kuiper = [(r.label, kuiper_by_measure(decided_rows(r.rows))) for r in runs]
    sections: list[Section] = [
        ("Decomposition", headers, rows),
        (
            "Kuiper K/N per effort measure [95% bootstrap CI]",
            ["System", *(label for _, label in measures())],
            [[name, *(_kuiper_cell(b.get(m)) for m, _ in measures())] for name, b in kuiper],
        ),
    ]
    figures: list[tuple[str, str]] = []
    notes: list[str] = []
    recorded = any(decomposition_table.has_record(row) for r in runs for row in r.rows)
    scaling = _scaling_rows(found)
    if scaling:
        plot_scaling(scaling, target / SCALING_PNG)
        figures.append((SCALING_PNG, "Accuracy and cost vs context length"))
    else:
        notes.append(
            "- Accuracy and cost vs context length: not drawn (no generated workload run at two "
            "or more lengths among these runs)."
        )
    if decomposition_plots.fanout_histogram(found, target / FANOUT_PNG):
        figures.append((FANOUT_PNG, "Fan-out: batch sizes of llm_query_batched"))
    else:
        why = "no question made an llm_query_batched call" if recorded else _NO_RECORDS
        notes.append(f"- Fan-out histogram: not drawn ({why}).")
    named = [(r.label, decided_rows(r.rows)) for r in runs]  # correctness is known
    if decomposition_plots.share_vs_correctness(named, target / SHARE_PNG):
        figures.append((SHARE_PNG, "Share of corpus read vs correctness"))
    else:
        notes.append(f"- Share of corpus read vs correctness: not drawn ({_NO_RECORDS}).")
    if plots.kuiper_by_measure(kuiper, measures(), target / KUIPER_PNG):
        figures.append((KUIPER_PNG, "Kuiper K/N per effort measure"))
    notes.append(
        "- Decomposition: per question means over the questions with a decomposition record "
        "(N says how many when not all); fan-out pools every llm_query_batched batch; corpus "
        "read = share of the corpus's characters that reached a model; strategy mix = share "
        "of questions with each tag. Kuiper per measure: n/a where every question has the same "
        "effort or the same correctness."
    )
    return sections, figures, notes
