"""The run directory: manifest, append-only results, and the files written at the end.

```
RUN_DIR/run.json                 settings + question list (refuses a resume with other settings)
RUN_DIR/results.jsonl            one complete JSON line per finished question (fsynced)
RUN_DIR/trajectories/*.jsonl     per-question trajectories
RUN_DIR/predictions.parquet      every question's record, in question order (at the end)
RUN_DIR/predictions.madqa.jsonl  MADQA `evaluate.py` input (at the end)
RUN_DIR/ledger.jsonl             every model call of the run (at the end)
RUN_DIR/failed_attempts.jsonl    rows replaced by `--retry-failed` (their calls stay in the ledger)
RUN_DIR/.writer.lock             held by the one process writing the run (`run_lock`)
```

A SIGKILL can leave a torn last line in `results.jsonl`; reading drops it (that question is
re-run) and `truncate_torn_tail` cuts it off before anything is appended again.
"""

import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import pyarrow as pa
import pyarrow.parquet as pq

from rlm_docs.atomic import atomic_write_bytes, atomic_write_text
from rlm_docs.errors import ConfigError, DatasetError
from rlm_docs.eval.results_row import ResultRow, missing_row, read_row
from rlm_docs.eval.run_lock import LOCK_NAME, RunLock
from rlm_docs.eval.scoring import SCORING_VERSION, rescore

FORMAT = "rlm-docs.eval-run"
# Settings that must match for a resume to be valid.
SETTINGS_KEYS = (
    "system",
    "model",
    "sub_model",
    "judge",
    "budget",
    "options",
    "dataset_sha256",
    "corpus",
    "limit",
    "where",
    "step_limit",
)
# The corpus store's content hash (`corpus.store.fingerprint`): a reader of the run (`view`)
# uses the store at `corpus` only when it still has this hash, and a resume only over it.
FINGERPRINT = "corpus_sha256"


class EvalRunDir:
    """Paths and I/O of one run directory."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.manifest_path = self.path / "run.json"
        self.results_path = self.path / "results.jsonl"
        self.trajectories = self.path / "trajectories"
        self.attempts_path = self.path / "failed_attempts.jsonl"

    def _foreign(self) -> bool:
        """A non-empty directory that holds no run: not ours to write into."""
        return (
            not self.manifest_path.exists()
            and self.path.is_dir()
            and any(p.name != LOCK_NAME for p in self.path.iterdir())
        )

    def lock(self) -> RunLock:
        """The run's writer lock, to take with `with` (see `run_lock`); a directory holding
        something else is refused before the lock file is put into it."""
        if self._foreign():
            raise ConfigError(f"{self.path}: directory is not empty and holds no run.json")
        return RunLock(self.path)

    def read_manifest(self) -> dict[str, Any]:
        """run.json; DatasetError if it is missing or not a run manifest."""
        try:
            data = json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DatasetError(f"{self.path}: not a run directory (no run.json)") from None
        except (OSError, json.JSONDecodeError) as exc:
            raise DatasetError(f"{self.manifest_path}: unreadable run manifest ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DatasetError(f"{self.manifest_path}: not an rlm-docs eval run manifest")
        return data

    def start(self, manifest: dict[str, Any], resume: bool) -> dict[str, Any]:
        """Create the run, or check `manifest` against the existing one when resuming.

        Returns the manifest in force (the original one, with its start time, on resume).
        """
        if self.manifest_path.exists():
            if not resume:
                raise ConfigError(
                    f"{self.path}: a run already exists here; pass --resume to continue it "
                    "or choose another --out"
                )
            old = self.read_manifest()
            keys = [*SETTINGS_KEYS, *([FINGERPRINT] if FINGERPRINT in old else [])]
            diffs = _differences(old, manifest, keys)
            if diffs:
                raise ConfigError(
                    f"{self.path}: cannot resume, settings differ from the original run ("
                    + "; ".join(diffs)
                    + ")"
                )
            if FINGERPRINT not in old and manifest.get(FINGERPRINT):  # a run made before it
                old[FINGERPRINT] = manifest[FINGERPRINT]
                atomic_write_text(self.manifest_path, json.dumps(old, indent=2) + "\n")
            return old
        if self._foreign():
            raise ConfigError(f"{self.path}: directory is not empty and holds no run.json")
        self.trajectories.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.manifest_path, json.dumps(manifest, indent=2) + "\n")
        return manifest

    def read_results(self) -> dict[str, ResultRow]:
        """Rows by question id; an incomplete or corrupt line is skipped (re-run on resume);
        DatasetError naming the line and field when a row's effort field is not a number
        (`results_row.read_row`: every report and summary sums them)."""
        records: dict[str, ResultRow] = {}
        if not self.results_path.exists():
            return records
        with open(self.results_path, "rb") as fh:
            for number, raw in enumerate(fh, 1):
                if not raw.endswith(b"\n"):
                    break  # torn tail of a killed run
                try:
                    record = json.loads(raw)
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                    continue
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    records.setdefault(
                        record["id"], read_row(record, f"{self.results_path}:{number}")
                    )
        return records

    def truncate_torn_tail(self) -> None:
        """Cut a trailing partial line so the next append starts on a fresh line."""
        if not self.results_path.exists():
            return
        data = self.results_path.read_bytes()
        if data and not data.endswith(b"\n"):
            with open(self.results_path, "r+b") as fh:
                fh.truncate(data.rfind(b"\n") + 1)
                fh.flush()
                os.fsync(fh.fileno())

    def append(self, record: Mapping[str, Any]) -> None:
        """Append one complete line and fsync it before returning."""
        with open(self.results_path, "ab") as fh:
            fh.write(_line(record).encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())

    def drop_failed(self, records: dict[str, ResultRow]) -> None:
        """Take the failed rows out of `records` and results.jsonl so they run again
        (`--retry-failed`). They are first added to failed_attempts.jsonl (their
        calls were made, perhaps paid, and stay in the ledger); then results.jsonl is replaced
        in one atomic rename, so it never holds two rows for a question and a crash between
        the steps only leaves those questions to be run."""
        failed = [r for r in records.values() if r.get("status") == "failed"]
        if not failed:
            return
        kept = [r for r in self.read_attempts() if r not in failed]
        atomic_write_text(self.attempts_path, "".join(_line(r) for r in [*kept, *failed]))
        for record in failed:
            del records[record["id"]]
        atomic_write_text(self.results_path, "".join(_line(r) for r in records.values()))

    def read_attempts(self) -> list[dict[str, Any]]:
        """The rows `drop_failed` replaced, oldest first."""
        if not self.attempts_path.exists():
            return []
        lines = self.attempts_path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def adopt_trajectory(self, record: ResultRow) -> ResultRow:
        """`record` with a trajectory shipped back by a remote worker (`trajectory_jsonl`)
        written here under its own file name, and `trajectory` pointing to it; records whose
        trajectory is already in this directory come back unchanged."""
        text, shipped = record.get("trajectory_jsonl"), record.get("trajectory")
        if text is None or shipped is None:  # a worker ships both or neither
            return record
        path = self.trajectories / Path(shipped).name
        atomic_write_text(path, text)
        adopted = record.copy()
        del adopted["trajectory_jsonl"]
        adopted["trajectory"] = str(path)
        return adopted

    def remove_unrecorded_trajectories(self, records: Mapping[str, ResultRow]) -> None:
        """Delete trajectory files no recorded question points to (questions cut short by an
        interrupt or a kill): on resume those questions run again and write fresh ones."""
        if not self.trajectories.is_dir():
            return
        rows: list[Mapping[str, Any]] = [*records.values(), *self.read_attempts()]
        kept = {Path(r["trajectory"]).name for r in rows if r.get("trajectory")}
        for path in self.trajectories.glob("*.jsonl"):
            if path.name not in kept:
                path.unlink(missing_ok=True)

    def write_outputs(self, rows: list[ResultRow], ledger: list[dict[str, Any]]) -> None:
        """predictions.parquet, predictions.madqa.jsonl and ledger.jsonl, each atomically."""
        madqa = []
        for row in rows:
            if row.get("status") == "missing":
                continue
            madqa.append(
                {
                    "id": row["id"],
                    "question": row["question"],
                    "answer": row.get("answer") or [],
                    "citations": row.get("citations") or [],
                    "iterations": row.get("steps", 0),
                }
            )
        atomic_write_text(
            self.path / "predictions.madqa.jsonl",
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in madqa),
        )
        atomic_write_text(
            self.path / "ledger.jsonl",
            "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in ledger),
        )
        buffer = io.BytesIO()
        pq.write_table(_table(rows), buffer)
        atomic_write_bytes(self.path / "predictions.parquet", buffer.getvalue())


def _line(record: Mapping[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, default=str) + "\n"


_NESTED = ("citations", "ledger", "judge", "info", "fields", "budget", "anytime")


def _differences(old: dict[str, Any], new: dict[str, Any], keys: Iterable[str]) -> list[str]:
    """`key: old != new` for each of `keys` that differs; for settings that are dicts (the
    budget, the options) only the fields inside that differ (`max_steps: 20 != 3`), not both
    whole dicts."""
    diffs = []
    for key in keys:
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            diffs.extend(_differences(a, b, dict.fromkeys([*a, *b])))
        else:
            diffs.append(f"{key}: {a!r} != {b!r}")
    return diffs


def _table(rows: Sequence[Mapping[str, Any]]) -> pa.Table:
    """Flat Parquet table: lists of strings kept, nested structures as JSON text."""
    flat = []
    for row in rows:
        out = {k: v for k, v in row.items() if k not in _NESTED}
        out["answer"] = [str(a) for a in row.get("answer") or []]
        for key in _NESTED:
            if key in row:
                out[key] = json.dumps(row[key], ensure_ascii=False, default=str)
        flat.append(out)
    keys = sorted({k for r in flat for k in r})
    return pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in flat])


def run_rows(manifest: dict[str, Any], records: Mapping[str, ResultRow]) -> list[ResultRow]:
    """One row per question of the run, in question order; absent ones are `missing_row`s.
    A run scored by an older scoring is scored again (`scoring.rescore`), so eval's summary,
    `report` and `load_run` (notebooks) show current figures."""
    rows = [records.get(meta["id"]) or missing_row(meta) for meta in manifest["questions"]]
    if manifest.get("scoring_version", 1) < SCORING_VERSION:
        rows = [cast(ResultRow, rescore(row)) for row in rows]
    return rows


def load_run(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[ResultRow]]:
    """(manifest, rows) of a run directory, for reports and notebooks."""
    run = EvalRunDir(path)
    manifest = run.read_manifest()
    return manifest, run_rows(manifest, run.read_results())
