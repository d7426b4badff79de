"""`static-rag`: the top-k BM25 pages for the question, then one answering call.

One root step, one root call: the floor of effort every agent should be compared against.
Citations are the model's when it gives valid ones; otherwise the retrieved pages whose text
contains the answer, else all k pages (the evidence the answer could have come from).
"""

import time
from dataclasses import dataclass

from rlm_docs.call_purpose import Purpose
from rlm_docs.corpus.render import page_block
from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.loop import answer_text
from rlm_docs.engine.prediction import Prediction
from rlm_docs.governor import Budget, Governor
from rlm_docs.models import make_client
from rlm_docs.offline.baselines import static_rag_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig, finish, new_trajectory
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format, read_reply
from rlm_docs.templates import render


@dataclass(frozen=True)
class StaticRagOptions:
    k: int = option(5, flag="--top-k", recorded="always", help="pages per search")
    max_page_chars: int = option(8000)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


class StaticRag:
    """Retrieve once, answer once."""

    name = "static-rag"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client = make_client(
            config.model, cache=config.cache
        )  # offline recognises baseline prompts
        options = DECLARATION.typed(config.options)
        self.k = options.k
        self.max_page_chars = options.max_page_chars

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Retrieve, prompt, parse; failures become an `error` prediction (scored wrong)."""
        start = time.perf_counter()
        hits = self.corpus.search(question.question, k=self.k)
        pages = {(h.document, h.page): self.corpus.page(h.document, h.page) for h in hits}
        blocks = [page_block(d, p, text, self.max_page_chars) for (d, p), text in pages.items()]
        prompt = render(
            "static_rag",
            k=len(blocks),
            pages="\n\n".join(blocks),
            question=question.question,
            answer_format=answer_format("the page label"),
        )
        messages = [{"role": "user", "content": prompt}]
        trajectory = new_trajectory(self.config, self.name, question, k=self.k)
        record = trajectory.iteration(messages)
        record.extra["search"] = {"query": question.question, "results": [list(k) for k in pages]}
        prediction = Prediction(question=question.question, question_id=question.id)
        try:
            governor.step()
            purpose = Purpose("root", self.name, "static-rag", question.question)
            completion = governor.call(self.client, messages, role="root", purpose=purpose)
        except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
            prediction.stop_reason, prediction.error = "error", f"{type(exc).__name__}: {exc}"
            trajectory.close(record)
            return finish(self.config, trajectory, governor, prediction, start)
        reply = read_reply(completion.text, allow_tools=False)
        record.response = completion.text
        record.final_answer = answer_text(reply.answer.values)
        trajectory.close(record)
        citations, _ = validate(self.corpus, reply.answer.citations)
        if not citations and reply.answer.values:
            wanted = [_norm(a) for a in reply.answer.values]
            citations = [
                {"file": d, "page": p}
                for (d, p), text in pages.items()
                if any(w and w in _norm(text) for w in wanted)
            ]
        prediction.take(reply.answer)
        prediction.citations = citations or [{"file": d, "page": p} for d, p in pages]
        prediction.raw_answer = completion.text
        return finish(self.config, trajectory, governor, prediction, start)


def _calls(budget: Budget, options: StaticRagOptions) -> Bound:
    return Bound(1)  # one answering call


DECLARATION = register(
    Declaration(
        name=StaticRag.name,
        summary="the top-k BM25 pages for the question in one prompt, one answering call",
        settings="k = {k} pages, each cut at {max_page_chars} characters",
        factory=StaticRag,
        options=StaticRagOptions,
        calls=_calls,
        reading=Reading(search_first="any-turn"),
        offline={"static-rag": static_rag_reply},
        prompts=("static_rag", "answer_format"),
    )
)
