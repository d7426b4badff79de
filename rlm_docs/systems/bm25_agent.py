"""`bm25-agent`: MADQA's BM25 agent baseline (App. G.1), text-only.

The model may search (`SEARCH: query` → the top-k pages' text, k = 5) for at most T = 10 turns;
the last turn must answer. Every turn is one root step and one root call through the governor,
so its effort fields mean the same as the RLM's. When a budget refuses a turn, one final
answering turn is still tried, as the engine does; the governor checks it like any call, so a
dollar, token or wall limit can refuse it too. Stop reason `forced` when it answers, `budget`
only when even that turn is refused (no answer).
"""

import time
from dataclasses import dataclass
from typing import Any

from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.loop import answer_text
from rlm_docs.engine.prediction import Prediction
from rlm_docs.governor import Budget, BudgetExceeded, Governor
from rlm_docs.models import make_client
from rlm_docs.offline.baselines import bm25_agent_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig, finish, new_trajectory, turn_usage
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import Reply, answer_format, page_block, read_reply
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

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Search/answer loop; the trajectory records every turn and search."""
        start = time.perf_counter()
        system = render(
            "bm25_agent",
            k=self.k,
            max_iterations=self.max_iterations,
            answer_format=answer_format("the page label"),
        )
        messages = [
            {"role": "system", "content": system},
            {"role": "user", "content": question.question},
        ]
        trajectory = new_trajectory(
            self.config, self.name, question, max_iterations=self.max_iterations
        )
        reply: Reply | None = None
        stop_reason, error, sent = "forced", None, 0
        axis: str | None = None  # the limit that forced the last turn (`Prediction.stop_axis`)
        for turn in range(1, self.max_iterations + 1):
            last = turn == self.max_iterations
            if last:
                messages.append({"role": "user", "content": LAST_TURN})
            record = trajectory.iteration(messages[sent:])
            sent = len(messages)
            try:
                try:
                    governor.step()
                    completion = governor.call(self.client, list(messages), role="root")
                except BudgetExceeded as exc:
                    last, stop_reason, axis = True, "budget", exc.axis
                    messages.append({"role": "user", "content": f"{exc}. {LAST_TURN}"})
                    record.prompt, record.forced = messages[sent - 1 :], True
                    sent = len(messages)
                    completion = governor.call(self.client, list(messages), role="root")
            except BudgetExceeded:  # even the final answering turn is refused
                trajectory.close(record)
                break
            except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
                error, stop_reason = f"{type(exc).__name__}: {exc}", "error"
                trajectory.close(record)
                break
            messages.append({"role": "assistant", "content": completion.text})
            sent = len(messages)
            reply = read_reply(completion.text, allow_search=not last)
            record.response = completion.text
            record.usage = turn_usage(completion)
            if reply.query is None:
                record.final_answer = answer_text(reply.answer.values)
                trajectory.close(record)
                stop_reason = "forced" if last else "final"
                if last and axis is None:  # the agent's own turn limit T is a step limit
                    axis = "steps"
                break
            text, pages = self._search(reply.query)
            record.extra["search"] = {"query": reply.query, "results": pages}
            messages.append({"role": "user", "content": text})
            trajectory.close(record)
        final = reply if reply is not None and reply.query is None else Reply()
        citations, _ = validate(self.corpus, final.answer.citations)
        return finish(
            self.config,
            trajectory,
            governor,
            Prediction(
                question=question.question,
                question_id=question.id,
                answer=final.answer.values,
                explanation=final.answer.explanation,
                caveat=final.answer.caveat,
                citations=citations,
                stop_reason=stop_reason,
                stop_axis=axis,
                raw_answer=messages[-1]["content"] if messages[-1]["role"] == "assistant" else "",
                error=error,
            ),
            start,
        )


def _calls(budget: Budget, options: Bm25Options) -> Bound:
    """One call per turn, at most T turns and `--max-steps`, plus the forced answer."""
    turns = options.max_iterations
    return Bound(min(turns, budget.max_steps if budget.max_steps is not None else turns) + 1)


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
