"""The trajectory as types: every record of a trajectory JSONL file, with `to_dict`/`from_dict`.

One question's log is a `Trajectory`: its `Metadata`, one `Iteration` per root turn (each with
the `CodeBlock`s it ran, each block with its `CellResult` and the `SubCall`s its code made; an
`rlm_query` sub-call holds the child run as a nested `Trajectory`) and the final `Result`.
The engine writes these types and every reader (viewer, notebook, CLI, report, decomposition)
reads them, so a key is spelled once, here. `engine/trajectory.py` documents the file format and
how version 2 differs from version 1; `Trajectory.from_records` reads both.

Round trip: `from_dict(to_dict(x)) == x` for every record. Keys a record does not know (a
system's own iteration facts such as bm25-agent's `search`, or fields of a newer writer) are
kept in its `extra` and written back after the known ones, so nothing is lost in between. A
field marked `optional` is left out of `to_dict` while it holds its default, as version 1 did
(`confirmation` only on confirmation turns, `error` only on failed calls, ...).
Field order is the order the engine has always written, so do not reorder the fields.

A long answer is written once: a run's final answer appears as its last iteration's
`final_answer`, again as its result's `answer`/`raw_answer`, and again as the `response` of the
parent's `rlm_query`. Copies of at least `SHARED_MIN_CHARS` characters are written as null, with
`same_as` naming where the text is (`{"answer": "final_answer"}` on a result,
`{"response": "child answer"}` on a sub-call), and restored on reading.
"""

from collections.abc import Callable, Iterator
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, ClassVar, Self

from rlm_docs.errors import DatasetError

FORMAT = "rlm-docs.trajectory"
VERSION = 2
SHARED_MIN_CHARS = 1_000  # a copy at least this long is written once (see the docstring)
CHILD_ANSWER = "child answer"


def _long_copy(value: Any, of: Any) -> bool:
    return isinstance(value, str) and len(value) >= SHARED_MIN_CHARS and value == of


def _optional(default: Any = None, **meta: Any) -> Any:
    """A field omitted from `to_dict` while it holds `default`."""
    if isinstance(default, dict | list):
        return field(default_factory=type(default), metadata={"optional": True} | meta)
    return field(default=default, metadata={"optional": True} | meta)


def _default(f: Field[Any]) -> Any:
    if f.default is not MISSING:
        return f.default
    if f.default_factory is not MISSING:
        return f.default_factory()
    return MISSING


def _dump(value: Any) -> Any:
    if isinstance(value, Trajectory):
        return value.to_records()
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _many(parse: Callable[[Any], Any], what: str) -> Callable[[Any], list[Any]]:
    """A parser for a list of records (DatasetError when the value is not a list)."""

    def parse_list(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise DatasetError(f"{what} must be a list, got {type(value).__name__}")
        return [parse(v) for v in value]

    return parse_list


class Record:
    """`to_dict` / `from_dict` for the dataclasses below, driven by their fields: `key` (the
    JSON key when it differs from the attribute), `parse` (how a nested value is read),
    `optional` (omitted while at its default). `extra` holds unknown keys."""

    TYPE: ClassVar[str | None] = None  # the record's `type` key, for top-level records

    extra: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able record, known keys in field order, then `extra`."""
        out: dict[str, Any] = {"type": self.TYPE} if self.TYPE else {}
        for f in fields(self):  # type: ignore[arg-type]
            if f.name == "extra":
                continue
            value = getattr(self, f.name)
            if f.metadata.get("optional") and value == _default(f):
                continue
            out[f.metadata.get("key", f.name)] = _dump(value)
        return out | {k: v for k, v in self.extra.items() if k not in out}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """The record of `data` (DatasetError naming the record and field on a bad shape)."""
        name = cls.TYPE or cls.__name__
        if not isinstance(data, dict):
            raise DatasetError(f"{name} record must be an object, got {type(data).__name__}")
        known: dict[str, Any] = {}
        used = {"type"} if cls.TYPE else set()
        for f in fields(cls):  # type: ignore[arg-type]
            key = f.metadata.get("key", f.name)
            if f.name == "extra" or key not in data:
                continue
            used.add(key)
            value = data[key]
            parse = f.metadata.get("parse")
            if parse is not None and value is not None:
                try:
                    value = parse(value)
                except DatasetError as exc:
                    raise DatasetError(f"{name} record, field {key!r}: {exc}") from None
            known[f.name] = value
        extra = {k: v for k, v in data.items() if k not in used}
        return cls(**known, extra=extra)  # type: ignore[call-arg]


@dataclass
class Metadata(Record):
    """The first record: who ran what, with which budget (rlms' `RLMMetadata` keys first)."""

    TYPE: ClassVar[str] = "metadata"

    format: str = FORMAT
    """Always `rlm-docs.trajectory`."""
    version: int = VERSION
    """The format version the file was written in (1 or 2; see `engine/trajectory.py`)."""
    timestamp: str | None = None
    """When the run started (ISO 8601, UTC)."""
    root_model: str | None = None
    """The root model's name."""
    max_depth: int | None = None
    """The deepest `rlm_query` level allowed (the budget's `max_depth`; 0 for baselines)."""
    max_iterations: int | None = _optional()
    """Root turns allowed (the budget's `max_steps`; a baseline's own turn limit)."""
    backend: str | None = None
    """The root model's backend (`openai`, `offline`, ...)."""
    backend_kwargs: dict[str, Any] | None = _optional()
    """rlms' backend arguments (`model_name`)."""
    environment_type: str | None = None
    """`rlm-docs-sandbox` for the engine, else the system's name."""
    environment_kwargs: dict[str, Any] | None = _optional()
    """The sandbox's corpus store, context size and resource limits."""
    other_backends: list[str] | None = _optional()
    """The sub-model spec (rlms' list of further backends)."""
    sub_model: str | None = _optional()
    """The model `llm_query` calls by default."""
    question: str | None = None
    """The question (a child run: the `rlm_query` prompt)."""
    question_id: str | None = None
    """The dataset's question id, or None for an ad-hoc question."""
    prompt_name: str | None = _optional()
    """The root prompt (`docs` or `madqa`)."""
    sub_calls: bool | None = _optional()
    """False in the no-sub-calls ablation (no `llm_query` / `rlm_query` bound)."""
    system: str | None = _optional()
    """The baseline system that wrote the file (absent for the engine)."""
    budget: dict[str, Any] | None = None
    """The run's `Budget` as a dict (a child run: its share of the parent's)."""
    depth: int = 0
    """0 for the top-level run, n for a child run n `rlm_query` levels down."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above (e.g. a baseline's `chunk_tokens`)."""


@dataclass
class TurnUsage(Record):
    """Tokens and dollars of one root call."""

    input_tokens: int = 0
    """Prompt tokens of the call."""
    output_tokens: int = 0
    """Completion tokens of the call."""
    cost_usd: float | None = None
    """The call's price in dollars (None when the model's price is unknown)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above (e.g. `cached_tokens`)."""


@dataclass
class SubCall(Record):
    """One call model code made through a host function: `llm_query` (also each prompt of an
    `llm_query_batched`), `rlm_query` (a child run) or a system's own sub-call (`extract`)."""

    kind: str = "llm_query"
    """`llm_query` | `rlm_query` | `extract`."""
    prompt: str = ""
    """The prompt; over 20,000 characters only its head (see `prompt_chars`)."""
    prompt_chars: int | None = _optional()
    """The full prompt's length when only its head is kept."""
    prompt_sha256: str | None = _optional()
    """The full prompt's sha256 when only its head is kept."""
    root_model: str | None = None
    """The model that answered (for `rlm_query`: the child's root model)."""
    response: str | None = None
    """The reply text (None when the call failed)."""
    error: str | None = _optional()
    """`Type: message` of a failed call (a budget refusal, a transport error)."""
    usage_summary: dict[str, Any] | None = _optional()
    """rlms' per-model token counts of an `llm_query`."""
    execution_time: float | None = None
    """Seconds the call took."""
    cost_usd: float | None = _optional()
    """Dollars of the call (for `rlm_query`: of the whole child run)."""
    ledger: dict[str, Any] | None = _optional()
    """The governor's ledger entry of an `llm_query` (`LedgerEntry.to_dict()`)."""
    depth: int | None = None
    """Depth of the run whose code made the call (v1 files: filled from their metadata)."""
    batch: int | None = None
    """The number of the `llm_query_batched` call (1, 2, ... within one run) this prompt was
    part of; None for a single call. Members of one batch share the number (v2 only)."""
    child: "Trajectory | None" = _optional(
        key="children", parse=lambda records: Trajectory.from_records(records)
    )
    """The child run of an `rlm_query` (its own metadata, iterations and result)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above."""

    def _child_answer(self) -> Any:
        result = self.child.result if self.child is not None else None
        return result.answer if result is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The record, with a response that repeats the child's answer written once."""
        out = super().to_dict()
        if _long_copy(self.response, self._child_answer()):
            out["response"], out["same_as"] = None, {"response": CHILD_ANSWER}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        call = super().from_dict(data)
        if call.extra.get("same_as") == {"response": CHILD_ANSWER}:
            del call.extra["same_as"]
            call.response = call._child_answer()
        return call


@dataclass
class CellResult(Record):
    """What running one code block gave (rlms' `REPLResult` keys first)."""

    stdout: str = ""
    """What the cell printed (bounded by the sandbox)."""
    stderr: str = ""
    """The error the cell raised (traceback text), or empty."""
    locals: dict[str, Any] = field(default_factory=dict)
    """Always empty: worker variables are not copied to the host (rlms compatibility)."""
    execution_time: float | None = None
    """Seconds the cell ran."""
    sub_calls: list[SubCall] = field(
        default_factory=list,
        metadata={"key": "rlm_calls", "parse": _many(SubCall.from_dict, "rlm_calls")},
    )
    """The calls the cell's code made, in the order they finished (rlms' `rlm_calls`)."""
    sub_calls_omitted: int = field(default=0, metadata={"key": "rlm_calls_omitted"})
    """Calls past the 1,000 recorded per block: counted, not recorded."""
    restarted: bool = False
    """The worker was killed and restarted during the cell (e.g. a timeout)."""
    batches: list[list[int]] | None = _optional()
    """`[batch number, prompts]` of each `llm_query_batched` call the cell made that got past
    the budget's size check (None: not recorded, as by systems that run no model code)."""
    read: list[list[Any]] | None = _optional()
    """`[doc, page]` of the pages the cell's helpers read first in this run (page, pages,
    lines, read_section); None: not recorded."""
    seen: list[list[Any]] | None = _optional()
    """`[doc, page]` of the pages search/grep/locate results named first in this run; None:
    not recorded."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above."""


@dataclass
class CodeBlock(Record):
    """One ```repl``` block of a root reply and what running it gave."""

    code: str = ""
    """The block's source."""
    result: CellResult = field(
        default_factory=CellResult, metadata={"parse": lambda v: CellResult.from_dict(v)}
    )
    """Its output, error and sub-calls."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above."""


@dataclass
class Iteration(Record):
    """One root turn: the messages added, the reply, the code it ran (rlms' `RLMIteration`)."""

    TYPE: ClassVar[str] = "iteration"

    iteration: int = 1
    """The turn number, from 1."""
    timestamp: str | None = None
    """When the turn started (ISO 8601, UTC)."""
    prompt: list[dict[str, Any]] = field(default_factory=list)
    """The messages added since the previous turn (the first turn: system prompt + question)."""
    response: str = ""
    """The root model's reply."""
    code_blocks: list[CodeBlock] = field(
        default_factory=list, metadata={"parse": _many(CodeBlock.from_dict, "code_blocks")}
    )
    """The reply's code blocks, in the order they ran."""
    final_answer: str | None = None
    """The final answer's text when the run ended on this turn."""
    iteration_time: float | None = None
    """Seconds the turn took."""
    notice: str | None = None
    """The governor's soft-limit text fed to the next turn, or the refusal that ended the run."""
    usage: TurnUsage | None = field(
        default=None, metadata={"parse": lambda v: TurnUsage.from_dict(v)}
    )
    """Tokens and dollars of the root call (None when no call was made)."""
    forced: bool = False
    """The forced final turn (a limit was reached; see `Result.stop_axis`)."""
    confirmation: bool = _optional(False)
    """A confirmation turn: the model saw what its finishing code printed."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above (e.g. bm25-agent's `search`, map-reduce's `map`)."""

    @property
    def sub_calls(self) -> list[SubCall]:
        """The turn's sub-calls, all blocks in order (not those inside child runs)."""
        return [call for block in self.code_blocks for call in block.result.sub_calls]


@dataclass
class Result(Record):
    """The last record: the answer and the effort spent (the prediction record, `Prediction
    .to_madqa()`, plus how the answer was made). A child run's result carries the answer as text
    and only the fields it knows."""

    TYPE: ClassVar[str] = "result"

    timestamp: str | None = None
    """When the run ended (ISO 8601, UTC)."""
    id: str | None = _optional()
    """The question id."""
    question: str | None = _optional()
    """The question."""
    answer: list[str] | str | None = None
    """The answer's values (a child run: the text its parent's `rlm_query` returned)."""
    explanation: str | None = _optional()
    """The answer's explanation (see `rlm_docs.answer_record`)."""
    caveat: str | None = _optional()
    """The answer's caveat, or empty (see `rlm_docs.answer_record`)."""
    citations: list[dict[str, Any]] | None = _optional()
    """Cited pages, `[{"file", "page"}]`."""
    steps: int | None = _optional()
    """Root-model calls (see `Prediction`)."""
    sub_calls: int | None = _optional()
    """Sub-model calls."""
    input_tokens: int | None = _optional()
    """Input tokens of every call of the question."""
    output_tokens: int | None = _optional()
    """Output tokens of every call of the question."""
    cost_usd: float | None = _optional()
    """Dollars of every call of the question."""
    wall_s: float | None = _optional()
    """Seconds the question took."""
    max_depth: int | None = _optional()
    """The deepest `rlm_query` level reached."""
    stop_reason: str | None = None
    """`final` | `forced` | `budget` | `error` (see `Prediction`)."""
    stop_axis: str | None = None
    """The limit that ended the run (`steps`, `sub_calls`, `input_tokens`, `output_tokens`,
    `cost_usd`, `wall_s`), or None when the model finished on its own or an error ended it
    (v1 files: always None, the axis was not recorded)."""
    trajectory: str | None = _optional()
    """The trajectory file's path."""
    error: str | None = _optional()
    """`Type: message` of an `error` stop."""
    info: dict[str, Any] = _optional({})
    """System-specific facts (see `Prediction.info`)."""
    raw_answer: str | None = _optional()
    """The final value as text, before parsing."""
    citation_source: str | None = _optional()
    """Where the citations came from: `model` | `cite` | `read` | `none`."""
    rejected_citations: list[dict[str, Any]] | None = _optional()
    """Citations dropped as invalid (unknown document, page out of range)."""
    extraction: str | None = _optional()
    """How the answer was parsed: `structured`, `extract`, `heuristic (...)`, `empty`."""
    variables: dict[str, Any] | None = _optional()
    """The REPL's variable listing at the end (`SHOW_VARS`)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys not listed above (e.g. the decomposition record)."""


@dataclass
class Trajectory:
    """All records of one run (root or child): the unit every reader works on."""

    metadata: Metadata
    """The first record."""
    iterations: list[Iteration] = field(default_factory=list)
    """One per root turn, in order."""
    result: Result | None = None
    """The last record; None while the run is going or when it was cut short."""

    def _final_answer(self) -> Any:
        return self.iterations[-1].final_answer if self.iterations else None

    def to_records(self) -> list[dict[str, Any]]:
        """The records as JSON-able dicts, in file order (a result's answer that repeats the
        last iteration's `final_answer` written once)."""
        records = [self.metadata.to_dict()] + [it.to_dict() for it in self.iterations]
        if self.result is None:
            return records
        result = self.result.to_dict()
        same = {
            k: "final_answer"
            for k in ("answer", "raw_answer")
            if _long_copy(result.get(k), self._final_answer())
        }
        if same:
            result |= dict.fromkeys(same) | {"same_as": same}
        return [*records, result]

    @classmethod
    def from_records(cls, records: list[dict[str, Any]]) -> "Trajectory":
        """Read version 1 or 2 records; DatasetError when line 1 is not a metadata record or a
        record has a bad shape. Unknown record types are skipped (as rlms readers do)."""
        if not isinstance(records, list) or not records:
            raise DatasetError("not an rlm-docs trajectory (it has no records)")
        if not isinstance(records[0], dict) or records[0].get("type") != Metadata.TYPE:
            raise DatasetError("not an rlm-docs trajectory (line 1 must be a 'metadata' record)")
        traj = cls(Metadata.from_dict(records[0]))
        for record in records[1:]:
            kind = record.get("type") if isinstance(record, dict) else None
            if kind == Iteration.TYPE:
                traj.iterations.append(Iteration.from_dict(record))
            elif kind == Result.TYPE:
                traj.result = Result.from_dict(record)
                same = traj.result.extra.get("same_as")
                if isinstance(same, dict) and set(same.values()) == {"final_answer"}:
                    del traj.result.extra["same_as"]
                    for key in same:
                        if key in ("answer", "raw_answer"):
                            setattr(traj.result, key, traj._final_answer())
        for call in traj.own_sub_calls():  # version 1 did not record the caller's depth
            if call.depth is None:
                call.depth = traj.metadata.depth
        return traj

    @property
    def depth(self) -> int:
        """0 for a top-level run."""
        return self.metadata.depth

    @property
    def code_blocks(self) -> list[CodeBlock]:
        """Every code block the root model ran, in order."""
        return [block for it in self.iterations for block in it.code_blocks]

    def own_sub_calls(self) -> list[SubCall]:
        """The calls this run's code made (not those inside its child runs)."""
        return [call for it in self.iterations for call in it.sub_calls]

    def walk_sub_calls(self) -> Iterator[tuple[Iteration, SubCall]]:
        """(turn, call) for every call of this run and, depth first, of its child runs; a
        child's calls come right after the `rlm_query` that ran it, with the child's turn."""
        for it in self.iterations:
            for call in it.sub_calls:
                yield it, call
                if call.child is not None:
                    yield from call.child.walk_sub_calls()
