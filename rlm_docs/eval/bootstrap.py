"""Percentile bootstrap confidence intervals, resampling questions with replacement.

Every aggregate in a report (accuracy, F1s, Kuiper, tokens, dollars) gets an interval from the
same resampling scheme, seeded, so two reports of the same run agree to the digit.
"""

import math
from collections.abc import Callable, Sequence

import numpy as np


def bootstrap_mean_ci(
    values: Sequence[float], *, n_boot: int = 2000, alpha: float = 0.05, seed: int = 0
) -> tuple[float, float]:
    """Interval for the mean of `values` (NaN, NaN for an empty input)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high))


def bootstrap_ci(
    statistic: Callable[[np.ndarray], float],
    n: int,
    *,
    n_boot: int = 500,
    alpha: float = 0.05,
    seed: int = 0,
) -> tuple[float, float]:
    """Interval for any `statistic(indices)` of `n` items, e.g. a Kuiper value of resampled rows."""
    if n == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    stats = np.array([statistic(rng.integers(0, n, size=n)) for _ in range(n_boot)], dtype=float)
    stats = stats[np.isfinite(stats)]
    if stats.size == 0:
        return (math.nan, math.nan)
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high))
