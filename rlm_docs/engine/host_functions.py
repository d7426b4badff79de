"""Host-side functions offered to model code in the sandbox: sub-LLM calls, recursion, citing.

They run in the host process (the worker calls them over the sandbox's RPC), so API keys and
clients never enter the worker. Every model call goes through the run's `Governor`, so the
ledger is exact; a refusal raises `BudgetExceeded`, which the sandbox re-raises in model code
under the same name. Each call is also appended to `calls`, which the loop attaches to the code
block being run (the trajectory's `rlm_calls`); `block_batches` lists `[number, size]` of the
block's `llm_query_batched` calls (kept even when calls past MAX_RECORDED_CALLS are only
counted), so fan-outs are exact.

What model code sends is bounded before any work is done on it: a batch larger than the
sub-calls left is refused whole in O(1), prompts over the governor's per-call cap are refused
before tokenizing, and the trajectory keeps a long prompt only as its size, sha256 and head.
At most MAX_RECORDED_CALLS calls are recorded per code block; the rest are counted.
"""

import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rlm_docs.call_purpose import Purpose
from rlm_docs.engine.memory import NOTE_CHARS, NOTE_PAGES, Memory
from rlm_docs.engine.records import SubCall, Trajectory
from rlm_docs.errors import CorpusError, RlmDocsError
from rlm_docs.governor import BudgetExceeded, Governor
from rlm_docs.models import Client, Completion

# (prompt, context) -> (answer text, the child run's trajectory)
Spawn = Callable[[str, str | None], tuple[str, Trajectory]]

TRAJECTORY_PROMPT_CHARS = 20_000  # longer prompts are logged as size + sha256 + head
PROMPT_HEAD_CHARS = 2_000
MAX_RECORDED_CALLS = 1_000  # per code block
MAX_BATCH_PROMPTS = 10_000  # per llm_query_batched call, even with unlimited sub-calls


def logged_prompt(prompt: str) -> dict[str, Any]:
    """The trajectory fields for `prompt`: the text itself when short, else size, hash, head."""
    if len(prompt) <= TRAJECTORY_PROMPT_CHARS:
        return {"prompt": prompt}
    digest = hashlib.sha256(prompt.encode("utf-8", "surrogatepass")).hexdigest()
    return {
        "prompt": prompt[:PROMPT_HEAD_CHARS] + f"\n... [{len(prompt):,} characters in all]",
        "prompt_chars": len(prompt),
        "prompt_sha256": digest,
    }


def _ledger_entry(gov: Governor, completion: Completion) -> dict[str, Any] | None:
    """The ledger entry of `completion` (found by the call id the governor stamped on it)."""
    for entry in reversed(gov.ledger.entries):
        if entry.call_id == completion.call_id:
            return entry.to_dict()
    return None


class HostFunctions:
    """`llm_query`, `llm_query_batched`, `rlm_query`, `cite` and `budget` for one run (`SHOW_VARS` lives in
    the worker, which sees its live namespace)."""

    def __init__(
        self,
        gov: Governor,
        sub_client: Client,
        *,
        corpus: Any = None,
        spawn: Spawn | None = None,
        allowed: list[Client] | None = None,
        sub_calls: bool = True,
        memory: Memory | None = None,
        question: tuple[str | None, str] = (None, ""),
        override: Callable[[str], str | None] | None = None,
        purpose: Purpose | None = None,
    ) -> None:
        self.gov = gov
        # What each sub-call is for, as the model client sees it (`rlm_docs.call_purpose`).
        self.purpose = purpose or Purpose("sub", question=question[1])
        # A prompt's own purpose, where the caller built prompts of several kinds (a pipeline
        # whose batch mixes two templates); a prompt not listed has `purpose`.
        self.purposes: dict[str, Purpose] = {}
        self.memory = memory  # `rlm_docs.engine.memory`: replies reused, notes kept
        self.question_id, self.question = question
        self.reused = 0  # sub-calls answered from the memory, without a model call
        self.noted = 0
        # prompt -> a reply to give instead of the model's (attribution), or None
        self.override = override
        self.sub_calls = sub_calls
        self.sub_client = sub_client
        # Model code may pick a model only among those the operator configured: a free-form
        # spec would let prompt-injected code send the host's API key to a URL of its choice.
        # On a name clash the sub-model wins (it is what `llm_query` means by default).
        clients = [*(allowed or []), sub_client]
        self._allowed = {c.model: c for c in clients} | {c.spec: c for c in clients}
        self.corpus = corpus
        self.spawn = spawn
        self.calls: list[SubCall] = []
        self.omitted = 0  # calls of the current block past MAX_RECORDED_CALLS
        self.batches = 0  # llm_query_batched calls so far (numbers each batch's members)
        self.block_batches: list[list[int]] = []  # [number, size] of the block's batches
        self.cited: list[dict[str, Any]] = []
        self._cited: set[tuple[str, int]] = set()  # `cited` as keys: a cite is O(1), not O(n)
        self._lock = threading.Lock()

    def functions(self) -> dict[str, Callable[..., Any]]:
        """The name -> callable map handed to `Sandbox(functions=...)`; without `sub_calls`
        (the no-sub-calls ablation) only `cite`: the model functions are not bound at all."""
        found: dict[str, Callable[..., Any]] = {"cite": self.cite, "budget": self.budget}
        if self.sub_calls:
            found |= {
                "llm_query": self.llm_query,
                "llm_query_batched": self.llm_query_batched,
                "rlm_query": self.rlm_query,
            }
        if self.memory is not None:
            found |= {"note": self.note, "notes": self.notes}
        return found

    def _client(self, model: str | None) -> Client:
        if not model:
            return self.sub_client
        if not isinstance(model, str) or model not in self._allowed:
            names = ", ".join(sorted({c.spec for c in self._allowed.values()}))
            shown = repr(model)[:80]
            raise PermissionError(
                f"llm_query: model {shown} is not configured for this run; use one of: {names}"
            )
        return self._allowed[model]

    def start_block(self) -> None:
        """Begin recording the calls of a new code block."""
        with self._lock:
            self.calls, self.omitted, self.block_batches = [], 0, []

    def _record(self, kind: str, prompt: str, **fields: Any) -> None:
        with self._lock:
            if len(self.calls) >= MAX_RECORDED_CALLS:
                self.omitted += 1
                return
            self.calls.append(
                SubCall(kind=kind, **logged_prompt(prompt), depth=self.gov.depth, **fields)
            )

    def llm_query(self, prompt: str, model: str | None = None) -> str:
        """One sub-model completion for `prompt` (a plain call: no REPL, no iteration)."""
        return self._query(prompt, model, None)

    def _query(self, prompt: str, model: str | None, batch: int | None) -> str:
        """`llm_query`, recorded as member of `llm_query_batched` call number `batch`."""
        if not isinstance(prompt, str):
            raise TypeError(f"llm_query: prompt must be a str, got {type(prompt).__name__}")
        client = self._client(model)
        replaced = None if self.override is None else self.override(prompt)
        if replaced is not None:  # no model call, no spend: the reply under test
            self._record(
                "llm_query",
                prompt,
                root_model=client.model,
                response=replaced,
                execution_time=0.0,
                batch=batch,
                extra={"replaced": True},
            )
            return replaced
        kept = None if self.memory is None else self.memory.reply(client.model, prompt)
        if kept is not None:
            with self._lock:
                self.reused += 1
            self._record(
                "llm_query",
                prompt,
                root_model=client.model,
                response=kept,
                execution_time=0.0,
                batch=batch,
                extra={"reused": True},
            )
            return kept
        t0 = time.perf_counter()
        try:
            c = self.gov.call(
                client,
                [{"role": "user", "content": prompt}],
                role="sub",
                depth=self.gov.depth,
                purpose=self.purposes.get(prompt, self.purpose),
            )
        except RlmDocsError as exc:
            self._record(
                "llm_query",
                prompt,
                root_model=client.model,
                response=None,
                error=f"{type(exc).__name__}: {exc}",
                execution_time=round(time.perf_counter() - t0, 4),
                batch=batch,
            )
            raise
        self._record(
            "llm_query",
            prompt,
            root_model=c.model,
            response=c.text,
            usage_summary={
                "model_usage_summaries": {
                    c.model: {
                        "total_calls": 1,
                        "total_input_tokens": c.usage.input_tokens,
                        "total_output_tokens": c.usage.output_tokens,
                    }
                }
            },
            execution_time=round(c.latency_s, 4),
            cost_usd=c.cost_usd,
            ledger=_ledger_entry(self.gov, c),
            batch=batch,
        )
        if self.memory is not None:
            self.memory.keep(client.model, prompt, c.text, self.question_id)
        return c.text

    def llm_query_batched(self, prompts: list[str], model: str | None = None) -> list[str]:
        """`llm_query` over `prompts` concurrently (at most `max_concurrency` at once).

        Answers come back in prompt order. A batch larger than the sub-calls left is refused
        whole with `BudgetExceeded` before anything is sent. A prompt refused by the budget
        later yields the string `"Error: BudgetExceeded: ..."` in its slot and no further
        prompts are started; if every prompt is refused, `BudgetExceeded` is raised instead, so
        a loop over batches stops.
        """
        if not isinstance(prompts, list | tuple):
            raise TypeError("llm_query_batched: prompts must be a list of str")
        if not prompts:
            return []
        self.gov.check_calls("sub", len(prompts))  # O(1), before looking at the prompts
        if len(prompts) > MAX_BATCH_PROMPTS:
            raise ValueError(
                f"llm_query_batched: {len(prompts):,} prompts is over the limit of "
                f"{MAX_BATCH_PROMPTS:,} per batch; split the batch"
            )
        if not all(isinstance(p, str) for p in prompts):
            raise TypeError("llm_query_batched: prompts must be a list of str")
        self._client(model)
        with self._lock:
            self.batches += 1
            batch = self.batches
            self.block_batches.append([batch, len(prompts)])
        results: list[str | None] = [None] * len(prompts)
        refused: list[BudgetExceeded] = []
        stop = threading.Event()

        def one(i: int) -> None:
            if stop.is_set():
                results[i] = f"Error: BudgetExceeded: {refused[0]}"
                return
            try:
                results[i] = self._query(prompts[i], model, batch)
            except BudgetExceeded as exc:
                refused.append(exc)
                stop.set()
                results[i] = f"Error: BudgetExceeded: {exc}"

        workers = min(self.gov.budget.max_concurrency, len(prompts))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for future in [pool.submit(one, i) for i in range(len(prompts))]:
                future.result()  # re-raises a non-budget error
        if refused and all(
            r is not None and r.startswith("Error: BudgetExceeded") for r in results
        ):
            raise refused[0]
        return [r or "" for r in results]

    def rlm_query(self, prompt: str, context: str | None = None) -> str:
        """A child RLM one level deeper (its own REPL); a plain `llm_query` at the depth limit."""
        if not isinstance(prompt, str):
            raise TypeError(f"rlm_query: prompt must be a str, got {type(prompt).__name__}")
        if context is not None and not isinstance(context, str):
            raise TypeError("rlm_query: context must be a str or None")
        if self.spawn is None or self.gov.depth + 1 > self.gov.budget.max_depth:
            text = prompt if context is None else f"{prompt}\n\n{context}"
            return self.llm_query(text)
        t0 = time.perf_counter()
        answer, child = self.spawn(prompt, context)
        self._record(
            "rlm_query",
            prompt,
            root_model=child.metadata.root_model,
            response=answer,
            execution_time=round(time.perf_counter() - t0, 4),
            cost_usd=child.result.cost_usd if child.result is not None else None,
            child=child,
        )
        return answer

    def budget(self) -> dict[str, dict[str, Any]]:
        """What is left of this run's budget on every axis, read from the governor at the
        moment of the call (`Governor.remaining`): data the model can plan its effort with."""
        return self.gov.remaining()

    def note(self, text: str, pages: list[Any]) -> str:
        """Keep `text` in the corpus memory for later questions, with the `[doc, page]` pairs
        (or `{"file", "page"}` dicts) it rests on, checked like `cite`."""
        if self.memory is None:
            raise RlmDocsError("note: this run has no memory")
        if not isinstance(text, str) or not text.strip():
            raise TypeError("note: text must be a non-empty str")
        if len(text) > NOTE_CHARS:
            raise ValueError(f"note: at most {NOTE_CHARS:,} characters, got {len(text):,}")
        if not isinstance(pages, list | tuple) or len(pages) > NOTE_PAGES:
            raise TypeError(f"note: pages must be a list of at most {NOTE_PAGES} [doc, page]")
        checked = []
        for item in pages:
            if isinstance(item, dict):
                item = [item.get("file"), item.get("page")]
            if not isinstance(item, list | tuple) or len(item) != 2:
                raise TypeError(f"note: each page must be [doc, page], got {item!r:.80}")
            name = self._page(str(item[0]), item[1], "note")
            checked.append({"file": name, "page": item[1]})
        number = self.memory.add_note(text, checked, self.question_id, self.question)
        with self._lock:
            self.noted += 1
        return f"noted (#{number})"

    def notes(self, query: str | None = None) -> list[dict[str, Any]]:
        """Notes from the corpus memory whose text has every word of `query` (all if None),
        each with its pages and the question it came from."""
        if self.memory is None:
            raise RlmDocsError("notes: this run has no memory")
        if query is not None and not isinstance(query, str):
            raise TypeError("notes: query must be a str or None")
        return self.memory.notes(query)

    def _page(self, doc: str, page: Any, what: str) -> str:
        """The resolved name of `doc`; CorpusError unless it has page `page`."""
        if self.corpus is None:
            raise CorpusError(f"{what}: this run has no corpus (its context is a plain string)")
        name = self.corpus.resolve(doc)
        if name is None:
            raise CorpusError(f"{what}: unknown document {doc!r}")
        if isinstance(page, bool) or not isinstance(page, int):
            raise CorpusError(f"{what}: page must be an int, got {page!r}")
        pages = self.corpus.num_pages(name)
        if not 1 <= page <= pages:
            raise CorpusError(f"{what}: {name} has pages 1..{pages}, not {page}")
        return str(name)

    def cite(self, doc: str, page: int) -> str:
        """Record (doc, page) as evidence; CorpusError if the document or page does not exist."""
        name = self._page(str(doc), page, "cite")
        with self._lock:
            if (name, page) not in self._cited:
                self._cited.add((name, page))
                self.cited.append({"file": name, "page": page})
        return f"cited {name} p.{page}"
