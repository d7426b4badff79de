"""Report figures of the decomposition record: how wide systems fanned out, and whether reading
more of the corpus went with right answers.

Both follow `plots`' readability rules (integer ticks for counts, legends off the data, labels
with units). Each returns False without writing anything when no row has the data it draws
(runs without decomposition records, or no `llm_query_batched` call at all), so the report can
say so instead of embedding an empty figure.
"""

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from rlm_docs.eval import plots
from rlm_docs.eval.decomposition_table import Group, batch_sizes, field, has_record
from rlm_docs.eval.plots import HumanCounts, power_of_two
from rlm_docs.eval.results_row import ResultRow

Run = tuple[str, Sequence[ResultRow]]
_JITTER = 0.28  # half-height of a strip's random vertical spread


def _length_label(target: int | None) -> str:
    return "all questions" if not target else f"{power_of_two(target)} tokens"


def fanout_histogram(found: Sequence[Group], path: Any) -> bool:
    """Per system, how many `llm_query_batched` calls had each batch size, stacked by context
    length when the rows are a generated workload at several lengths."""
    systems = list(dict.fromkeys(g.system for g in found))
    sizes = {s: [(g, batch_sizes(g.rows)) for g in found if g.system == s] for s in systems}
    drawn = [s for s in systems if any(b for _, b in sizes[s])]
    if not drawn:
        return False
    everything = [n for s in drawn for _, b in sizes[s] for n in b]
    low, top = min(everything), max(everything)
    bins = np.arange(low - 0.5, top + 1.5) if top - low < 40 else 20
    fig, axes = plt.subplots(len(drawn), 1, figsize=(8, 2.6 * len(drawn) + 0.4), squeeze=False)
    for ax, system in zip(axes[:, 0], drawn, strict=True):
        parts = [(g, b) for g, b in sizes[system] if b]
        labels = [
            f"{g.workload + ', ' if g.workload else ''}{_length_label(g.target_tokens)} "
            f"({len(b)} batches)"
            for g, b in parts
        ]
        ax.hist([b for _, b in parts], bins=bins, stacked=True, label=labels)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.xaxis.set_major_formatter(HumanCounts())
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("batch size (prompts per llm_query_batched call)")
        ax.set_ylabel("batches")
        ax.set_title(f"{system}: fan-out", fontsize=10)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    plots.save_png(fig, path)
    return True


def share_vs_correctness(runs: Sequence[Run], path: Any) -> bool:
    """One strip per run and outcome: each question's share of the corpus that reached a
    model (x, percent), correct and wrong answers on separate lines, the mean marked by a bar.
    Runs without records get no strip (the decomposition table shows their n/a)."""
    strips = []
    for name, rows in runs:
        recorded = [r for r in rows if has_record(r)]
        if not recorded:
            continue
        for outcome, label in ((True, "correct"), (False, "wrong")):
            mine = [r for r in recorded if bool(r.get("correct")) == outcome]
            shares = [100 * float(field(r, "corpus_share_read") or 0) for r in mine]
            strips.append((f"{name}: {label} ({len(mine)})", shares, outcome))
    if not any(shares for _, shares, _ in strips):
        return False
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(strips) + 1.4))
    for y, (_, shares, outcome) in enumerate(strips):
        if not shares:
            continue
        color = "tab:blue" if outcome else "tab:orange"
        jitter = rng.uniform(-_JITTER, _JITTER, len(shares))
        ax.scatter(shares, y + jitter, s=26, color=color, alpha=0.7, edgecolors="none")
        ax.plot([np.mean(shares)] * 2, [y - 0.4, y + 0.4], color="black", linewidth=2)
    ax.set_yticks(range(len(strips)), [label for label, _, _ in strips], fontsize=8)
    ax.set_ylim(len(strips) - 0.5, -0.5)
    top = max(max(s, default=0.0) for _, s, _ in strips)
    ax.set_xlim(-0.02 * max(top, 1.0), max(top, 1.0) * 1.08)
    ax.set_xlabel("share of the corpus's characters that reached a model (%; bar = mean)")
    ax.set_title("Share of corpus read vs correctness (one dot per question)")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    plots.save_png(fig, path)
    return True
