"""`RLM(corpus, model=..., sub_model=..., budget=...).ask(question) -> Prediction`.

Wires the pieces for one question: a `Governor` over the budget, the root `TurnLoop` in a sandbox
over the corpus store, then the answer: a structured final value is parsed directly (JSON, a
list, `["v"] -- DOC page N`, a bare refusal; see `rlm_docs.answer_parsing`), other free text
goes through one `extract` call in the wording of the prompt in use (`docs_extract` or MADQA's
`extract`), which is also given the pages recorded with `cite()`.

Final citations, in order (`citation_source` in the trajectory's result record):
1. `model`: the valid citations of the final answer (its JSON `citations`, the pages named
   after a `["..."] --` list, or what the extraction call found in the response);
2. `cite`: else every valid page passed to `cite()` during the run;
3. `read`: else the last `MAX_FALLBACK_PAGES` pages read with `page`/`pages`/`read_section`;
4. `none`: else no citation. A refusal ("Not answerable") keeps only citations it names.
"Valid" means the document resolves in the corpus and the page is in range (else it is kept
under `rejected_citations`).
"""

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlm_docs.answer_parsing import from_structured, heuristic_answer, parse_answer
from rlm_docs.answer_record import REFUSAL, Answer
from rlm_docs.call_purpose import ENGINE, Purpose
from rlm_docs.corpus import Corpus
from rlm_docs.engine import prompts
from rlm_docs.engine.citation_check import with_fallback
from rlm_docs.engine.loop import Outcome, Settings, TurnLoop, answer_text
from rlm_docs.engine.memory import Memory
from rlm_docs.engine.prediction import Prediction, effort_from_totals
from rlm_docs.engine.records import Iteration, Result, Trajectory
from rlm_docs.engine.trajectory import trajectory_file, write_records
from rlm_docs.env import blame, env_value
from rlm_docs.errors import ConfigError, RlmDocsError
from rlm_docs.governor import Budget, BudgetExceeded, Governor, Ledger
from rlm_docs.governor.axes import format_amount
from rlm_docs.governor.exceeded import label as axis_label
from rlm_docs.ingest.demo import resolve_store
from rlm_docs.models import Client, make_client
from rlm_docs.templates import render
from sandbox import Limits

EXTRACT_CHARS = 50_000


def _client(model: Client | str, cache: Any = True) -> Client:
    return make_client(model, cache=cache) if isinstance(model, str) else model


def _env_client(name: str) -> Client | None:
    """The client named by environment variable `name` (errors name the variable)."""
    value = env_value(name)
    if value is None:
        return None
    with blame(name, value):
        return make_client(value)


class RLM:
    """A recursive language model over a document corpus (see module docstring).

    `corpus`: a `Corpus` or a store path. `model` / `sub_model`: model strings or clients
    (defaults: RLM_DOCS_MODEL or `offline`; RLM_DOCS_SUB_MODEL or the root model). `prompt`:
    `docs` or `madqa`. `log_dir`: where trajectory JSONL files go (None: not written).
    `ledger`: a shared `Ledger` to collect every call across questions. `on_turn(depth, it)`
    is called as each turn (of the root run or of a child `rlm_query` run) ends, with its
    trajectory `Iteration`: live progress for long runs with real models. `sub_calls=False` is the
    RLM paper's ablation: the REPL without `llm_query` / `llm_query_batched` / `rlm_query` (not
    bound, and the prompt does not mention them). `confirm_final`: a
    finishing turn (`answer["ready"] = True`) whose code printed output gets one confirmation
    turn showing it (see `rlm_docs.engine.loop`); False ends the run at once, as MADQA does.
    `cache`: the response cache model strings are built with (`make_client`'s `cache`).
    `anytime`: shares of the budget (each in (0, 1)) at which the model is asked, in a side
    turn, for its best answer so far (`Prediction.anytime`; see `TurnLoop._anytime`).
    `memory`: a directory for the corpus memory across questions (`rlm_docs.engine.memory`):
    identical sub-calls reused, `note` / `notes` in the REPL; None (the default) is off.
    """

    def __init__(
        self,
        corpus: Corpus | str | os.PathLike[str],
        model: Client | str | None = None,
        sub_model: Client | str | None = None,
        budget: Budget | None = None,
        prompt: str = "docs",
        *,
        log_dir: str | os.PathLike[str] | None = None,
        limits: Limits | None = None,
        ledger: Ledger | None = None,
        child_share: float = 0.5,
        max_output_chars: int = 20_000,
        on_turn: Callable[[int, Iteration], None] | None = None,
        sub_calls: bool = True,
        confirm_final: bool = True,
        cache: Any = True,
        anytime: tuple[float, ...] | list[float] = (),
        memory: str | os.PathLike[str] | None = None,
    ) -> None:
        if prompt not in prompts.ROOT_PROMPTS:
            raise ConfigError(f"unknown prompt {prompt!r}: choose one of {prompts.ROOT_PROMPTS}")
        if not 0 < child_share <= 1:
            raise ConfigError(f"child_share must be in (0, 1], got {child_share}")
        self.corpus = corpus if isinstance(corpus, Corpus) else Corpus.load(resolve_store(corpus))
        root = (
            _client(model, cache)
            if model
            else _env_client("RLM_DOCS_MODEL") or _client("offline", cache)
        )
        sub = _client(sub_model, cache) if sub_model else _env_client("RLM_DOCS_SUB_MODEL")
        self.settings = Settings(
            client=root,
            sub_client=sub or root,
            prompt=prompt,
            limits=limits,
            child_share=child_share,
            max_output_chars=max_output_chars,
            on_turn=on_turn,
            sub_calls=sub_calls,
            confirm_final=confirm_final,
            anytime=checkpoints(anytime),
        )
        self.budget = budget or Budget()
        self.log_dir = Path(log_dir) if log_dir is not None else None
        self.ledger = ledger if ledger is not None else Ledger()
        self.last_trajectory: Trajectory | None = None  # of the last `ask` (API keys masked)
        self._store: Path | None = self.corpus.path
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if memory is not None:
            self.settings.memory = Memory(Path(memory), self._store_path())

    def _store_path(self) -> Path:
        """The store the sandbox maps; an in-memory corpus is saved once to a temp dir."""
        if self._store is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="rlm-docs-corpus-")
            self._store = self.corpus.save(Path(self._tmp.name) / "store")
        return self._store

    def ask(
        self, question: str, *, question_id: str | None = None, governor: Governor | None = None
    ) -> Prediction:
        """Answer one question; model-side failures end as `stop_reason="error"`, not raised.

        `governor`: spend against this one (its budget, its ledger) instead of a fresh one over
        `budget` and `ledger`, as the system protocol does: the eval runner owns the governor
        each system answers under (`rlm_docs.systems.base.System`)."""
        if not isinstance(question, str) or not question.strip():
            raise ConfigError("question must be a non-empty string")
        t0 = time.perf_counter()
        gov = (
            governor
            if governor is not None
            else Governor(self.budget, ledger=self.ledger, question_id=question_id or "")
        )
        gov.check_client(self.settings.client)
        gov.check_client(self.settings.sub_client)
        run = TurnLoop(
            self.settings,
            gov,
            question,
            corpus=self.corpus,
            store=self._store_path(),
            question_id=question_id,
        )
        memory = self.settings.memory
        sequence = None if memory is None else memory.begin(question_id, question)
        outcome = run.execute()
        answer, extract_note = self._answer(question, outcome, gov)
        cited = answer.citations
        if answer.values == [REFUSAL]:  # a refusal rests on no page: only citations it names
            citations, rejected, source = with_fallback(self.corpus, cited, [], [])
        else:
            citations, rejected, source = with_fallback(
                self.corpus, cited, outcome.cited, outcome.read
            )
        pred = Prediction(
            question=question,
            answer=answer.values,
            explanation=answer.explanation,
            caveat=answer.caveat,
            citations=citations,
            stop_reason=outcome.stop_reason,
            stop_axis=outcome.stop_axis,
            question_id=question_id,
            raw_answer=answer_text(outcome.value),
            error=outcome.error or _refused_before_any_call(outcome, gov),
            budget=gov.remaining(),
            anytime=[_parsed(event) for event in outcome.anytime],
        )
        pred.set_effort(effort_from_totals(gov.totals()) | {"wall_s": time.perf_counter() - t0})
        if outcome.warnings:  # shown to no model turn: kept with the answer for its reader
            pred.info["warnings"] = outcome.warnings
        if sequence is not None:  # the question's place in the memory and what it reused
            pred.info["memory"] = {
                "corpus": memory.fingerprint if memory is not None else None,
                "sequence": sequence,
                "notes_before": run.notes_before,
                "reused_sub_calls": run.host.reused,
                "notes_written": run.host.noted,
            }
        if self.log_dir is not None:
            pred.trajectory = str(trajectory_file(self.log_dir, question_id))
        result = Result.from_dict(pred.to_madqa())
        result.raw_answer = pred.raw_answer
        result.citation_source, result.rejected_citations = source, rejected
        result.extraction, result.variables = extract_note, outcome.variables
        run.traj.result(result)
        records = run.traj.lines()  # redacted once, for the object and the file
        self.last_trajectory = Trajectory.from_records(records)
        if pred.trajectory is not None:
            write_records(pred.trajectory, records)
        return pred

    def _answer(self, question: str, outcome: Outcome, gov: Governor) -> tuple[Answer, str]:
        """(answer record with raw citations, how it was obtained) from the run's final value."""
        value = answer_dict_value(outcome.value)
        parsed = parse_answer(value) if isinstance(value, str) else from_structured(value)
        if parsed is not None and (parsed.values or parsed.explanation or parsed.caveat):
            return parsed, "structured"
        text = answer_text(value).strip()
        if parsed is not None or not text:
            return parsed or Answer(), "empty"
        if self.settings.client.backend == "human":  # not asked again to reformat it as JSON
            return heuristic_answer(text), "heuristic (a person's answer is taken as written)"
        cited = "; ".join(f"{c['file']} page {c['page']}" for c in outcome.cited) or "(none)"
        request = render(
            prompts.EXTRACT_TEMPLATES[self.settings.prompt],
            question=question,
            response=text[:EXTRACT_CHARS],
            cited=cited,
        )
        try:
            reply = gov.call(
                self.settings.client,
                [{"role": "user", "content": request}],
                role="extract",
                depth=0,
                purpose=Purpose("extract", ENGINE, self.settings.prompt, question),
            )
        except BudgetExceeded:
            return heuristic_answer(text), "heuristic (extraction refused by budget)"
        except RlmDocsError as exc:
            return heuristic_answer(text), f"heuristic (extraction failed: {type(exc).__name__})"
        parsed = parse_answer(reply.text)
        if parsed is None:
            return heuristic_answer(text), "heuristic (extraction reply was not JSON)"
        return parsed, "extract"


def checkpoints(shares: Any) -> tuple[float, ...]:
    """The `anytime` shares, sorted; ConfigError unless each is a number in (0, 1)."""
    out = []
    for share in shares:
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
            raise ConfigError(f"anytime: each share must be a number in (0, 1), got {share!r}")
        out.append(float(share))
    return tuple(sorted(set(out)))


def _parsed(event: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's answer text as an answer list and citations (no extraction call: the
    checkpoint must not spend more than the turn that asked for it)."""
    event = dict(event)
    text = event.pop("answer")
    if text is None:
        return event | {"answer": None, "citations": []}
    parsed = parse_answer(text) or heuristic_answer(text)
    return event | {
        "answer": parsed.values,
        "caveat": parsed.caveat,
        "citations": parsed.citations,
        "raw_answer": text,
    }


def _refused_before_any_call(outcome: Any, gov: Governor) -> str | None:
    """Why nothing was asked, when the budget refused even the first model call (a
    `--max-cost` or token limit below one call): without it the run would look like a model
    that had no answer."""
    refusal = outcome.refusal
    if refusal is None or gov.totals()["calls"]:
        return None
    label = axis_label(refusal.axis)
    need = (
        ""
        if refusal.needed is None
        else f" (it needs {format_amount(refusal.axis, refusal.needed)})"
    )
    return (
        f"the {label} budget of {format_amount(refusal.axis, refusal.limit)} refused the first "
        f"model call{need}, so no model was asked"
    )


def answer_dict_value(value: Any) -> Any:
    """The final value with the REPL's `answer` dict unwrapped: its record fields without
    `ready` (FINAL_VAR(answer) or `answer["ready"] = True`), or the free text a model put in
    a `content` key of its own when it set no values."""
    if not isinstance(value, dict):
        return value
    record = {k: v for k, v in value.items() if k != "ready"}
    if not record.get("values") and record.get("content"):
        return record["content"]
    return record
