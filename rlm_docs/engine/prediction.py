"""The result of one question: the answer record, its page citations and the effort spent."""

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from rlm_docs.answer_record import Answer
from rlm_docs.governor import axes


def effort_from_totals(totals: Mapping[str, Any]) -> dict[str, Any]:
    """The recorded effort fields (`governor.axes.recorded`) from a governor's `totals()`: a
    step is a root call (see `Prediction`)."""
    out: dict[str, Any] = {}
    for a in axes.axes():
        if a.recorded:
            out[a.name] = totals["root_calls"] if a.source == "steps" else totals.get(a.name, 0)
    return out


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
    The effort fields (`steps` ... `max_depth`) are the recorded axes of `governor.axes`; an
    axis declared beyond them is kept in `more_effort` (set both with `set_effort`).
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
    more_effort: dict[str, Any] = field(default_factory=dict)

    def set_effort(self, values: Mapping[str, Any]) -> None:
        """Set effort fields (`effort_from_totals`); axes without a field of their own go to
        `more_effort`."""
        for name, value in values.items():
            if name in _FIELDS:
                setattr(self, name, value)
            else:
                self.more_effort[name] = value

    def effort(self) -> dict[str, Any]:
        """Every recorded effort axis, in declaration order (seconds rounded to the ms, as
        records store them)."""
        out: dict[str, Any] = {}
        for a in axes.axes():
            if a.recorded:
                value = (
                    getattr(self, a.name) if a.name in _FIELDS else self.more_effort.get(a.name, 0)
                )
                out[a.name] = round(value, 3) if a.unit == "seconds" else value
        return out

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
            **self.effort(),
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
        """Every field, JSON-able (for `--json` output and notebooks); `more_effort` only when
        an axis is declared beyond the effort fields."""
        out = asdict(self)
        if not out["more_effort"]:
            del out["more_effort"]
        return out


_FIELDS = {f.name for f in fields(Prediction)}
