"""ANLS* (Peer et al. 2025) via the maintained `anls_star` package.

The package matches list items optimally (Hungarian), scores each pair by normalised Levenshtein
similarity with the 0.5 threshold, and lower-cases / collapses whitespace. Gold answers in MADQA
are several acceptable variants, each a list of items, so the score is the best over variants.
"""

import warnings
from collections.abc import Sequence

from anls_star import anls_score


def anls_star(
    prediction: str | Sequence[str] | None, gold_variants: Sequence[Sequence[str]]
) -> float:
    """Best ANLS* of `prediction` (a string or list of items) over the gold answer variants.

    A missing or empty prediction scores 0 (never "not applicable"), as does an empty gold list.
    """
    if prediction is None:
        return 0.0
    items = [prediction] if isinstance(prediction, str) else [str(p) for p in prediction]
    if not items or not any(i.strip() for i in items) or not gold_variants:
        return 0.0
    best = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for variant in gold_variants:
            gold = [variant] if isinstance(variant, str) else [str(g) for g in variant]
            score = anls_score(gold, items, return_gt=False, return_key_scores=False)
            best = max(best, float(score))
            if best == 1.0:
                break
    return best
