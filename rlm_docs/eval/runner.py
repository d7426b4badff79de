"""`run_eval`: answer every question of a dataset with one system, score it, and record it.

Questions run in parallel behind an `Executor`; each finished question is scored (ANLS*, judge,
citations, error type) inside its task and returned to this thread, which alone appends it to
`results.jsonl`. `resume=True` skips questions already recorded, so a crash, Ctrl-C or SIGKILL
loses at most the questions in flight and never duplicates one; `retry_failed=True` also runs
the failed ones again, replacing their rows. The run holds its directory's writer lock
(`run_lock`) throughout, so a second process resuming it at the same time is refused instead of
answering (and paying for) the same questions again.
"""

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.store import fingerprint
from rlm_docs.errors import ConfigError
from rlm_docs.eval.aggregate import summarize
from rlm_docs.eval.correction import DEFAULT_SENSITIVITY, DEFAULT_SPECIFICITY
from rlm_docs.eval.coverage import corpus_coverage
from rlm_docs.eval.dataset import dataset_hash, load_questions
from rlm_docs.eval.executor import Executor, make_executor
from rlm_docs.eval.failures import failure_causes
from rlm_docs.eval.filters import filter_questions, question_fields
from rlm_docs.eval.memory_cost import memory_costs
from rlm_docs.eval.question_task import QuestionTask
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import FORMAT, EvalRunDir, run_rows
from rlm_docs.eval.scoring import SCORING_VERSION
from rlm_docs.governor import Budget
from rlm_docs.models import parse_spec
from rlm_docs.questions import Question
from rlm_docs.terminal_text import console as terminal_console
from rlm_docs.version import __version__


@dataclass
class EvalSettings:
    """Everything that defines a run (all but `workers`, `resume`, `retry_failed`, `progress`
    and the executor settings must match on resume).

    `executor`: `thread` (a pool of `workers` threads) or `ray` (one actor per Ray node, each
    running `workers` questions at once; `ray_address` as for `ray.init`, None for a local
    Ray; `ship_corpus` sends the store through Ray's object store instead of assuming every
    node reads the same path).
    """

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
    executor: str = "thread"
    ray_address: str | None = None
    ship_corpus: bool = False
    resume: bool = False
    retry_failed: bool = False
    progress: bool = True
    sensitivity: float = DEFAULT_SENSITIVITY
    specificity: float = DEFAULT_SPECIFICITY
    # a response-cache file every model client uses, offline included (a step-limit sweep's;
    # see `step_limits`); None: `make_client`'s default rule
    cache: str | None = None


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
        "budget": {k: v for k, v in asdict(s.budget).items() if k != "stop_at_step"},
        "options": s.options,
        "dataset": str(Path(s.dataset).resolve()),
        "dataset_sha256": dataset_hash(s.dataset),
        "corpus": str(Path(s.corpus).resolve()),
        "corpus_sha256": fingerprint(s.corpus),
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
    if s.budget.stop_at_step is not None:  # one limit of a step-limit sweep (`step_limits`)
        manifest["step_limit"] = s.budget.stop_at_step
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


def _stats(records: Mapping[str, Mapping[str, Any]]) -> str:
    if not records:
        return ""
    decided = [r for r in records.values() if r.get("score") is not None]
    acc = f"{sum(float(r['score']) for r in decided) / len(decided):.1%}" if decided else "n/a"
    left = len(records) - len(decided)
    cost = sum(float(r.get("cost_usd") or 0) for r in records.values())
    return f"acc {acc}{f' ({left} need --judge)' if left else ''}  ${cost:.4f}"


def run_eval(
    settings: EvalSettings,
    executor: Executor | None = None,
    on_record: Callable[[ResultRow], None] | None = None,
) -> dict[str, Any]:
    """Run (or resume) an evaluation; returns the run summary (see `aggregate.summarize`).

    `on_record` is called in this thread with each question's record once it is on disk
    (e.g. `rlm_docs.tracing` turning it into spans); questions recorded before a resume are
    not replayed to it."""
    if settings.judge and parse_spec(settings.judge).backend == "offline":
        raise ConfigError(
            "--judge offline: the offline model cannot judge answers; give a real model "
            "or omit --judge (accuracy is then the numeric and ANLS* >= 0.5 stages)"
        )
    questions = filter_questions(load_questions(settings.dataset), settings.where)
    questions = questions[: settings.limit] if settings.limit else questions
    corpus = Corpus.load(settings.corpus)
    unknown = unknown_evidence(questions, corpus)
    # Everything a user can get wrong (model strings, keys, workers, the executor) is checked
    # before the run directory exists: a refused start must not leave a run.json that blocks
    # the fixed command.
    run = EvalRunDir(settings.out)
    task = QuestionTask(
        corpus=str(settings.corpus),
        system=settings.system,
        model=settings.model,
        sub_model=settings.sub_model,
        judge=settings.judge,
        budget=settings.budget,
        options=settings.options,
        trajectories=str(run.trajectories),
        cache=settings.cache,
    )
    task.build(corpus)
    owned = executor is None
    executor = executor or make_executor(settings)
    if getattr(executor, "remote", False):
        task = task.copy(trajectories=None)  # workers ship trajectories back to this process
    try:
        with run.lock():
            return _run(settings, questions, unknown, run, task, executor, on_record)
    finally:
        close = getattr(executor, "close", None)
        if owned and close is not None:
            close()


def _run(
    settings: EvalSettings,
    questions: list[Question],
    unknown: dict[str, list[str]],
    run: EvalRunDir,
    task: QuestionTask,
    executor: Executor,
    on_record: Callable[[ResultRow], None] | None = None,
) -> dict[str, Any]:
    """The run itself, once everything the user gave has been checked."""
    manifest = run.start(_manifest(settings, questions), settings.resume)
    run.truncate_torn_tail()
    records = run.read_results()
    if settings.retry_failed:
        run.drop_failed(records)
    run.remove_unrecorded_trajectories(records)  # of questions a killed run never recorded
    todo = [q for q in questions if q.id not in records]
    console = terminal_console(stderr=True)
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
                if record["id"] in records:
                    continue  # a remote executor may deliver a re-run question twice
                record = run.adopt_trajectory(record)
                # known before it is appended: a Ctrl-C between the two must not delete the
                # trajectory of a recorded question (an unrecorded one is cleaned on resume)
                records[record["id"]] = record
                run.append(record)
                if on_record is not None:
                    on_record(record)
                progress.update(bar, advance=1, stats=_stats(records))
    except KeyboardInterrupt:
        # Questions still in flight finish in the background (or die with the process): mark
        # them cancelled so none records a trajectory, and drop those already written.
        task.cancelled.set()
        run.remove_unrecorded_trajectories(records)
        raise
    rows = run_rows(manifest, records)
    attempts = run.read_attempts()  # rows --retry-failed replaced: their calls were made
    ledger_rows = [entry for row in [*attempts, *rows] for entry in row.get("ledger", [])]
    run.write_outputs(rows, ledger_rows)
    summary = summarize(
        rows,
        judged=bool(settings.judge),
        sensitivity=settings.sensitivity,
        specificity=settings.specificity,
    )
    summary["ran_now"] = len(todo)
    summary["failures"] = failure_causes(rows)
    coverage = corpus_coverage(rows)
    summary["coverage"] = coverage.sentence() if coverage else None
    summary["memory"] = memory_costs(rows)
    summary["unknown_evidence"] = unknown
    summary["session_wall_s"] = time.perf_counter() - started
    return summary
