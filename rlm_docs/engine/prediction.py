"""The result of one question: the answer record, its page citations and the effort spent."""

from dataclasses import asdict, dataclass, field
from typing import Any

from rlm_docs.answer_record import Answer

# The effort every system records per question (the `Prediction` fields of the same names, and
# the columns of results.jsonl / predictions.parquet): the one list everybody imports.
EFFORT_FIELDS = (
    "steps",
    "sub_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "wall_s",
    "max_depth",
)
# The effort measures reports compare questions and runs on (bootstrap intervals, Kuiper):
# EFFORT_FIELDS with `total_tokens` (input + output) added, and without dollars (reported
# as totals beside them) and depth (a setting more than an effort).
EFFORT_MEASURES = ("steps", "sub_calls", "input_tokens", "output_tokens", "total_tokens", "wall_s")


def effort_from_totals(totals: dict[str, Any]) -> dict[str, Any]:
    """EFFORT_FIELDS from a governor's `totals()` (a step is a root call: see `Prediction`)."""
    return {"steps": totals["root_calls"]} | {f: totals[f] for f in EFFORT_FIELDS[1:]}


@dataclass
class Prediction:
    """Answer record + citations + effort; `to_madqa()` is the MADQA prediction JSONL record.

    `answer` holds the record's `values` (MADQA's field name; the only part that is scored),
    `explanation` and `caveat` the rest of it (see `rlm_docs.answer_record`).

    `steps`, the one definition every system (`rlm`, `bm25-agent`, `static-rag`) reports: the
    number of root-model calls sent for the question (the governor's `root_calls`: role `root`
    at any depth, a forced last turn included, failed calls included; extraction, judge and
    sub-model calls are not steps, nor is a call the budget refused before sending). With
    `max_steps=N` a run takes N ordinary turns and may add one forced answering turn: N + 1.

    `stop_reason`: `final` (the model answered), `forced` (steps or budget ran out and the model
    answered on the forced last turn, or a baseline's own last turn), `budget` (even that turn
    was refused; the answer is built from evidence so far), `error` (an unrecoverable model or
    sandbox failure).
    `stop_axis`: the limit that ended the run, as data (inspect_ai's `EvalSample.limit`): a
    governor axis (`steps`, `sub_calls`, `input_tokens`, `output_tokens`, `cost_usd`, `wall_s`)
    when a limit forced the last turn or refused it (`forced` / `budget`; also `final` when a
    limit cut a confirmation turn short, so the unconfirmed answer stood), else None.
    `budget`: the governor's `remaining()` when the run ended: per axis (steps, sub_calls,
    input_tokens, output_tokens, cost_usd, wall_s, depth) its `limit`, `used`, `left` and
    `share_used`, so accuracy can be read against the share of each axis a question used;
    empty for systems without a governed loop (then left out of `to_madqa()`).
    `anytime`: with `RLM(anytime=...)`, one entry per checkpoint side turn: the budget
    `shares` it stands for, the `share_used` and `axis` when it was asked, the `answer` list
    and `citations` it gave (parsed without an extraction call; None if the budget refused
    the turn) and the effort spent by then; `eval` adds each one's `score` and `correct`.
    `info`: system-specific facts a reader of the results needs (e.g. how much of the corpus a
    `long-context` call kept, how many chunks `map-reduce` read); in `to_madqa()` when set.
    """

    question: str
    answer: list[str] = field(default_factory=list)
    explanation: str = ""
    caveat: str = ""
    citations: list[dict[str, Any]] = field(default_factory=list)
    steps: int = 0
    sub_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    max_depth: int = 0
    stop_reason: str = "final"
    stop_axis: str | None = None
    trajectory: str | None = None
    question_id: str | None = None
    raw_answer: str = ""
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    budget: dict[str, Any] = field(default_factory=dict)
    anytime: list[dict[str, Any]] = field(default_factory=list)

    def take(self, answer: Answer) -> None:
        """Set the answer record's values, explanation and caveat (not its citations, which
        each system validates against the corpus first)."""
        self.answer, self.explanation, self.caveat = (
            answer.values,
            answer.explanation,
            answer.caveat,
        )

    def to_madqa(self) -> dict[str, Any]:
        """MADQA's prediction record (`question`, `answer`, `citations`) plus the answer's
        explanation and caveat and the effort fields."""
        record: dict[str, Any] = {}
        if self.question_id is not None:
            record["id"] = self.question_id
        record |= {
            "question": self.question,
            "answer": list(self.answer),
            "explanation": self.explanation,
            "caveat": self.caveat,
            "citations": [{"file": c["file"], "page": int(c["page"])} for c in self.citations],
            "steps": self.steps,
            "sub_calls": self.sub_calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": self.cost_usd,
            "wall_s": round(self.wall_s, 3),
            "max_depth": self.max_depth,
            "stop_reason": self.stop_reason,
            "stop_axis": self.stop_axis,
            "trajectory": self.trajectory,
        }
        if self.error:
            record["error"] = self.error
        if self.info:
            record["info"] = self.info
        if self.budget:
            record["budget"] = self.budget
        if self.anytime:
            record["anytime"] = self.anytime
        return record

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-able (for `--json` output and notebooks)."""
        return asdict(self)
