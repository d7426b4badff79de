"""Step 2 of the corpus policy: the pages to read (sandbox code).

Search inside the likely filings for the question's terms, and for the title of the financial
statement the question names; pages that look like the statement it needs get a bonus.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rlm_docs.offline.repl.statements import STATEMENTS, statement_bonus


def local_query(query: str, doc: str, years: list[str]) -> str:
    """Inside one filing its company and year are on every page: drop them from the query."""
    own = set(re.split(r"[^a-z0-9]+", doc.lower()))
    kept = [
        t
        for t in query.split()
        if t not in years and t not in own and not any(o.startswith(t) for o in own if len(t) >= 3)
    ]
    return " ".join(kept) or query


def page_pool(plan: dict, likely: list[str], weight: dict, search: Callable) -> dict:
    """`{(doc, page): votes}` from the searches in the likely filings (rank-discounted)."""
    queries = [" ".join(plan["terms"])]
    for key, title in STATEMENTS.items():
        if key in plan["question"].lower():
            queries.append(title + " " + queries[0])
    pool: dict = {}

    def add(hits: list[dict], share: float) -> None:
        for rank, h in enumerate(hits):
            key = (h["file"], h["page"])
            pool[key] = pool.get(key, 0.0) + share / (1 + rank)

    for d in likely:
        for q in queries:
            add(search(local_query(q, d, plan["years"]), k=8, doc=d), weight[d])
    if not likely:
        add(search(plan["question"], k=8), 1.0)
    return pool


def page_bonus(plan: dict, pool: dict, weight: dict, page: Callable) -> dict:
    """Each pooled page's statement bonus, scaled by its filing's weight."""
    return {
        key: statement_bonus(page(*key), plan["titles"], plan["quantitative"])
        * weight.get(key[0], 0.3)
        for key in pool
    }


def ranked(pool: dict, bonus: dict) -> list:
    """Pooled pages, best first (search votes plus statement bonus)."""
    return sorted(pool, key=lambda k: -pool[k] - bonus[k])
