"""The per-question work of an eval run, as a picklable object every executor can run.

`QuestionTask` holds only the run's settings (corpus path, system, models, budget, options,
judge); the system, judge client and ledger are built on first use in whichever process runs
the task. A thread pool shares one built task; a Ray actor unpickles a fresh copy and builds it
once, so each node loads the corpus and its sandbox fork server once and reuses them across
questions.

With `trajectories=None` (remote executors) a question's trajectory is written to a private
scratch directory, read back into the record (`trajectory_jsonl`) and deleted: the driver,
which alone writes the run directory, stores it (`EvalRunDir.adopt_trajectory`). No worker ever
writes into the run directory, so a result the driver never records leaves no file behind. The
scratch directory exists only while questions are in flight: a Ray actor is killed without
running exit handlers, so a directory kept for the process's life would be left in the temp
directory of every node.
"""

import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlm_docs.corpus import Corpus
from rlm_docs.engine.prediction import Prediction
from rlm_docs.errors import ConfigError
from rlm_docs.eval.decomposition import flat_columns
from rlm_docs.eval.decomposition_file import record_decomposition
from rlm_docs.eval.judge import Verdict, run_judge
from rlm_docs.eval.results_row import ResultRow, result_row
from rlm_docs.eval.scoring import JudgeFn, score_prediction
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.models import make_client
from rlm_docs.models.cache import ResponseCache
from rlm_docs.private_dir import NotPrivate, private_dir
from rlm_docs.questions import Question
from rlm_docs.systems import SystemConfig, make_system


class Cancelled(Exception):
    """A question that finished after its run was interrupted (never recorded)."""


@dataclass
class QuestionTask:
    """`task(question) -> record`: answer, judge, score, decompose (`eval.decomposition`,
    stored in the trajectory and as flat fields of the record); never raises for a failed
    answer."""

    corpus: str
    system: str
    model: str
    sub_model: str | None = None
    judge: str | None = None
    budget: Budget = field(default_factory=Budget)
    options: dict[str, Any] = field(default_factory=dict)
    trajectories: str | None = None
    cache: str | None = None  # a response-cache file for every client (`EvalSettings.cache`)
    _built: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )
    cancelled: threading.Event = field(
        default_factory=threading.Event, init=False, repr=False, compare=False
    )
    _in_flight: int = field(default=0, init=False, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        """Settings only: what was built here (corpus, sandbox fork server, clients) stays here."""
        state = dict(self.__dict__)
        for key in ("_built", "_lock", "cancelled", "_in_flight"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._built = None
        self._lock = threading.Lock()
        self.cancelled = threading.Event()
        self._in_flight = 0

    def copy(self, **changes: Any) -> "QuestionTask":
        """This task with `changes` (e.g. a shipped store's `corpus` path), not yet built."""
        state = self.__getstate__() | changes
        task = QuestionTask.__new__(QuestionTask)
        task.__setstate__(state)
        return task

    def build(self, corpus: Corpus | None = None) -> dict[str, Any]:
        """System, judge client and ledger, built once per process over `corpus` (default:
        loaded from the task's path). Raises ConfigError for a bad model string or a missing
        key, so the driver calls it before the run starts."""
        with self._lock:
            if self._built is None:
                log_dir = self.trajectories or tempfile.mkdtemp(prefix="rlm-eval-traj-")
                ledger = Ledger()
                config = SystemConfig(
                    corpus=corpus or Corpus.load(self.corpus),
                    model=self.model,
                    sub_model=self.sub_model,
                    budget=self.budget,
                    log_dir=log_dir,
                    ledger=ledger,
                    options=self.options,
                    cache=ResponseCache(self.cache) if self.cache else True,
                )
                self._built = {
                    "corpus": config.corpus,
                    "system": make_system(self.system, config),
                    "judge": make_client(self.judge) if self.judge else None,
                    "ledger": ledger,
                    "log_dir": log_dir,
                }
                if self.trajectories is None:
                    Path(log_dir).rmdir()  # made again while questions are in flight
            return self._built

    def __call__(self, q: Question) -> ResultRow:
        """The question's record, as `results.jsonl` stores it.

        A question that ends after the run was interrupted (`cancelled`) deletes its trajectory
        and raises `Cancelled`: its result will never be recorded, so no file may claim
        otherwise.
        """
        built = self.build()
        if self.trajectories is not None:
            return self._answer(q, built)
        scratch = built["log_dir"]
        with self._lock:
            if self._in_flight == 0:
                try:
                    private_dir(scratch)  # re-made: another user may have taken the name since
                except NotPrivate as exc:
                    raise ConfigError(f"trajectory scratch directory {exc}") from None
            self._in_flight += 1
        try:
            return self._answer(q, built)
        finally:
            with self._lock:
                self._in_flight -= 1
                if self._in_flight == 0:
                    shutil.rmtree(scratch, ignore_errors=True)

    def _answer(self, q: Question, built: dict[str, Any]) -> ResultRow:
        system, judge_client, ledger = built["system"], built["judge"], built["ledger"]
        governor = Governor(self.budget, ledger=ledger, question_id=q.id)
        try:
            prediction = system.answer(q, governor)
        except Exception as exc:  # noqa: BLE001 - a failed question is a wrong answer
            prediction = Prediction(
                question=q.question,
                question_id=q.id,
                stop_reason="error",
                error=f"{type(exc).__name__}: {exc}",
            )
        if self.cancelled.is_set():
            if prediction.trajectory:
                Path(prediction.trajectory).unlink(missing_ok=True)
            raise Cancelled(q.id)
        judge = judge_with(judge_client, ledger) if judge_client is not None else None
        record = prediction.to_madqa() | {"id": q.id, "question": q.question}
        scores = score_prediction(q, record, judge)
        for checkpoint in record.get("anytime", []):  # the answer at each budget share
            scored = score_prediction(q, checkpoint, judge)
            checkpoint |= {"score": scored["score"], "correct": scored["correct"]}
        calls = [e.to_dict() for e in ledger.entries if e.question_id == q.id]
        decomposition = record_decomposition(prediction.trajectory, calls, built["corpus"])
        row = result_row(
            record,
            q,
            scores=scores,
            decomposition=flat_columns(decomposition),
            system=system.name,
            calls=calls,
        )
        if self.trajectories is None and prediction.trajectory:
            path = Path(prediction.trajectory)
            row["trajectory_jsonl"] = path.read_text(encoding="utf-8")
            path.unlink()
        return row


def judge_with(client: Any, ledger: Ledger) -> JudgeFn:
    """The judge function of `scoring`: one MADQA judge call per answer, through a governor
    with no step limit, recorded in `ledger` under role `judge` (judge spend, apart from the
    answering model's)."""

    def judge(question: Question, values: list[str], explanation: str) -> Verdict:
        free = Budget(max_steps=None, max_sub_calls=None)
        gov = Governor(free, ledger=ledger, question_id=question.id)
        return run_judge(
            client, gov, question.question, values, question.answer_variants, explanation
        )

    return judge
