"""Per-question trajectory log (JSONL), close to the rlms logger so its visualizer can open it.

Format `rlm-docs.trajectory` version 1. Line 1 is the metadata record, then one record per
root iteration, then one result record:

- `{"type": "metadata", ...}`: rlms' `RLMMetadata` keys (`root_model`, `max_depth`,
  `max_iterations`, `backend`, `backend_kwargs`, `environment_type`, `environment_kwargs`,
  `other_backends`) plus `format`, `version`, `question`, `question_id`, `prompt_name`, `budget`,
  `depth` and `sub_model`.
- `{"type": "iteration", "iteration": n, ...}`: rlms' `RLMIteration` keys (`prompt`,
  `response`, `code_blocks` as `[{code, result: {stdout, stderr, locals, execution_time,
  rlm_calls}}]`, `final_answer`, `iteration_time`).
- `{"type": "result", ...}`: the prediction record (`Prediction.to_madqa()`).

Differences from rlms, all additive except the first two:
1. `prompt` holds only the messages added since the previous iteration (rlms repeats the
   whole history on every line, which makes logs quadratic in the number of turns).
2. `locals` is always `{}`: worker variables are not copied to the host; the variable listing
   (`SHOW_VARS`) is in `result.variables` instead.
3. Each `rlm_calls` entry adds `kind` (`llm_query` | `rlm_query` | `extract`), `cost_usd`,
   `ledger` (the governor's ledger entry for the call) and, for `rlm_query`, `children`: the
   child run's own records (metadata, iterations, result), nested rather than a separate file.
   A prompt over 20,000 characters is kept as its head plus `prompt_chars` and
   `prompt_sha256`; past 1,000 calls in one block, calls are only counted
   (`result.rlm_calls_omitted`).
4. `result` adds `restarted` (the worker was killed and restarted, e.g. a timeout).
5. Iterations add `notice` (the governor's soft-limit text fed to the next turn), `usage`
   (tokens and cost of the root call) and `forced` (the forced final turn).
6. The extra `result` record at the end; rlms readers skip unknown record types.

Secrets: every string is passed through `redact()`, which replaces the values of the API-key
environment variables, so a key echoed by a model or an error message never reaches disk.
"""

import json
import os
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.engine.records import Trajectory as TrajectoryLog
from rlm_docs.errors import DatasetError
from rlm_docs.jsonl import read_jsonl

FORMAT = "rlm-docs.trajectory"
VERSION = 1
_SECRET_VARS = ("OPENAI_API_KEY", "MISTRAL_API_KEY")
_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,})")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def redact(value: Any) -> Any:
    """A copy of `value` with API keys (known env values and `sk-...` tokens) masked."""
    secrets = [os.environ[k] for k in _SECRET_VARS if len(os.environ.get(k, "")) >= 8]
    return _redact(value, secrets)


def _redact(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, "[REDACTED]")
        return _KEY_PATTERN.sub("[REDACTED]", value)
    if isinstance(value, dict):
        return {k: _redact(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v, secrets) for v in value]
    return value


class Trajectory:
    """Records of one RLM run (root or child), written as JSONL once the run ends."""

    def __init__(self, **metadata: Any) -> None:
        self.records: list[dict[str, Any]] = [
            {"type": "metadata", "format": FORMAT, "version": VERSION, "timestamp": _now()}
            | metadata
        ]

    def iteration(self, prompt: list[dict[str, Any]]) -> dict[str, Any]:
        """Start the next iteration record (filled in by the loop as the turn proceeds)."""
        record: dict[str, Any] = {
            "type": "iteration",
            "iteration": sum(r["type"] == "iteration" for r in self.records) + 1,
            "timestamp": _now(),
            "prompt": prompt,
            "response": "",
            "code_blocks": [],
            "final_answer": None,
            "iteration_time": None,
            "notice": None,
            "usage": None,
            "forced": False,
            "_t0": time.perf_counter(),
        }
        self.records.append(record)
        return record

    @staticmethod
    def close(record: dict[str, Any]) -> None:
        """Stamp an iteration's duration."""
        record["iteration_time"] = round(time.perf_counter() - record.pop("_t0"), 4)

    def result(self, prediction: dict[str, Any]) -> None:
        self.records.append({"type": "result", "timestamp": _now()} | prediction)

    def lines(self) -> list[dict[str, Any]]:
        """All records, redacted and JSON-able."""
        clean = [{k: v for k, v in r.items() if not k.startswith("_")} for r in self.records]
        return redact(clean)

    def write(self, path: str | os.PathLike) -> Path:
        """Write the JSONL file atomically (never a half-written log)."""
        text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in self.lines())
        atomic_write_text(path, text)
        return Path(path)


def read_trajectory(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Records of a trajectory file (for the viewer, notebooks and tests)."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_trajectory(path: str | os.PathLike) -> TrajectoryLog:
    """The one reader of trajectory files (version 1 or 2) as typed records; DatasetError
    naming the file (and line) when it is not a readable trajectory."""
    records = read_jsonl(Path(path))
    try:
        return TrajectoryLog.from_records(records)
    except DatasetError as exc:
        raise DatasetError(f"{path}: {exc}") from None


def trajectory_file(log_dir: str | os.PathLike, question_id: str | None) -> Path:
    """A fresh file name in `log_dir`: `rlm_<id-or-time>_<pid-ns>.jsonl` (rlms-like)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", question_id or datetime.now(UTC).strftime("%Y%m%d"))
    return Path(log_dir) / f"rlm_{stem}_{os.getpid()}_{time.time_ns() % 10**9}.jsonl"
