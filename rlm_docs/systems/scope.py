"""The documents a question is about, for the agents that work on a few documents at a time
(`deepread`'s table of contents and retrieval, `docdancer`'s search).

Their papers give the agent the question's own document(s); an rlm-docs corpus is a collection
(FinanceBench's is hundreds of filings), so the documents are those the corpus's page search
ranks first for the question (its filing and statement boosts pick the filing a question names),
or every document when the corpus has no more than asked.
"""

from typing import Any

SEARCH_DEPTH = 4  # pages searched per document wanted


def question_documents(corpus: Any, question: str, n: int) -> list[str]:
    """Up to `n` documents for `question`, best first (module docstring); the corpus's first
    documents when no page matches."""
    names = [d.name for d in corpus.documents]
    if len(names) <= n:
        return names
    found: list[str] = []
    for hit in corpus.search(question, k=SEARCH_DEPTH * n):
        if hit.document not in found:
            found.append(hit.document)
    return found[:n] or names[:n]
