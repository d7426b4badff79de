"""The answer record every system produces and every scorer reads: values, explanation, caveat.

An answer has three parts, kept apart from the prompt to the scorer so that scoring reads only
what is meant to be scored:

- `values`: short strings, the answer itself (an amount with its unit and scale, a name, one
  item per entity of a list, one number for a count). Only these go to the numeric, exact and
  ANLS* stages. `["Not answerable"]` is a refusal.
- `explanation`: free text: how the values were found, and for an open question the prose it
  asks for. The judge reads it with the values; the string stages never do.
- `caveat`: optional free text: something that would change the answer (another definition
  gives another figure, why the question cannot be answered). Never scored.

Stored records (`results.jsonl`, `predictions.parquet`, trajectories, `Prediction`) keep the
values under `answer`, MADQA's name for the field, with `explanation` and `caveat` beside it.
Records written before the three fields existed have only `answer`; `from_old_answer` reads
them: every item starting `Caveat:` becomes the caveat, the other items stay values (an old
record has no separate explanation).
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

REFUSAL = "Not answerable"
_CAVEAT = re.compile(r"^\s*caveats?\s*:\s*", re.IGNORECASE)


@dataclass
class Answer:
    """One answer: `values` (scored), `explanation`, `caveat` and the cited pages."""

    values: list[str] = field(default_factory=list)
    explanation: str = ""
    caveat: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)


def from_old_answer(items: Sequence[Any]) -> tuple[list[str], str]:
    """(values, caveat) of an answer list written before the record had a caveat field: items
    starting `Caveat:` are the caveat (joined by a space, the prefix dropped)."""
    values, caveats = [], []
    for item in items:
        text = str(item).strip()
        if _CAVEAT.match(text):
            caveats.append(_CAVEAT.sub("", text, count=1))
        elif text:
            values.append(text)
    return values, " ".join(caveats)


def stored_answer(record: dict[str, Any]) -> tuple[list[str], str, str]:
    """(values, explanation, caveat) of a stored record (`answer` holds the values); a record
    without a `caveat` key is an old one, read by `from_old_answer`."""
    answer = record.get("answer") or []
    items = [answer] if isinstance(answer, str) else list(answer)
    explanation = str(record.get("explanation") or "")
    if "caveat" in record:
        return [str(a) for a in items if str(a).strip()], explanation, str(record["caveat"] or "")
    values, caveat = from_old_answer(items)
    return values, explanation, caveat
