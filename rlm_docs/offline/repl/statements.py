"""Financial-statement pages: what they are called and how to tell one (sandbox code).

A statement page has a short heading line near the top holding the statement's title (spaces
ignored: text extraction splits words) and many short lines holding two or more numbers.
Subheadings inside a note ("Balance sheet:") end with a colon and do not count.
"""

from __future__ import annotations

import re

# A statement named in a question, and the words on its pages (added to the page search).
STATEMENTS = {
    "balance sheet": "consolidated balance sheets total assets total liabilities equity",
    "income statement": "consolidated statements of income operations revenue net income",
    "statement of income": "consolidated statements of income operations revenue net income",
    "p&l": "consolidated statements of income operations revenue net income",
    "cash flow": "consolidated statements of cash flows operating activities investing activities",
    "net sales": "consolidated statements of income operations net sales cost of sales",
    "revenue": "consolidated statements of income operations revenue cost of revenue",
    "net income": "consolidated statements of income operations net income per share",
}
# Page-heading patterns of the three primary statements.
STATEMENT_TITLES = {
    "balance": r"balance sheets?|financial position|financial condition",
    "income": r"statements? of (?:consolidated )?(?:income|operations|earnings)|income statements?",
    "cash": r"statements? of (?:consolidated )?cash flows?",
}
ALL_TITLES = list(STATEMENT_TITLES.values())


def numeric_lines(lines: list[str]) -> int:
    """How many lines hold two or more numbers (the rows of a table)."""
    return sum(1 for line in lines if len(re.findall(r"\d[\d,]*", line)) >= 2)


def is_statement(text: str, wanted: list[str]) -> bool:
    """Whether a page's text is one of the statements whose title patterns are `wanted`."""
    lines = [line for line in text.splitlines() if len(line) < 200]
    heads = [h for h in lines if h.strip()][:10]
    head = " ".join(h for h in heads if not h.strip().endswith(":")).lower()
    head = re.sub(r"[\s*#_]+", "", head)
    return numeric_lines(lines) >= 10 and any(
        re.search(re.sub(r"\s+", "", t), head) for t in wanted
    )


def statement_bonus(text: str, titles: list[str], quantitative: bool) -> float:
    """1 for a page of the statement the question needs; 0.3 for any table-heavy page when an
    amount is asked."""
    if is_statement(text, titles):
        return 1.0
    return 0.3 if quantitative and numeric_lines(text.splitlines()) >= 15 else 0.0
