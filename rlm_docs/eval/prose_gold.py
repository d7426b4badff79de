"""Which gold answers only a judge can decide: prose golds.

A gold that is a value or a short span (`$8.70`, `Less well-off`, a list of names) is decided by
the numeric, exact and ANLS* stages. A gold that is prose (FinanceBench's open questions, every
KG-RAG answer: "No the operating margins of Adobe have recently declined from 36.8% in FY 2021
to 34.6% in FY2022. A drop by 2.2% in a year.") cannot be: any correct wording other than the
gold's own scores near 0 by ANLS*. Without a judge such a question is `needs_judge`: no score,
left out of the headline accuracy and counted apart (`rlm_docs.eval.scoring`).

The rule: a gold item is prose when it has at least `PROSE_WORDS` words, or at least
`SENTENCE_WORDS` words and a sentence end (`.`, `!` or `?` followed by a space or the end of
the item). A gold is prose when every one of its variants has a prose item.
"""

import re
from collections.abc import Sequence

PROSE_WORDS = 8
SENTENCE_WORDS = 5
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)")


def is_prose_item(text: str) -> bool:
    """Whether one gold item is a sentence rather than a value or a short span."""
    words = len(text.split())
    if words >= PROSE_WORDS:
        return True
    return words >= SENTENCE_WORDS and bool(_SENTENCE_END.search(text.strip()))


def is_prose_gold(variants: Sequence[Sequence[str]]) -> bool:
    """Whether every gold variant has a prose item (see the module docstring)."""
    if not variants:
        return False
    return all(
        any(is_prose_item(str(item)) for item in ([v] if isinstance(v, str) else v))
        for v in variants
    )
