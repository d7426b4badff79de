"""Percentile bootstrap confidence intervals, resampling questions with replacement.

Every mean in a report (accuracy, F1s, tokens, dollars) gets an interval from the same seeded
resampling scheme, so two reports of the same run agree to the digit (Kuiper has its own
vectorised resampler in `kuiper.kuiper_bootstrap`).
"""

import math
from collections.abc import Sequence

import numpy as np

# The one resampling scheme of every report and `eval` summary: same seed, same count.
N_BOOT = 1000
SEED = 0


def bootstrap_mean_ci(
    values: Sequence[float], *, n_boot: int = N_BOOT, alpha: float = 0.05, seed: int = SEED
) -> tuple[float, float]:
    """Interval for the mean of `values` (NaN, NaN for an empty input)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n_boot, x.size))].mean(axis=1)
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(low), float(high))
