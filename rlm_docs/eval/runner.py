"""`run_eval`: answer every question of a dataset with one system, score it, and record it.

Questions run in parallel behind an `Executor`; each finished question is scored (ANLS*, judge,
citations, error type) inside its task and returned to this thread, which alone appends it to
`results.jsonl`. `resume=True` skips questions already recorded, so a crash, Ctrl-C or SIGKILL
loses at most the questions in flight and never duplicates one.
"""

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rlm_docs import __version__
from rlm_docs.corpus import Corpus
from rlm_docs.engine.prediction import Prediction
from rlm_docs.errors import ConfigError
from rlm_docs.eval.aggregate import summarize
from rlm_docs.eval.correction import DEFAULT_SENSITIVITY, DEFAULT_SPECIFICITY
from rlm_docs.eval.dataset import Question, dataset_hash, load_questions
from rlm_docs.eval.executor import Executor, ThreadExecutor
from rlm_docs.eval.filters import filter_questions, question_fields
from rlm_docs.eval.judge import Verdict, run_judge
from rlm_docs.eval.rundir import FORMAT, RunDir, run_rows
from rlm_docs.eval.scoring import SCORING_VERSION, score_prediction
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.models import make_client, parse_spec
from rlm_docs.models.prices import sum_usd
from rlm_docs.systems import SystemConfig, make_system


@dataclass
class EvalSettings:
    """Everything that defines a run (all but `workers`, `resume`, `progress` must match on
    resume)."""

    dataset: Path
    corpus: Path
    system: str
    model: str
    out: Path
    sub_model: str | None = None
    judge: str | None = None
    budget: Budget = field(default_factory=Budget)
    options: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    where: list[str] = field(default_factory=list)
    workers: int = 4
    resume: bool = False
    progress: bool = True
    sensitivity: float = DEFAULT_SENSITIVITY
    specificity: float = DEFAULT_SPECIFICITY


def _manifest(s: EvalSettings, questions: list[Question]) -> dict[str, Any]:
    manifest = {
        "format": FORMAT,
        "version": 1,
        "scoring_version": SCORING_VERSION,
        "rlm_docs_version": __version__,
        "started_at": datetime.now(UTC).isoformat(),
        "system": s.system,
        "model": s.model,
        "sub_model": s.sub_model,
        "judge": s.judge,
        "judge_sensitivity": s.sensitivity,
        "judge_specificity": s.specificity,
        "budget": asdict(s.budget),
        "options": s.options,
        "dataset": str(Path(s.dataset).resolve()),
        "dataset_sha256": dataset_hash(s.dataset),
        "corpus": str(Path(s.corpus).resolve()),
        "limit": s.limit,
        "questions": [
            {
                "id": q.id,
                "question": q.question,
                "hop_type": q.hop_type,
                "question_type": q.question_type,
                "domain": q.domain,
                "page_evidence": q.page_evidence,
                "has_evidence": bool(q.evidence),
                "fields": question_fields(q),
            }
            for q in questions
        ],
    }
    if s.where:  # absent when unfiltered, so runs made before filters existed still resume
        manifest["where"] = list(s.where)
    return manifest


def unknown_evidence(questions: list[Question], corpus: Corpus) -> dict[str, list[str]]:
    """{question id: evidence documents the corpus does not hold} (matched by stem, any case)."""
    out: dict[str, list[str]] = {}
    for q in questions:
        missing = sorted(
            {e["document"] for e in q.evidence if corpus.resolve(e["document"]) is None}
        )
        if missing:
            out[q.id] = missing
    return out


class Cancelled(Exception):
    """A question that finished after its run was interrupted (never recorded)."""


def _task(
    system: Any, judge_client: Any, budget: Budget, ledger: Ledger, cancelled: threading.Event
) -> Callable[[Question], dict[str, Any]]:
    """The per-question work: answer, judge, score; never raises for a failed answer.

    A question that ends after the run was interrupted (`cancelled`) deletes its trajectory
    and raises `Cancelled`: its result will never be recorded, so no file may claim otherwise.
    """

    def run(q: Question) -> dict[str, Any]:
        governor = Governor(budget, ledger=ledger, question_id=q.id)
        status = "ok"
        try:
            prediction = system.answer(q, governor)
        except Exception as exc:  # noqa: BLE001 - a failed question is a wrong answer
            prediction = Prediction(
                question=q.question,
                question_id=q.id,
                stop_reason="error",
                error=f"{type(exc).__name__}: {exc}",
            )
        if cancelled.is_set():
            if prediction.trajectory:
                Path(prediction.trajectory).unlink(missing_ok=True)
            raise Cancelled(q.id)
        if prediction.stop_reason == "error":
            status = "failed"
        judge = None
        if judge_client is not None:

            def judge(question: Question, items: list[str]) -> Verdict:
                free = Budget(max_steps=None, max_sub_calls=None)
                gov = Governor(free, ledger=ledger, question_id=question.id)
                return run_judge(
                    judge_client, gov, question.question, items, question.answer_variants
                )

        record = prediction.to_madqa() | {"id": q.id, "question": q.question}
        record |= score_prediction(q, record, judge)
        calls = [e.to_dict() for e in ledger.entries if e.question_id == q.id]
        judge_calls = [c for c in calls if c["role"] == "judge"]
        return record | {
            "system": system.name,
            "answer_variants": q.answer_variants,
            "evidence": q.evidence,
            "status": status,
            "hop_type": q.hop_type,
            "question_type": q.question_type,
            "domain": q.domain,
            "fields": question_fields(q),
            "total_tokens": prediction.input_tokens + prediction.output_tokens,
            "judge_cost_usd": sum_usd([c["cost_usd"] for c in judge_calls]),
            "judge_calls": len(judge_calls),
            "ledger": calls,
        }

    return run


def _stats(records: dict[str, dict[str, Any]]) -> str:
    if not records:
        return ""
    acc = sum(float(r.get("score") or 0) for r in records.values()) / len(records)
    cost = sum(float(r.get("cost_usd") or 0) for r in records.values())
    return f"acc {acc:.1%}  ${cost:.4f}"


def run_eval(settings: EvalSettings, executor: Executor | None = None) -> dict[str, Any]:
    """Run (or resume) an evaluation; returns the run summary (see `aggregate.summarize`)."""
    if settings.judge and parse_spec(settings.judge).backend == "offline":
        raise ConfigError(
            "--judge offline: the offline model cannot judge answers; give a real model "
            "or omit --judge (accuracy is then the numeric and ANLS* >= 0.5 stages)"
        )
    questions = filter_questions(load_questions(settings.dataset), settings.where)
    questions = questions[: settings.limit] if settings.limit else questions
    corpus = Corpus.load(settings.corpus)
    unknown = unknown_evidence(questions, corpus)
    # Everything a user can get wrong (model strings, keys, workers) is checked before the run
    # directory exists: a refused start must not leave a run.json that blocks the fixed command.
    run = RunDir(settings.out)
    ledger = Ledger()
    config = SystemConfig(
        corpus=corpus,
        model=settings.model,
        sub_model=settings.sub_model,
        budget=settings.budget,
        log_dir=str(run.trajectories),
        ledger=ledger,
        options=settings.options,
    )
    system = make_system(settings.system, config)
    judge_client = make_client(settings.judge) if settings.judge else None
    executor = executor or ThreadExecutor(settings.workers)
    manifest = run.start(_manifest(settings, questions), settings.resume)
    run.truncate_torn_tail()
    records = run.read_results()
    todo = [q for q in questions if q.id not in records]
    cancelled = threading.Event()
    task = _task(system, judge_client, settings.budget, ledger, cancelled)
    console = Console(stderr=True)
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[stats]}"),
    )
    if unknown:
        listed = "; ".join(f"{qid}: {', '.join(docs)}" for qid, docs in list(unknown.items())[:5])
        more = f" (and {len(unknown) - 5} more)" if len(unknown) > 5 else ""
        console.print(
            f"warning: {len(unknown)} question(s) name evidence documents that are not in the "
            f"corpus {settings.corpus}, so their citations cannot match: {listed}{more}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    started = time.perf_counter()
    try:
        with Progress(*columns, console=console, disable=not settings.progress) as progress:
            bar = progress.add_task(
                f"{settings.system}",
                total=len(questions),
                completed=len(records),
                stats=_stats(records),
            )
            for record in executor.map_unordered(task, todo):
                run.append(record)
                records[record["id"]] = record
                progress.update(bar, advance=1, stats=_stats(records))
    except KeyboardInterrupt:
        # Questions still in flight finish in the background (or die with the process): mark
        # them cancelled so none records a trajectory, and drop those already written.
        cancelled.set()
        run.remove_unrecorded_trajectories(records)
        raise
    rows = run_rows(manifest, records)
    ledger_rows = [entry for row in rows for entry in row.get("ledger", [])]
    run.write_outputs(rows, ledger_rows)
    summary = summarize(
        rows,
        judged=bool(settings.judge),
        sensitivity=settings.sensitivity,
        specificity=settings.specificity,
    )
    summary["ran_now"] = len(todo)
    summary["unknown_evidence"] = unknown
    summary["session_wall_s"] = time.perf_counter() - started
    return summary
