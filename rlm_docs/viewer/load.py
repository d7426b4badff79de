"""Read what the viewer shows: an eval run directory or a single trajectory JSONL file.

Both become one JSON-able dict (API keys masked, as in the logs themselves), `{"title", "source", "kind", "summary", "questions": [...]}`,
where each question carries its answer record (values, explanation, caveat; an old record is
read by `answer_record.stored_answer`), citations, correctness, effort and (when its log is
found) the trajectory records. Long strings are clipped so a model that printed a whole filing
cannot make the page unusably large.
"""

import json
import math
from pathlib import Path
from typing import Any

from rlm_docs.answer_record import stored_answer
from rlm_docs.engine.records import Trajectory
from rlm_docs.engine.trajectory import load_trajectory, redact
from rlm_docs.errors import DatasetError
from rlm_docs.eval.decomposition import FIELDS
from rlm_docs.eval.results_row import check_effort, read_row, verdict
from rlm_docs.eval.rundir import EvalRunDir
from rlm_docs.eval.step_limits import is_sweep, limit_dir, read_limits
from rlm_docs.governor import axes
from rlm_docs.jsonl import numbered_jsonl
from rlm_docs.viewer.tree import sub_call_tree

MAX_STRING = 40_000
# An eval run's results (`EvalRunDir.results_path`), else a plain predictions file beside its logs.
PREDICTIONS_FILE = "predictions.jsonl"
RUN_FIELDS = (
    "system",
    "model",
    "sub_model",
    "judge",
    "budget",
    "dataset",
    "corpus",
    "corpus_sha256",
    "started_at",
)
SCORE_FIELDS = ("anls", "stage", "judgment", "page_f1", "doc_f1", "error_type", "hop_type")


def clip(value: Any) -> Any:
    """A copy of `value` with strings longer than MAX_STRING cut (and the cut announced) and
    non-finite floats replaced by None (JSON has no NaN)."""
    if isinstance(value, str):
        if len(value) <= MAX_STRING:
            return value
        return value[:MAX_STRING] + f"\n… [{len(value) - MAX_STRING:,} more characters clipped]"
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): clip(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clip(v) for v in value]
    return value


def page_trajectory(traj: Trajectory) -> dict[str, Any]:
    """`{"metadata", "iterations", "result"}` of one run, as the page's script reads them (the
    records of `rlm_docs.engine.records`, in their JSON form)."""
    return {
        "metadata": traj.metadata.to_dict(),
        "iterations": [it.to_dict() for it in traj.iterations],
        "result": traj.result.to_dict() if traj.result is not None else None,
    }


def _verdict(record: dict[str, Any]) -> float | None:
    """The score eval's accuracy is the mean of (`score`: 0/1, or partial credit), if recorded."""
    value = record.get("score")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def question_entry(
    record: dict[str, Any], trajectory: dict[str, Any] | None, index: int, where: str
) -> dict[str, Any]:
    """One question as the page shows it, from a results/prediction record (read at
    `where`, a file:line for error messages)."""
    row = read_row(record, where)
    correct, score = verdict(row)
    values, explanation, caveat = stored_answer(record)
    return {
        "id": str(record.get("id") or record.get("question_id") or f"#{index + 1}"),
        "question": str(record.get("question") or ""),
        "answer": values,
        "explanation": explanation,
        "caveat": caveat,
        "gold": record.get("answer_variants") or record.get("gold"),
        "correct": correct,
        "score": score,
        "verdict": _verdict(record),
        "citations": [c for c in record.get("citations") or [] if isinstance(c, dict)],
        "evidence": record.get("evidence") or [],
        "effort": check_effort(row, where),
        "scores": {k: record[k] for k in SCORE_FIELDS if record.get(k) is not None},
        "ledger": record.get("ledger") if isinstance(record.get("ledger"), list) else None,
        "stop_reason": record.get("stop_reason"),
        "error": record.get("error"),
        "system": record.get("system"),
        "trajectory": trajectory,
        "trajectory_file": record.get("trajectory"),
        "trajectory_error": None,
        "decomposition": decomposition(record, trajectory),
        "tree": tree(trajectory),
    }


def decomposition(record: dict[str, Any], trajectory: dict[str, Any] | None) -> dict | None:
    """The question's decomposition record: the results record's flat fields, else the
    trajectory result's `decomposition`; None for runs made before it existed (shown n/a)."""
    if isinstance(record.get("strategies"), list):
        flat = {k: record.get(k) for k in FIELDS}
        by_depth = flat.get("sub_calls_by_depth")
        if isinstance(by_depth, str):
            try:
                flat["sub_calls_by_depth"] = json.loads(by_depth)
            except json.JSONDecodeError:
                flat["sub_calls_by_depth"] = None
        return flat
    found = ((trajectory or {}).get("result") or {}).get("decomposition")
    return found if isinstance(found, dict) else None


def tree(trajectory: dict[str, Any] | None) -> dict[str, Any] | None:
    """The sub-call tree (`viewer.tree`) of a trajectory in the page's form (`page_trajectory`);
    None when there is none."""
    if trajectory is None:
        return None
    result = [trajectory["result"]] if trajectory.get("result") else []
    return sub_call_tree(
        Trajectory.from_records([trajectory["metadata"], *trajectory["iterations"], *result])
    )


def from_trajectory_file(path: Path) -> list[dict[str, Any]]:
    """The single question of one trajectory log."""
    traj = load_trajectory(path)
    record = traj.result.to_dict() if traj.result is not None else {}
    record.setdefault("question", traj.metadata.question)
    record.setdefault("id", traj.metadata.question_id)
    entry = question_entry(record, page_trajectory(traj), 0, f"{path} (result record)")
    entry["trajectory_file"] = str(path)
    return [entry]


def _find_log(run: EvalRunDir, ref: str) -> Path | None:
    given = Path(ref)
    for candidate in (given, run.path / given, run.trajectories / given.name):
        if candidate.is_file():
            return candidate
    return None


def _results_file(run: EvalRunDir) -> Path | None:
    for path in (run.results_path, run.path / PREDICTIONS_FILE):
        if path.is_file():
            return path
    return None


def from_run_dir(run_dir: Path) -> list[dict[str, Any]]:
    """Questions of an eval run: its results JSONL joined with the trajectory logs it names
    (or, with no results file, the logs under `trajectories/` alone)."""
    run = EvalRunDir(run_dir)
    results = _results_file(run)
    if results is None:
        logs = sorted(run.trajectories.glob("*.jsonl"))
        if not logs:
            names = f"{run.results_path.name} or {PREDICTIONS_FILE}"
            raise DatasetError(
                f"{run_dir}: not an eval run directory (no {names} and no "
                f"{run.trajectories.name}/*.jsonl)"
            )
        return [q for log in logs for q in from_trajectory_file(log)]
    questions = []
    for i, (line, record) in enumerate(numbered_jsonl(results, torn_tail_ok=True)):
        ref = record.get("trajectory")
        log = _find_log(run, ref) if isinstance(ref, str) and ref else None
        traj, problem = None, None
        if log is not None:
            try:
                traj = page_trajectory(load_trajectory(log))
            except DatasetError as exc:
                problem = str(exc)
        elif ref:
            problem = f"trajectory log {ref} not found"
        entry = question_entry(record, traj, i, f"{results}:{line}")
        entry["trajectory_error"] = problem
        questions.append(entry)
    return questions


def run_totals(questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Run totals: count, accuracy over scored questions, effort sums. Accuracy is the mean of
    eval's `score`, as `eval` and `report` state it (a partial-credit score such as OOLONG's
    0.75^|error| counts as itself, not as right or wrong; runs without it: the share
    correct); `correct` counts the questions marked correct (score >= 0.5)."""
    judged = [q for q in questions if q["correct"] is not None]
    scored = [q["correct"] for q in judged]
    scores = [q["verdict"] if q.get("verdict") is not None else float(q["correct"]) for q in judged]

    def total(field: str) -> float:
        return sum(q["effort"].get(field) or 0 for q in questions)

    out: dict[str, Any] = {
        "questions": len(questions),
        "scored": len(scored),
        "correct": sum(scored),
        "accuracy": sum(scores) / len(scores) if scores else None,
        "partial_credit": any(0 < x < 1 for x in scores),
    }
    for a in axes.axes():  # every recorded effort axis but depth (a level, not a sum)
        if a.recorded and a.source != "depth":
            digits = {"usd": 6, "seconds": 3}.get(a.unit)
            out[a.name] = total(a.name) if digits is None else round(total(a.name), digits)
    return out


def run_settings(run_dir: Path) -> dict[str, Any]:
    """The settings recorded in the run's `run.json` (empty if absent or unreadable)."""
    try:
        manifest = json.loads(EvalRunDir(run_dir).manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(manifest, dict):
        return {}
    return {k: manifest[k] for k in RUN_FIELDS if manifest.get(k) is not None}


def load_source(source: str | Path) -> dict[str, Any]:
    """Viewer data for an eval run directory or a trajectory `.jsonl` file; for the directory
    of an `eval --max-steps 1,2,4` curve, its longest limit's run (the one `report` reads:
    the shorter limits are that run cut short)."""
    path = Path(source)
    run: dict[str, Any] = {}
    if path.is_dir() and is_sweep(path):
        path = limit_dir(path, read_limits(path)[0])
    if path.is_dir():
        kind, questions, run = "run", from_run_dir(path), run_settings(path)
    elif path.is_file() and path.suffix == ".jsonl":
        kind, questions = "trajectory", from_trajectory_file(path)
    elif path.exists():
        raise DatasetError(f"{path}: expected an eval run directory or a trajectory .jsonl file")
    else:
        raise DatasetError(f"{path}: no such run directory or trajectory file")
    return redact(
        clip(
            {
                "title": path.resolve().name,
                "source": str(path),
                "kind": kind,
                "run": run,
                "summary": run_totals(questions),
                "questions": questions,
            }
        )
    )
