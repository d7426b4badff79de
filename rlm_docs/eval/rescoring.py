"""`rescore_run`: score an existing run again with the current scorer and, optionally, a judge,
without calling the answering model.

Every recorded question is scored again from what `results.jsonl` stores (its answer record,
gold and evidence; an old record is read by `answer_record.stored_answer`). With a judge, the
questions the stages leave to it (prose golds among them) get one judge call each, recorded in
the question's `ledger` under role `judge` (judge spend: `judge_cost_usd`, `judge_calls`, and
`ledger.jsonl`); without one, a verdict stored by an earlier judge stands.

A rescore is a writer of the run: it holds the run's writer lock (`run_lock`) for its whole
life, so it never rewrites a run an `eval` is still appending to (nor another rescore).

Resumable and atomic: each rescored record is appended (fsynced) to `RUN_DIR/rescore.jsonl`,
whose first line names the settings; a killed rescore run again with the same settings takes
the records found there and scores only the rest (progress of other settings is discarded).
Only when every record is rescored are `results.jsonl`, then `run.json` (scoring version,
judge), then the files of the run's end (`predictions.parquet`, `predictions.madqa.jsonl`,
`ledger.jsonl`) replaced, each atomically, and the progress file removed; until then the run
reads as it did before.
"""

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from rlm_docs.atomic import atomic_write_text
from rlm_docs.errors import ConfigError
from rlm_docs.eval.aggregate import summarize
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import EvalRunDir, run_rows
from rlm_docs.eval.scoring import SCORING_VERSION, JudgeFn, rescore
from rlm_docs.governor import Ledger
from rlm_docs.models.prices import sum_usd

PROGRESS_FILE = "rescore.jsonl"


def rescore_record(record: Mapping[str, Any], judge: JudgeFn | None, ledger: Ledger) -> ResultRow:
    """`record` scored again (`scoring.rescore`), the judge's calls from `ledger` added to its
    own ledger and judge spend."""
    row = rescore(record, judge)
    calls = [e.to_dict() for e in ledger.entries]
    if calls:
        row["ledger"] = list(row.get("ledger") or []) + calls
        judged = [c for c in row["ledger"] if c.get("role") == "judge"]
        row["judge_calls"] = len(judged)
        row["judge_cost_usd"] = sum_usd([c.get("cost_usd") for c in judged])
    return cast(ResultRow, row)


def _progress(path: Path, settings: dict[str, Any]) -> dict[str, ResultRow]:
    """Records a killed rescore with the same settings finished; starts the file afresh when
    there is none or it was made with other settings."""
    done: dict[str, ResultRow] = {}
    if path.exists():
        with open(path, "rb") as fh:
            lines = [line for line in fh if line.endswith(b"\n")]  # a torn tail is re-run
        try:
            header = json.loads(lines[0]) if lines else None
        except json.JSONDecodeError:
            header = None
        if isinstance(header, dict) and header.get("rescore") == settings:
            for line in lines[1:]:
                try:
                    record = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError):
                    continue
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    done[record["id"]] = cast(ResultRow, record)  # a row this rescore wrote
            atomic_write_text(path, b"".join(lines).decode("utf-8"))  # drop a torn tail
            return done
    atomic_write_text(path, json.dumps({"rescore": settings}) + "\n")
    return done


def _append(path: Path, record: Mapping[str, Any]) -> None:
    with open(path, "ab") as fh:
        fh.write((json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())


def rescore_run(
    path: str | os.PathLike[str],
    judge: str | None = None,
    *,
    sensitivity: float | None = None,
    specificity: float | None = None,
    on_record: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Score the run at `path` again (see module docstring); returns its new summary.
    `judge`: a judge model string; `sensitivity` / `specificity` for its Rogan-Gladen
    correction (default: the run's, else MADQA's); `on_record(done, total)` after each."""
    from rlm_docs.models import make_client, parse_spec

    if judge and parse_spec(judge).backend == "offline":
        raise ConfigError("--judge offline: the offline model cannot judge answers")
    run = EvalRunDir(path)
    run.read_manifest()  # not a run: one clear line before anything is written
    client = make_client(judge) if judge else None
    with run.lock():
        return _rescore(run, client, judge, sensitivity, specificity, on_record)


def _rescore(
    run: EvalRunDir,
    client: Any,
    judge: str | None,
    sensitivity: float | None,
    specificity: float | None,
    on_record: Callable[[int, int], None] | None,
) -> dict[str, Any]:
    """The rescore itself, under the run's writer lock."""
    from rlm_docs.eval.question_task import judge_with

    manifest = run.read_manifest()
    records = run.read_results()
    settings = {"judge": judge, "scoring_version": SCORING_VERSION}
    progress_path = run.path / PROGRESS_FILE
    done = _progress(progress_path, settings)
    for i, (qid, record) in enumerate(records.items(), 1):
        if qid not in done:
            ledger = Ledger()
            judge_fn = judge_with(client, ledger) if client is not None else None
            done[qid] = rescore_record(record, judge_fn, ledger)
            _append(progress_path, done[qid])
        if on_record is not None:
            on_record(i, len(records))
    new = {qid: done[qid] for qid in records}
    atomic_write_text(
        run.results_path,
        "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in new.values()),
    )
    manifest["scoring_version"] = SCORING_VERSION
    if judge:
        manifest["judge"] = judge
    for key, value in (("judge_sensitivity", sensitivity), ("judge_specificity", specificity)):
        if value is not None:
            manifest[key] = value
    atomic_write_text(run.manifest_path, json.dumps(manifest, indent=2) + "\n")
    rows = run_rows(manifest, new)
    run.write_outputs(rows, [entry for row in rows for entry in row.get("ledger") or []])
    progress_path.unlink()
    return summarize(
        rows,
        judged=bool(manifest.get("judge")),
        sensitivity=manifest.get("judge_sensitivity", 0.98),
        specificity=manifest.get("judge_specificity", 1.0),
    )
