"""Paired comparison of two runs on the questions they share: accuracy difference, paired
bootstrap interval and p-value.

Two systems answering the same questions are compared question by question: the difference of
their mean scores is the mean of the per-question differences, and its uncertainty comes from
resampling questions (both runs' scores of a question stay together), which is far tighter than
two independent intervals when the systems agree on most questions. The interval is the
percentile interval of `bootstrap.N_BOOT` resampled mean differences (seed `bootstrap.SEED`,
as every report interval); the two-sided p-value is that of the interval's inversion: twice
the smaller share of resampled differences on either side of 0, with the +1 correction
`(1 + count) / (1 + N_BOOT)`, capped at 1. Questions that either run left undecided (a prose
gold no judge scored) are left out.
"""

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from rlm_docs.eval.aggregate import NEEDS_JUDGE
from rlm_docs.eval.bootstrap import N_BOOT, SEED


def paired_difference(
    a: Sequence[float], b: Sequence[float], *, n_boot: int = N_BOOT, seed: int = SEED
) -> dict[str, float]:
    """`{value, low, high, p_value, n}` of mean(a - b) for scores of the same questions."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if d.size == 0:
        return {"value": math.nan, "low": math.nan, "high": math.nan, "p_value": math.nan, "n": 0}
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, d.size, size=(n_boot, d.size))].mean(axis=1)
    low, high = np.quantile(means, [0.025, 0.975])
    below, above = int((means <= 0).sum()), int((means >= 0).sum())
    p = min(1.0, 2 * (1 + min(below, above)) / (1 + n_boot))
    return {
        "value": float(d.mean()),
        "low": float(low),
        "high": float(high),
        "p_value": p,
        "n": int(d.size),
    }


def paired_runs(a: Sequence[Mapping[str, Any]], b: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """`paired_difference` of two runs' rows over the question ids both decided."""
    scores_b = {r["id"]: r for r in b if r.get("stage") != NEEDS_JUDGE}
    pairs = [
        (float(r.get("score") or 0), float(scores_b[r["id"]].get("score") or 0))
        for r in a
        if r.get("stage") != NEEDS_JUDGE and r["id"] in scores_b
    ]
    return paired_difference([x for x, _ in pairs], [y for _, y in pairs])
