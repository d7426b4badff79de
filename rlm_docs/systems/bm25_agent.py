"""`bm25-agent`: MADQA's BM25 agent baseline (App. G.1), text-only.

The model may search (`SEARCH: query` → the top-k pages' text, k = 5) for at most T = 10 turns;
the last turn must answer. The turns, budgets and stop reasons are those of the shared tool
loop (`rlm_docs.systems.tool_loop`).
"""

import time
from dataclasses import dataclass
from typing import Any

from rlm_docs.corpus.render import page_block
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import Iteration
from rlm_docs.governor import Budget, Governor
from rlm_docs.models import make_client
from rlm_docs.offline.baselines import bm25_agent_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option, turns_bound
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format
from rlm_docs.systems.tool_loop import answer_with_tools
from rlm_docs.templates import render

LAST_TURN = "This is your last turn: no more searches. Reply now with only the JSON answer."


@dataclass(frozen=True)
class Bm25Options:
    k: int = option(5, flag="--top-k", recorded="always", help="pages per search")
    max_iterations: int = option(
        10, flag="--max-iterations", recorded="always", help="agent turns T"
    )
    max_page_chars: int = option(8000)


class Bm25Agent:
    """Iterative search-then-answer agent over `Corpus.search`."""

    name = "bm25-agent"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client = make_client(
            config.model, cache=config.cache
        )  # offline recognises baseline prompts
        options = DECLARATION.typed(config.options)
        self.k = options.k
        self.max_iterations = options.max_iterations
        self.max_page_chars = options.max_page_chars

    def _search(self, query: str) -> tuple[str, list[dict[str, Any]]]:
        hits = self.corpus.search(query, k=self.k)
        blocks = [
            page_block(
                h.document, h.page, self.corpus.page(h.document, h.page), self.max_page_chars
            )
            for h in hits
        ]
        head = f"Search results for {query!r} ({len(hits)} pages):\n\n"
        text = head + ("\n\n".join(blocks) if blocks else "No matching pages.")
        return text, [{"file": h.document, "page": h.page} for h in hits]

    def _tool_search(self, query: str, record: Iteration) -> str:
        text, pages = self._search(query)
        record.extra["search"] = {"query": query, "results": pages}
        return text

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Search/answer loop (`rlm_docs.systems.tool_loop`); the trajectory records every
        turn and search."""
        start = time.perf_counter()
        system = render(
            "bm25_agent",
            k=self.k,
            max_iterations=self.max_iterations,
            answer_format=answer_format("the page label"),
        )
        return answer_with_tools(
            self.config,
            self.client,
            self.name,
            question,
            governor,
            system,
            {"SEARCH": self._tool_search},
            self.max_iterations,
            LAST_TURN,
            "bm25-agent",
            start,
        )


def _calls(budget: Budget, options: Bm25Options) -> Bound:
    """One call per turn, at most T turns and `--max-steps`, plus the forced answer."""
    return Bound(turns_bound(budget, options.max_iterations) + 1)


DECLARATION = register(
    Declaration(
        name=Bm25Agent.name,
        summary="MADQA's BM25 agent: the model asks `SEARCH: query` for the top-k pages' text, "
        "turn after turn, and answers (the last turn must answer)",
        settings="k = {k} pages per search, T = {max_iterations} turns, pages cut at "
        "{max_page_chars} characters",
        factory=Bm25Agent,
        options=Bm25Options,
        calls=_calls,
        reading=Reading(search_first="first-turn"),
        offline={"bm25-agent": bm25_agent_reply},
        prompts=("bm25_agent", "answer_format"),
    )
)
