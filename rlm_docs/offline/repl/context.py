"""The policy when the REPL holds only `context` (a child `rlm_query`, the madqa prompt).

Score the paragraphs of `context` by question terms, read the best ones, and cite the
`[FILE: ...]` / `[PAGE n]` markers before the chosen paragraph (none in a plain string).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rlm_docs.offline.repl.readings import READ_PAGES, announce, pick_value, score_reading


def paragraphs(context: str) -> tuple[list[str], list[int]]:
    """The paragraphs of `context` (split at blank lines and page markers) and their offsets."""
    chunks, starts, pos = [], [], 0
    for m in [*re.finditer(r"\n\s*\n|\n(?=\[(?:END )?PAGE \d+\])", context), None]:
        end = m.start() if m else len(context)
        if context[pos:end].strip():
            chunks.append(context[pos:end])
            starts.append(pos)
        pos = m.end() if m else pos
    return (chunks, starts) if chunks else ([context], [0])


def marker_citation(context: str, start: int) -> list[dict]:
    """The file and page markers in force at offset `start`, as a citation list."""
    f, p = context.rfind("[FILE: ", 0, start + 7), context.rfind("[PAGE ", 0, start + 6)
    if f < 0 or p < f:
        return []
    name = context[f + 7 : context.find(" | ", f)]
    number = re.match(r"\d+", context[p + 6 : p + 14])
    return [{"file": name, "page": int(number.group(0))}] if number else []


def answer_from_context(plan: dict, context: str, read: Callable) -> dict:
    """`{"values": [...], "citations": [...]}` from the best-read paragraphs of `context`."""
    chunks, starts = paragraphs(context)

    def chunk_score(chunk: str) -> int:
        low = chunk.lower()
        return sum(1 for t in plan["terms"] if t[:6] in low)

    order = sorted(range(len(chunks)), key=lambda i: -chunk_score(chunks[i]))[:READ_PAGES]
    readings = read([f"Question: {plan['question']}\n\n{chunks[i]}" for i in order])
    scores = [score_reading(r, i, plan) for i, r in enumerate(readings)]
    if scores and max(scores) > 0:
        best = scores.index(max(scores))
        final_answer = {
            "values": [pick_value(readings[best], plan)],
            "citations": marker_citation(context, starts[order[best]]),
        }
    else:
        final_answer = {"values": [], "citations": []}
    announce(final_answer)
    return final_answer
