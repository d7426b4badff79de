"""The numeric stage of answer scoring: quantities with scale words and units, compared with a
stated tolerance.

ANLS* compares characters, so `$1.33` against gold `$2.35` (ANLS 0.6) passes its 0.5 threshold
while `$12,645 million` against gold `12645.00` fails. When a gold answer variant is a bare
quantity, this stage decides instead, before any string stage or judge:

- Quantities are read with an optional sign (`-`, `−`, or accounting parentheses `(3.7)`), a
  currency (`$`, `USD`, `€`, `£`), thousands separators, a scale word (thousand/k, million/mn/m,
  billion/bn/b, trillion/tn) and a unit (`%`/percent, bps, days, `x`/times).
- Tolerance: relative 1% of the gold, or the gold's own rounding when that is wider (gold `4.6`
  accepts 4.55..4.65, gold `0.01` accepts 0.005..0.015); integer golds get only the 1%.
- Scale: when both sides carry a scale word the amounts are compared; when only one does, the
  other side is read as stated in thousands, millions, billions or trillions (gold `12645.00` to a
  question asking for USD millions matches `$12,645 million` and `$12.645 billion`). Two bare
  numbers are compared as written.
- Units: `%` on one side only also compares the other side times 100 (`0.308` vs `30.8%`); bps
  are hundredths of a percent; different unit kinds (days vs %) never match. A negative gold also
  matches its magnitude in an answer that says it decreased.
- Years (a bare integer 1900..2100) in the answer are ignored unless the gold is one.
- Number words zero..twenty count as numbers (`three` = `3`).
- A list gold of several bare quantities needs each of them, in any order, in the answer.

What is read: the answer's `values` only (`rlm_docs.answer_record`); figures in its explanation
or caveat never count. Within a value, a parenthetical aside (`$5,818 million (total current
assets $19,815M less total current liabilities $13,997M)`) is working, not the value, and is
not read; an accounting negative `(3.7)` is a quantity, not an aside.

- Values that are bare quantities (a number with its currency, scale and unit, and nothing
  else once asides are removed) are the answer: it is right when they cover a numeric gold
  variant and state no other quantity. Several different bare quantities for fewer gold
  quantities are a hedge (alternatives, e.g. `["0.627", "0.595"]` for gold 0.627): wrong.
  Other values (phrases such as `Gross profit $9,912 million / total assets $15,803 million`
  beside a bare `0.627`) are then not read.
- When no value is a bare quantity (values written as phrases: `grew from $5.2B to $6.1B`),
  every quantity of the values counts: the answer is right when one of them matches a numeric
  gold variant, wrong when it has no quantity or none matches, whatever ANLS* says (when some
  gold variants are text, a miss falls through to the string stage for them). A phrase listing
  more than `MAX_QUANTITIES` distinct quantities (plus one per further item of a list gold)
  with a match is a hedge the stage does not settle: it falls through to the string stage.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_QUANTITIES = 3
RELATIVE_TOLERANCE = 0.01
_SCALES = {
    "thousand": 1e3,
    "thousands": 1e3,
    "k": 1e3,
    "million": 1e6,
    "millions": 1e6,
    "mn": 1e6,
    "mm": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "billions": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "trillions": 1e12,
    "tn": 1e12,
}
_UNITS = {
    "%": "percent",
    "percent": "percent",
    "per cent": "percent",
    "percentage points": "percent",
    "percentage point": "percent",
    "pp": "percent",
    "bps": "bps",
    "basis points": "bps",
    "basis point": "bps",
    "days": "days",
    "day": "days",
    "x": "times",
    "times": "times",
}
_CURRENCY = r"(?:US\$|USD\s?|EUR\s?|GBP\s?|\$|€|£)"
_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
_NUMBER = (
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+|(?:"
    + "|".join(sorted(_WORDS, key=len, reverse=True))
    + r")(?![a-z])"
)
_SCALE = "|".join(sorted((re.escape(s) for s in _SCALES), key=len, reverse=True))
_UNIT = "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True))
_QUANTITY = re.compile(
    rf"(?<![\w.,])(?P<open>\(\s*)?(?P<sign1>[-−–])?(?P<cur>{_CURRENCY})?\s?(?P<sign2>[-−–])?"
    rf"(?<![\w.,])(?P<num>{_NUMBER})(?!\d|-[kq]\b)"
    rf"(?:\s?(?P<scale>{_SCALE})(?![a-z]))?"
    rf"(?:\s?(?P<unit>{_UNIT})(?![a-z]))?"
    rf"(?P<close>\s*\))?",
    re.IGNORECASE,
)
# Words a bare-quantity gold may carry besides its number ("USD 5.2 billion", "approx. 4%").
_FILLER = re.compile(
    r"\b(?:usd|dollars?|us|approximately|approx|about|around|roughly|in|of)\b|[~≈.,;:!?'\"\s]",
    re.IGNORECASE,
)
_DECREASE = re.compile(
    r"\b(?:decrease[ds]?|declined?|declines|down|lower|fell|fall|drop(?:ped)?|loss|negative|"
    r"reduc(?:ed|tion))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """One number as written: signed mantissa, scale factor, unit kind and gold rounding."""

    mantissa: float
    scale: float = 1.0
    unit: str = ""
    currency: bool = False
    decimals: int = 0
    year_like: bool = False

    @property
    def value(self) -> float:
        return self.mantissa * self.scale


def _parse(m: re.Match[str]) -> Quantity:
    word = m["num"].lower()
    raw = str(_WORDS.index(word)) if word in _WORDS else m["num"].replace(",", "")
    mantissa = float(raw)
    negative = bool(m["sign1"] or m["sign2"]) or bool(m["open"] and m["close"])
    scale_word = (m["scale"] or "").lower()
    unit = _UNITS.get(" ".join((m["unit"] or "").lower().split()), "")
    decimals = len(raw.partition(".")[2])
    plain = not (m["cur"] or scale_word or unit or decimals or "," in m["num"])
    return Quantity(
        mantissa=-mantissa if negative else mantissa,
        scale=_SCALES.get(scale_word, 1.0),
        unit=unit,
        currency=bool(m["cur"]),
        decimals=decimals,
        year_like=plain and 1900 <= mantissa <= 2100,
    )


def quantities(text: str) -> list[Quantity]:
    """Every quantity in `text`, in order."""
    return [_parse(m) for m in _QUANTITY.finditer(text)]


def bare_quantity(text: str) -> Quantity | None:
    """The quantity when `text` is nothing but one quantity (plus currency/filler words)."""
    found = list(_QUANTITY.finditer(text))
    if len(found) != 1:
        return None
    rest = text[: found[0].start()] + " " + text[found[0].end() :]
    return _parse(found[0]) if not _FILLER.sub("", rest) else None


def numeric_gold(variants: Sequence[Sequence[str]]) -> list[list[Quantity]]:
    """The quantities of every variant whose items are all bare quantities (empty: the gold
    is not numeric)."""
    out = []
    for variant in variants:
        items = [variant] if isinstance(variant, str) else list(variant)
        found = [bare_quantity(item) for item in items]
        quantities = [q for q in found if q is not None]
        if found and len(quantities) == len(found):
            out.append(quantities)
    return out


def _close(answer: float, gold: float, slack: float) -> bool:
    return abs(answer - gold) <= max(RELATIVE_TOLERANCE * abs(gold), slack) + 1e-9 * abs(gold)


def _in_percent(q: Quantity) -> float:
    return q.value / 100 if q.unit == "bps" else q.value


def matches(answer: Quantity, gold: Quantity, decreased: bool = False) -> bool:
    """Whether `answer` states the gold quantity (see module docstring for the rules)."""
    kinds = {answer.unit or "", gold.unit or ""} - {""}
    if len(kinds - {"percent", "bps"}) + bool(kinds & {"percent", "bps"}) > 1:
        return False
    slack = 0.5 * 10**-gold.decimals if gold.decimals else 0.0
    a, g = _in_percent(answer), _in_percent(gold)
    candidates = [a]
    if answer.unit in ("percent", "bps") and not gold.unit:
        candidates.append(a / 100)
    elif gold.unit in ("percent", "bps") and not answer.unit:
        candidates.append(a * 100)
    if decreased and g < 0 and a > 0:
        candidates += [-c for c in candidates]
    if (answer.scale == 1.0) != (gold.scale == 1.0):
        unscaled_is_answer = answer.scale == 1.0
        factors = [1e3**k for k in range(5)]
        for c in list(candidates):
            for f in factors:
                if unscaled_is_answer and _close(c * f, g, slack * gold.scale):
                    return True
                if not unscaled_is_answer and _close(c, g * f, slack * f):
                    return True
        return False
    return any(_close(c, g, slack * gold.scale) for c in candidates)


def _covers(found: list[Quantity], gold: list[Quantity], decreased: bool) -> bool:
    """Every gold item is matched by its own answer quantity (greedy, in gold order)."""
    free = list(found)
    for g in gold:
        hit = next((q for q in free if matches(q, g, decreased)), None)
        if hit is None:
            return False
        free.remove(hit)
    return True


def without_asides(text: str) -> str:
    """`text` with its parenthetical asides blanked out (nested ones included); a group that
    is itself one quantity (an accounting negative such as `(3.7)` or `($1.2 million)`) stays.
    Unbalanced parentheses are left as written."""
    out, depth, start, kept = [], 0, 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            start = i if depth == 0 else start
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
            if depth == 0 and bare_quantity(text[start : i + 1]) is None:
                out += [text[kept:start], " "]
                kept = i + 1
    return "".join(out) + text[kept:]


def numeric_verdict(values: Sequence[str], gold_variants: Sequence[Sequence[str]]) -> bool | None:
    """True / False when the numeric stage decides, None when it does not apply or abstains
    (the rules of the module docstring). `values` are the answer's values only.

    A variant of several quantities (a list answer) needs each of them in the answer."""
    gold = numeric_gold(gold_variants)
    if not gold:
        return None
    all_numeric = len(gold) == len(gold_variants)
    read = [without_asides(v) for v in values]
    text = " ; ".join(read)
    decreased = bool(_DECREASE.search(text))
    years_ok = any(g.year_like for variant in gold for g in variant)
    bare = [q for q in (bare_quantity(v) for v in read) if q is not None]
    bare = [q for q in bare if not q.year_like or years_ok]
    if bare:
        covered = [variant for variant in gold if _covers(bare, variant, decreased)]
        if not covered:
            return False if all_numeric else None
        stated = len({(q.value, q.unit) for q in bare})
        return stated <= max(len(variant) for variant in covered)
    found = [q for q in quantities(text) if not q.year_like or years_ok]
    covered = [variant for variant in gold if _covers(found, variant, decreased)]
    if not covered:
        return False if all_numeric else None
    allowed = max(len(variant) for variant in covered) + MAX_QUANTITIES - 1
    if len({(q.value, q.unit) for q in found}) > allowed:
        return None
    return True
