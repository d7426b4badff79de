"""The results row: one scored question of an eval run, as `results.jsonl` stores it.

`ResultRow` declares every column once, with its type and what it means (the `Annotated`
text, from which docs/runs.md's table is generated and checked). Rows are built here only:
`result_row` for an answered question, `missing_row` for one without a result. Every reader
(aggregate, report, plots, filters, the decomposition table, the viewer) reads these fields.

The effort columns are the recorded axes of `governor.axes` (an axis declared there appears in
every row without a change here), followed by the `derived` ones (`total_tokens`). Rows carry
`version` (ROW_VERSION); rows written before it have none and hold the same columns (read as
version 0 by `row_version`).
"""

from collections.abc import Mapping
from typing import Annotated, Any, TypedDict, cast, get_type_hints

from rlm_docs.errors import DatasetError
from rlm_docs.eval.filters import question_fields
from rlm_docs.governor import axes
from rlm_docs.models.prices import sum_usd
from rlm_docs.questions import Question

ROW_VERSION = 1


class ResultRow(TypedDict, total=False):
    """One scored question of an eval run (see the module docstring)."""

    id: Annotated[str, "The question id."]
    question: Annotated[str, "The question text."]
    answer: Annotated[list[str], "The answer's values (the only part that is scored)."]
    explanation: Annotated[str, "The answer's explanation (read by the judge, never scored)."]
    caveat: Annotated[str, "The answer's caveat, or empty (never scored)."]
    citations: Annotated[list[dict[str, Any]], 'Cited pages, `[{"file", "page"}]`.']
    steps: Annotated[int, "Root-model calls, a forced last turn included."]
    sub_calls: Annotated[int, "Sub-model calls (`llm_query`, child runs' calls included)."]
    input_tokens: Annotated[int, "Input tokens of every call of the question."]
    output_tokens: Annotated[int, "Output tokens of every call of the question."]
    cost_usd: Annotated[float, "Dollars of every answering call (the judge's apart)."]
    wall_s: Annotated[float, "Seconds the question took."]
    max_depth: Annotated[int, "The deepest `rlm_query` level reached."]
    stop_reason: Annotated[str, "`final` | `forced` | `budget` | `error` (see `Prediction`)."]
    stop_axis: Annotated[str | None, "The budget axis that ended the run, else null."]
    trajectory: Annotated[str | None, "The question's trajectory file."]
    error: Annotated[str, "What failed (only in a failed question's row)."]
    info: Annotated[dict[str, Any], "System-specific facts (only when the system sets them)."]
    budget: Annotated[
        dict[str, Any], "Per budget axis its `limit`, `used`, `left`, `share_used` at the end."
    ]
    anytime: Annotated[list[dict[str, Any]], "The answer at each `--anytime` budget share."]
    anls: Annotated[float, "ANLS* of the answer's values against the gold variants."]
    score: Annotated[float | None, "The question's score (0..1; null: `needs_judge`)."]
    stage: Annotated[str, "The scoring stage that decided (`exact`, `numeric`, `judge`, ...)."]
    judgment: Annotated[str | None, "The judge's verdict when the judge decided."]
    judge_issue: Annotated[str, "The judge's main issue (judged rows only)."]
    judge_explanation: Annotated[str, "The judge's explanation (judged rows only)."]
    precision: Annotated[float, "A set-scored workload's precision (its scorer only)."]
    recall: Annotated[float, "A set-scored workload's recall (its scorer only)."]
    correct: Annotated[bool | None, "Score >= 0.5 (or the workload's rule); null: not decided."]
    page_f1: Annotated[float | None, "Page-citation F1; null when the gold cannot score it."]
    doc_f1: Annotated[float | None, "Document-citation F1; null when the gold has no evidence."]
    error_type: Annotated[str | None, "MADQA's error taxonomy of a decided answer."]
    sub_calls_by_depth: Annotated[str | None, "Decomposition: sub-calls per depth (JSON text)."]
    batches: Annotated[int | None, "Decomposition: `llm_query_batched` calls."]
    fanout_max: Annotated[int | None, "Decomposition: the largest batch."]
    fanout_mean: Annotated[float | None, "Decomposition: the mean batch size."]
    fanouts: Annotated[list[int] | None, "Decomposition: every batch's size."]
    child_runs: Annotated[int | None, "Decomposition: `rlm_query` child runs."]
    sub_call_chars: Annotated[int | None, "Decomposition: characters sent to sub-calls."]
    sub_call_tokens: Annotated[int | None, "Decomposition: tokens sent to sub-calls."]
    max_sub_call_chars: Annotated[int | None, "Decomposition: the longest sub-call prompt."]
    pages_looked: Annotated[int | None, "Decomposition: distinct pages that reached a model."]
    docs_looked: Annotated[int | None, "Decomposition: distinct documents of those pages."]
    corpus_share_read: Annotated[float | None, "Decomposition: share of the corpus read."]
    cells: Annotated[int | None, "Decomposition: code cells run."]
    cell_errors: Annotated[int | None, "Decomposition: cells that raised."]
    restarts: Annotated[int | None, "Decomposition: sandbox restarts."]
    cells_unanalysed: Annotated[int | None, "Decomposition: cells too nested to analyse."]
    strategies: Annotated[list[str] | None, "Decomposition: strategy tags of the run."]
    system: Annotated[str, "The system that answered (`rlm`, `bm25-agent`, ...)."]
    answer_variants: Annotated[list[Any], "The gold answer variants."]
    evidence: Annotated[list[dict[str, Any]], "The gold evidence pages."]
    status: Annotated[str, "`ok` | `failed` | `missing` (no result: wrong, zero effort)."]
    hop_type: Annotated[str, "The question's hop type (`single`, `multi`, ...)."]
    question_type: Annotated[str, "The question's type field."]
    domain: Annotated[str, "The question's domain field."]
    fields: Annotated[dict[str, Any], "The question's scalar fields, for `--where` filters."]
    total_tokens: Annotated[int, "Input + output tokens (a derived effort axis)."]
    judge_cost_usd: Annotated[float, "Dollars of the judge's calls for this question."]
    judge_calls: Annotated[int, "Judge calls for this question."]
    ledger: Annotated[list[dict[str, Any]], "Every model call of the question (ledger entries)."]
    trajectory_jsonl: Annotated[str, "A remote worker's trajectory, until the driver stores it."]
    version: Annotated[int, "The row schema version (ROW_VERSION); absent in older runs."]


def columns() -> dict[str, tuple[str, str]]:
    """{column: (type, meaning)} of `ResultRow`, in declaration order (docs/runs.md's table)."""
    hints = get_type_hints(ResultRow, include_extras=True)
    out = {}
    for name, hint in hints.items():
        kind = str(hint.__origin__).replace("typing.", "")
        out[name] = (kind.replace("<class '", "").replace("'>", ""), hint.__metadata__[0])
    return out


def columns_table() -> str:
    """docs/runs.md's table of the row's columns (checked against `ResultRow` by a test)."""
    lines = ["| Column | Type | Meaning |", "|---|---|---|"]
    for name, (kind, meaning) in columns().items():
        kind, meaning = kind.replace("|", "\\|"), meaning.replace("|", "\\|")
        lines.append(f"| `{name}` | `{kind}` | {meaning} |")
    return "\n".join(lines) + "\n"


def result_row(
    record: Mapping[str, Any],
    question: Question,
    *,
    scores: Mapping[str, Any],
    decomposition: Mapping[str, Any],
    system: str,
    calls: list[dict[str, Any]],
) -> ResultRow:
    """The row of an answered question: its prediction record (`Prediction.to_madqa()`), its
    scores (`scoring.score_prediction`), its decomposition's flat columns, the question's gold
    and fields, and its ledger entries (`calls`; the judge's are counted apart)."""
    judge_calls = [c for c in calls if c["role"] == "judge"]
    row = dict(record) | {"id": question.id, "question": question.question}
    row |= scores
    row |= decomposition
    row |= {
        "system": system,
        "answer_variants": question.answer_variants,
        "evidence": question.evidence,
        "status": "failed" if record.get("stop_reason") == "error" else "ok",
        "hop_type": question.hop_type,
        "question_type": question.question_type,
        "domain": question.domain,
        "fields": question_fields(question),
    }
    row |= {a.name: a.derive(row) for a in axes.axes() if a.source == "derived" and a.derive}
    row |= {
        "judge_cost_usd": sum_usd([c["cost_usd"] for c in judge_calls]),
        "judge_calls": len(judge_calls),
        "ledger": calls,
        "version": ROW_VERSION,
    }
    return cast(ResultRow, row)


def missing_row(meta: Mapping[str, Any]) -> ResultRow:
    """The row of a question that has no result: wrong, with zero effort (never dropped)."""
    row: dict[str, Any] = {
        "id": meta["id"],
        "question": meta.get("question", ""),
        "hop_type": meta.get("hop_type", "single"),
        "question_type": meta.get("question_type", ""),
        "domain": meta.get("domain", ""),
        "fields": meta.get("fields", {}),
        "status": "missing",
        "answer": [],
        "citations": [],
    }
    for a in axes.axes():  # the float fields stay floats in the Parquet column
        if a.recorded or a.source == "derived":
            row[a.name] = 0.0 if a.unit in ("usd", "seconds") else 0
    row |= {
        "stop_axis": None,
        "anls": 0.0,
        "score": 0.0,
        "stage": "missing",
        "correct": False,
        "page_f1": 0.0 if meta.get("page_evidence", True) else None,
        "doc_f1": 0.0 if meta.get("has_evidence", True) else None,
        "error_type": "refusal",
        "version": ROW_VERSION,
    }
    return cast(ResultRow, row)


def check_effort(record: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The recorded effort fields of a record; DatasetError naming `where` (file:line) and the
    field when one is neither a number nor null (reports, summaries and the viewer sum them)."""
    values = {k: record.get(k) for k in axes.recorded()}
    for key, value in values.items():
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise DatasetError(f"{where}: field {key!r} must be a number, got {value!r:.60}")
    return values


def row_version(row: Mapping[str, Any]) -> int:
    """The schema version of a stored row (0: written before rows carried one)."""
    version = row.get("version", 0)
    return version if isinstance(version, int) and not isinstance(version, bool) else 0


def read_row(record: Mapping[str, Any], where: str) -> ResultRow:
    """A stored row as a `ResultRow` (DatasetError naming `where` for a bad effort field). A
    row of version 0 holds the same columns, so it is read as it is."""
    check_effort(record, where)
    return cast(ResultRow, dict(record))


def verdict(row: ResultRow) -> tuple[bool | None, float | None]:
    """(correct, score) of a row: None for both when it was not decided (`needs_judge`, or a
    record that was never scored)."""
    if row.get("stage") == "needs_judge":
        return None, None
    score = row.get("score")
    score = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
    correct = row.get("correct")
    if not isinstance(correct, bool):
        correct = None if score is None else score >= 0.5
    return correct, score
