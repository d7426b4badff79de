"""The corpus policy: locate the filing, find pages, read them, decide, compute (sandbox code).

1. `likely_filings` (`repl.filings`); 2. the pages (`repl.pages`); 3. one extractive sub-call
per page (`read`: the batched sub-call, or `readings.read_all` without sub-calls); 4. score the
readings (question terms covered, a number or year cell when an amount is asked, agreement
across pages, statement page, likeliest filing), cite the page and state the value in the unit
the question asks for; 5. compute what the question defines (`repl.compute`), which replaces
the extractive answer when every value is found.
"""

from __future__ import annotations

from collections.abc import Callable

from rlm_docs.offline.repl.compute import computed_answer
from rlm_docs.offline.repl.filings import likely_filings
from rlm_docs.offline.repl.pages import page_bonus, page_pool, ranked
from rlm_docs.offline.repl.readings import (
    READ_PAGES,
    announce,
    formatted,
    pick_value,
    score_reading,
)


def decide(plan: dict, pages: list, readings: list[str], boost: Callable, page: Callable) -> tuple:
    """(final answer, index of the chosen reading or None). A reading's score is boosted by
    `boost(i, agreeing readings)` (statement page, likely filing) when it names anything."""
    values = [pick_value(r, plan) for r in readings]
    scores = []
    for i, r in enumerate(readings):
        agree = sum(1 for j, v in enumerate(values) if j != i and v and v == values[i])
        base = score_reading(r, i, plan, pages[i][0])
        scores.append(base + boost(i, agree) if base > 0 else base)
    for (d, p), s, r in zip(pages, scores, readings, strict=False):
        print(f"{d} p.{p} score={s:.2f}: {r.splitlines()[0][:160]}")
    if not scores or max(scores) <= 0:
        return {"values": [], "citations": []}, None
    i = scores.index(max(scores))
    d, p = pages[i]
    value = formatted(values[i], page(d, p), readings[i].splitlines()[0], plan)
    explanation = f"Read from {d} page {p}."
    return {"values": [value], "explanation": explanation, "citations": [{"file": d, "page": p}]}, i


def answer_from_corpus(
    plan: dict,
    search: Callable,
    page: Callable,
    files: Callable,
    cite: Callable,
    read: Callable,
) -> dict:
    """`{"values": [...], "explanation": "...", "citations": [...]}` for `plan` (the host's reading of the question,
    `rlm_docs.offline.root.plan`), from the corpus helpers passed in."""
    likely = likely_filings(plan, search, files)
    weight = dict(zip(likely, (1.0, 0.3), strict=False))
    pool = page_pool(plan, likely, weight, search)
    bonus = page_bonus(plan, pool, weight, page)
    best_pages = ranked(pool, bonus)[:READ_PAGES]
    print("candidate pages:", best_pages)
    question = plan["question"]
    prompts = [
        f"Question: {question}\nDocument: {d} page {p}\n\n{page(d, p)}" for d, p in best_pages
    ]
    readings = read(prompts) if prompts else []

    def boost(i: int, agree: int) -> float:
        primary = 3 * weight.get(best_pages[i][0], 0.3) if likely else 0.0
        return 0.5 * agree + 2 * bonus.get(best_pages[i], 0.0) + primary

    final_answer, chosen = decide(plan, best_pages, readings, boost, page)
    if chosen is not None:
        cite(*best_pages[chosen])
    if plan["compute"] and likely and plan["years"]:
        candidates = ranked(pool, bonus)
        final_answer = (
            computed_answer(plan, likely[0], candidates, search, page, cite) or final_answer
        )
    announce(final_answer)
    return final_answer
