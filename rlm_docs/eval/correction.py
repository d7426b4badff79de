"""Rogan–Gladen correction of a judge-measured accuracy for the judge's own errors.

With judge sensitivity `se` = P(judge says correct | truly correct) and specificity `sp` =
P(judge says incorrect | truly incorrect), the observed rate p estimates
`theta = (p + sp - 1) / (se + sp - 1)` (clipped to [0, 1]). The confidence interval uses the
delta method with se/sp treated as known: `SE = sqrt(p(1-p)/n) / (se + sp - 1)`, which is what
MADQA's harness does for a high-quality calibration. MADQA's defaults (se 0.98, sp 1.0, from
200 human-checked items) are used unless configured.
"""

import math
from dataclasses import dataclass

from scipy.stats import norm

from rlm_docs.errors import ConfigError

DEFAULT_SENSITIVITY = 0.98
DEFAULT_SPECIFICITY = 1.0


@dataclass(frozen=True)
class Corrected:
    """Observed rate, corrected estimate and its (1 - alpha) interval."""

    observed: float
    estimate: float
    low: float
    high: float


def rogan_gladen(
    observed: float,
    n: int,
    sensitivity: float = DEFAULT_SENSITIVITY,
    specificity: float = DEFAULT_SPECIFICITY,
    alpha: float = 0.05,
) -> Corrected:
    """Bias-corrected accuracy with a delta-method interval; ConfigError if se + sp <= 1."""
    for name, value in (("sensitivity", sensitivity), ("specificity", specificity)):
        if not 0 <= value <= 1:
            raise ConfigError(f"judge {name}: must be in [0, 1], got {value}")
    youden = sensitivity + specificity - 1
    if youden <= 0:
        raise ConfigError(
            f"judge sensitivity + specificity must exceed 1 (got {sensitivity} + {specificity})"
        )
    estimate = min(1.0, max(0.0, (observed + specificity - 1) / youden))
    if n <= 0:
        return Corrected(observed, estimate, math.nan, math.nan)
    se = math.sqrt(max(observed * (1 - observed), 0.0) / n) / youden
    z = float(norm.ppf(1 - alpha / 2))
    return Corrected(observed, estimate, max(0.0, estimate - z * se), min(1.0, estimate + z * se))
