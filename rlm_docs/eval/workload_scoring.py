"""Scorers of the generated workloads, chosen by a question's `scorer` field.

- `oolong`: OOLONG-synth's released scorer (data set README, section 3.6): the candidate is
  the text after the last `:` (or a short reply / the last word when there is none), `*[]`
  removed; exact string match, a comparison phrase contained in the gold phrase, or for
  numeric golds partial credit 0.75^|gold - answer| when the candidate parses as an integer.
- `oolong-pairs`: F1 over the set of `(a, b)` integer pairs in the answer, each normalised to
  (low, high), self-pairs dropped, duplicates removed. Both sets empty -> 1, exactly one empty
  -> 0 (README section 4.4). Gold is `answer_variants[0]` written the same way (`none` = empty).
- `needle`: F1 over the set of numbers of five or more digits in the answer against the
  planted values (so a stray page number does not count against it; a wrong value does).

The answer's values are joined with newlines into one response, as a model's reply would be.

`correct` (what Kuiper and the error taxonomy count): for `oolong` only an exact answer (score
1): a count off by one earns partial credit in the score (0.75) but is not a correct count;
for `oolong-pairs` and `needle`, F1 >= 0.5. The headline of a workload run is the mean score,
as OOLONG reports it (`aggregate.scoring_method`).
"""

import math
import re
from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

from rlm_docs.eval.anls import anls_star

K = TypeVar("K", bound=Hashable)

_PHRASES = ("more common", "less common", "same frequency")
_PAIR = re.compile(r"\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)")
# A grouped number may not start right after a comma, so a long "1,111,111,..." run is tried
# from its first digit only (linear, not quadratic, on model text).
_BIG_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d,])|\d{5,}")


def oolong_candidate(response: str) -> str:
    """The answer OOLONG's parser takes from a reply."""
    if ":" not in response:
        return response if len(response) < 20 else (response.split() or [""])[-1]
    candidate = response.rsplit(":", 1)[1].strip()
    candidate = re.sub(r"[*\[\]]", "", candidate)
    if len(candidate) >= 20:
        for phrase in _PHRASES:
            if phrase in candidate:
                return phrase
    return candidate


def oolong_score(response: str, gold: str, answer_type: str) -> float:
    """OOLONG's per-question score (1, 0, or numeric partial credit)."""
    candidate = oolong_candidate(response)
    if candidate == gold:
        return 1.0
    if candidate in _PHRASES and candidate in gold:
        return 1.0
    if answer_type == "numeric":
        try:
            return 0.75 ** abs(int(gold) - int(candidate))
        except ValueError:
            return 0.0
    return 0.0


def pair_set(text: str) -> set[tuple[int, int]]:
    """The distinct (low, high) pairs of distinct integers written as `(a, b)` in `text`."""
    pairs = set()
    for a, b in _PAIR.findall(text):
        x, y = int(a), int(b)
        if x != y:
            pairs.add((min(x, y), max(x, y)))
    return pairs


def set_f1(predicted: set[K], gold: set[K]) -> dict[str, float]:
    """Precision, recall and F1 with the README's empty-set conventions."""
    if not predicted and not gold:
        return {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    hit = len(predicted & gold)
    precision = hit / len(predicted) if predicted else 0.0
    recall = hit / len(gold) if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if hit else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def numbers(text: str) -> set[str]:
    """Numbers of five or more digits (thousands separators removed)."""
    return {m.replace(",", "") for m in _BIG_NUMBER.findall(text)}


def score_workload(
    scorer: str, extra: dict[str, Any], variants: list[list[str]], answer: Sequence[str]
) -> dict[str, Any]:
    """`{anls, score, stage, judgment, ...}` of one answer under workload scorer `scorer`."""
    response = "\n".join(answer)
    gold = variants[0]
    if scorer == "oolong":
        score = oolong_score(response, gold[0], str(extra.get("answer_type", "")))
        return {
            "anls": anls_star(list(answer), variants),
            "score": score,
            "stage": scorer,
            "judgment": None,
            "correct": score == 1.0,
        }
    if scorer == "oolong-pairs":
        f1 = set_f1(pair_set(response), pair_set("\n".join(gold)))
    elif scorer == "needle":
        f1 = set_f1(numbers(response), {g.replace(",", "") for g in gold})
    else:
        raise ValueError(f"unknown scorer {scorer!r}")
    anls = f1["f1"] if scorer == "oolong-pairs" else anls_star(list(answer), variants)
    return {
        "anls": anls,
        "score": f1["f1"],
        "stage": scorer,
        "judgment": None,
        "correct": f1["f1"] >= 0.5,
    } | {k: v for k, v in f1.items() if k != "f1" and not math.isnan(v)}


SCORERS = ("oolong", "oolong-pairs", "needle")
