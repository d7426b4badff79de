"""`map-reduce`: decomposition without agency (the RLM paper's comparison point).

The corpus is cut once into fixed page-aligned chunks of `chunk_tokens` (default: a quarter of
the sub-model's context window). For every question each chunk gets one sub-model call with
the question (`llm_query_batched`, the same host function the RLM uses, so the calls are
governed, concurrent up to `max_concurrency` and recorded alike), then one root call combines
the relevant notes. Nothing is chosen by a model: which text is read is fixed by the chunking.

The map runs in batches of `max_concurrency` (never more than the sub-calls left) and stops
when the sub-call budget is spent or a batch is refused, so a sub-call limit below the chunk
count reads a prefix of the corpus; the counts (chunks, read, relevant, not read) are in the
prediction's `info["map"]`. A map cut short by a budget ends the question as the budget's
(`stop_reason` `forced`, `stop_axis` the limit, e.g. `sub_calls`), not as a `final` answer.
"""

import threading
import time
from dataclasses import dataclass, replace
from typing import Any

from rlm_docs.call_purpose import Purpose
from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.host_functions import HostFunctions, logged_prompt
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import CellResult, CodeBlock, SubCall
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, BudgetExceeded, Governor
from rlm_docs.offline.baselines import map_reply, reduce_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig, answer_call, finish, new_trajectory
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option, sub_call_bound
from rlm_docs.systems.long_context import REPLY_TOKENS, context_window_option, model_window
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format
from rlm_docs.systems.windows import Chunk, chunk_pages
from rlm_docs.templates import render
from rlm_docs.tokens import count_tokens

NOT_RELEVANT = "NO RELEVANT TEXT"
NOTE_CHARS = 4000
REFUSED = "Error: BudgetExceeded"


@dataclass(frozen=True)
class MapReduceOptions:
    context_window: int | None = context_window_option()
    chunk_tokens: int | None = option(
        None,
        flag="--chunk-tokens",
        minimum=64,
        metavar="TOKENS",
        help="chunk size (default: a quarter of the sub-model's window)",
    )


def default_chunk_tokens(window: int) -> int:
    """A quarter of the sub-model's window: room for the instructions and the reply."""
    return max(window // 4, 512)


def _relevant(note: str) -> bool:
    text = note.strip()
    return bool(text) and not text.startswith(NOT_RELEVANT) and not text.startswith(REFUSED)


def _labelled(call: SubCall, shown: tuple[str, int, list[list[Any]]] | None) -> SubCall:
    """`call` with its prompt replaced by the chunk's label, size and page span."""
    if shown is None:
        return call
    label, chars, span = shown
    return replace(call, prompt=label, prompt_chars=chars, extra=call.extra | {"span": span})


class MapReduce:
    """One sub-call per fixed chunk, then one reduce call."""

    name = "map-reduce"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client, self.sub_client = config.clients()
        options = DECLARATION.typed(config.options)
        self.window = model_window(self.client, options.context_window)
        chunk = options.chunk_tokens
        if chunk is None:
            chunk = default_chunk_tokens(model_window(self.sub_client, None, "--chunk-tokens"))
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 64:
            raise ConfigError(f"map-reduce: chunk size must be >= 64 tokens, got {chunk!r}")
        self.chunk_tokens = chunk
        self._chunks: list[Chunk] | None = None
        self._lock = threading.Lock()

    def chunks(self) -> list[Chunk]:
        """The corpus's chunks, cut once (the same for every question)."""
        with self._lock:
            if self._chunks is None:
                self._chunks = chunk_pages(self.corpus, self.chunk_tokens)
            return self._chunks

    def _map(
        self, question: str, governor: Governor
    ) -> tuple[list[str], list[SubCall], list[list[int]], str | None]:
        """Notes per chunk, in order, until the budget refuses a whole batch; the sub-calls as
        trajectory `rlm_calls` (each prompt shortened to its chunk's label, with its size in
        `prompt_chars` and the chunk's first and last page as `span`: the text is in the
        store, and a log of every chunk per question would be the corpus many times);
        `[number, size]` of each batch; and the budget axis that cut the map short (None when
        every chunk was read)."""
        map_calls = Purpose("sub", self.name, "map-reduce-map", question)
        host = HostFunctions(governor, self.sub_client, corpus=self.corpus, purpose=map_calls)
        chunks = self.chunks()
        notes: list[str] = []
        shown: dict[
            str, tuple[str, int, list[list[Any]]]
        ] = {}  # logged prompt -> label, size, span
        limit = governor.budget.max_sub_calls
        done, cut_by = 0, None
        while done < len(chunks):
            # A batch never asks for more sub-calls than are left (the governor refuses an
            # oversized batch whole), so a sub-call limit reads exactly that many chunks.
            size = governor.budget.max_concurrency
            if limit is not None:
                size = min(size, limit - governor.totals()["sub_calls"])
            if size <= 0:
                cut_by = "sub_calls"
                break
            prompts = []
            for c in chunks[done : done + size]:
                prompts.append(render("map_chunk", question=question, chunk=c.text))
                first, last = c.pages[0], c.pages[-1]
                shown[logged_prompt(prompts[-1])["prompt"]] = (
                    f"[map prompt: the question and excerpt {c.label}]",
                    len(prompts[-1]),
                    [[first["file"], first["page"]], [last["file"], last["page"]]],
                )
            try:
                notes += host.llm_query_batched(prompts)
            except BudgetExceeded as exc:
                cut_by = exc.axis
                break
            done += len(prompts)
        calls = [_labelled(c, shown.get(c.prompt)) for c in host.calls]
        return notes, calls, host.block_batches, cut_by

    def _reduce_prompt(self, question: str, notes: list[str]) -> tuple[str, dict[str, Any]]:
        chunks = self.chunks()
        relevant = [i for i, n in enumerate(notes) if _relevant(n)]
        refused = sum(1 for n in notes if n.startswith(REFUSED))
        read = len(notes) - refused
        coverage = f"{read} excerpts were read ({len(relevant)} with relevant notes)"
        if read < len(chunks):
            coverage += f"; the budget stopped the reading after {read} of {len(chunks)}"
        limit = self.window - REPLY_TOKENS

        def prompt_with(notes: str) -> str:
            return render(
                "map_reduce",
                num_documents=len(self.corpus.documents),
                num_pages=self.corpus.total_pages,
                chunks=len(chunks),
                coverage=coverage + ".",
                notes=notes,
                question=question,
                answer_format=answer_format("the notes"),
            )

        used, blocks = count_tokens(prompt_with("")) + 16, []
        for i in relevant:
            block = (
                f"[NOTE {i + 1} | excerpt: {chunks[i].label}]\n{notes[i][:NOTE_CHARS]}\n[END NOTE]"
            )
            cost = count_tokens(block) + 2
            if used + cost > limit:
                break
            blocks.append(block)
            used += cost
        if not relevant:
            blocks = ["(No excerpt held relevant text.)"]
        elif len(blocks) < len(relevant):
            coverage += f"; {len(blocks)} of the {len(relevant)} notes fit here"
        prompt = prompt_with("\n\n".join(blocks))
        info = {
            "chunk_tokens": self.chunk_tokens,
            "chunks": len(chunks),
            "read": read,
            "relevant": len(relevant),
            "not_read": len(chunks) - read,
            "notes_sent": len(blocks) if relevant else 0,
        }
        return prompt, info

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Map, then reduce; a refused reduce is a `budget` stop, a failure an `error`."""
        start = time.perf_counter()
        trajectory = new_trajectory(
            self.config, self.name, question, chunk_tokens=self.chunk_tokens
        )
        prediction = Prediction(question=question.question, question_id=question.id)
        record = trajectory.iteration([{"role": "user", "content": question.question}])
        try:
            notes, calls, batches, cut_by = self._map(question.question, governor)
        except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
            prediction.stop_reason, prediction.error = "error", f"{type(exc).__name__}: {exc}"
            trajectory.close(record)
            return finish(self.config, trajectory, governor, prediction, start)
        prompt, info = self._reduce_prompt(question.question, notes)
        prediction.info = {"map": info}
        record.code_blocks.append(
            CodeBlock(
                f"# map: one llm_query per chunk ({info['chunks']} chunks)",
                CellResult(sub_calls=calls, batches=batches),
            )
        )
        record.extra["map"] = info
        record.prompt = [{"role": "user", "content": prompt}]
        messages = [{"role": "user", "content": prompt}]
        purpose = Purpose("root", self.name, "map-reduce-reduce", question.question)
        reply = answer_call(
            self.client, trajectory, governor, messages, record, prediction, purpose=purpose
        )
        if reply is not None:
            prediction.citations, _ = validate(self.corpus, reply.answer.citations)
            if cut_by is not None:  # answered from the part of the corpus the budget allowed
                prediction.stop_reason, prediction.stop_axis = "forced", cut_by
        return finish(self.config, trajectory, governor, prediction, start)


def _calls(budget: Budget, options: MapReduceOptions) -> Bound:
    return sub_call_bound(budget) + Bound(1)  # the map's sub-calls, the reduce call


DECLARATION = register(
    Declaration(
        name=MapReduce.name,
        summary="the corpus cut into fixed page-aligned chunks, one sub-model call per chunk "
        "with the question, then one call combining the relevant notes",
        settings="chunk: a quarter of the sub-model's window (--chunk-tokens); map calls: "
        "--max-sub-calls",
        factory=MapReduce,
        options=MapReduceOptions,
        calls=_calls,
        reading=Reading(search_first=None, reduce_after_map=True),
        offline={"map-reduce-map": map_reply, "map-reduce-reduce": reduce_reply},
        prompts=("map_chunk", "map_reduce", "answer_format"),
    )
)
