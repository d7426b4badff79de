"""Per-question trajectory log (JSONL), close to the rlms logger so its visualizer can open it.

The records are the types of `rlm_docs.engine.records` (each field documented there): the engine
and the baseline systems build them through `TrajectoryWriter`, and every reader (viewer,
notebook, CLI, decomposition) goes through `load_trajectory` / `Trajectory.from_records`.

Format `rlm-docs.trajectory` version 2. Line 1 is the metadata record, then one record per
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
4. `result` adds `restarted` (the worker was killed and restarted, e.g. a timeout), `batches`
   (`[number, size]` of the block's `llm_query_batched` calls, the numbers of the calls'
   `batch`), `read` and `seen` (`[doc, page]` pairs the cell read with
   page/pages/lines/read_section, and those named by its search/grep/locate results, each pair
   once per worker); these three are `CellResult` fields, absent from records of systems that
   run no model code. The result record of an eval run adds `decomposition`
   (`rlm_docs.eval.decomposition`; in `Result.extra`).
5. Iterations add `notice` (the governor's soft-limit text fed to the next turn), `usage`
   (tokens and cost of the root call, and `cached_tokens` when the provider served part of the
   prompt from its cache) and `forced` (the forced final turn).
6. The extra `result` record at the end; rlms readers skip unknown record types.

Version 2 (this writer) adds to version 1, which still loads:
- each `rlm_calls` entry: `depth` (of the run whose code made the call) and `batch` (the number
  of the `llm_query_batched` call it was part of, or null);
- the `result` record: `stop_axis`, the limit that ended the run (null if none did);
- every record carries every non-optional field of its type (a baseline's metadata gains
  `depth`, a map-reduce cell `execution_time`/`rlm_calls_omitted`/`restarted`), and a child
  run's result leaves out a null `error`.

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
from rlm_docs.engine.records import Iteration, Metadata, Result, Trajectory
from rlm_docs.engine.rlms_log import from_rlms_records, is_rlms_log
from rlm_docs.errors import DatasetError
from rlm_docs.jsonl import read_jsonl
from rlm_docs.models.factory import secret_env

_KEY_PATTERN = re.compile(r"\b(sk-[A-Za-z0-9_\-]{16,})")


def _now() -> str:
    return datetime.now(UTC).isoformat()


def redact(value: Any) -> Any:
    """A copy of `value` with API keys masked: the values of every declared key variable
    (`models.factory.secret_env`), and any `sk-...` token (a key typed into a prompt)."""
    secrets = [os.environ[k] for k in secret_env() if len(os.environ.get(k, "")) >= 8]
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


class TrajectoryWriter:
    """Builds the typed records of one run (root or child) as it goes; written once it ends."""

    def __init__(self, metadata: Metadata) -> None:
        metadata.timestamp = metadata.timestamp or _now()
        self.trajectory = Trajectory(metadata)
        self._started: dict[int, float] = {}  # id(iteration) -> perf_counter at its start

    def iteration(self, prompt: list[dict[str, Any]]) -> Iteration:
        """Start the next iteration record (filled in by the loop as the turn proceeds)."""
        it = Iteration(
            iteration=len(self.trajectory.iterations) + 1, timestamp=_now(), prompt=prompt
        )
        self.trajectory.iterations.append(it)
        self._started[id(it)] = time.perf_counter()
        return it

    def close(self, it: Iteration) -> None:
        """Stamp an iteration's duration."""
        it.iteration_time = round(time.perf_counter() - self._started.pop(id(it)), 4)

    def result(self, result: Result) -> None:
        """The final record (stamped with the time the run ended)."""
        result.timestamp = _now()
        self.trajectory.result = result

    def lines(self) -> list[dict[str, Any]]:
        """All records, redacted and JSON-able."""
        records: list[dict[str, Any]] = redact(self.trajectory.to_records())
        return records

    def write(self, path: str | os.PathLike[str]) -> Path:
        """Write the JSONL file atomically (never a half-written log)."""
        return write_records(path, self.lines())


def write_records(path: str | os.PathLike[str], records: list[dict[str, Any]]) -> Path:
    """Write trajectory `records` as a JSONL file, atomically (also to add to a finished log,
    e.g. its decomposition record)."""
    text = "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in records)
    atomic_write_text(path, text)
    return Path(path)


MAX_CHILD_DEPTH = 32  # nested child runs a trajectory may hold (readers recurse through them)


def load_trajectory(path: str | os.PathLike[str]) -> Trajectory:
    """The one reader of trajectory files (version 1 or 2, or an rlms log: see
    `rlm_docs.engine.rlms_log`) as typed records; DatasetError naming the file (and line) when
    it is not a readable trajectory (a crafted one nesting child runs hundreds deep included)."""
    records = read_jsonl(Path(path))
    try:
        if is_rlms_log(records):
            traj = from_rlms_records(records)
        else:
            traj = Trajectory.from_records(records)
    except DatasetError as exc:
        raise DatasetError(f"{path}: {exc}") from None
    except RecursionError:  # child runs nested past what a real run's max_depth allows
        raise DatasetError(f"{path}: child runs are nested too deeply to read") from None
    depth = _child_depth(traj)
    if depth > MAX_CHILD_DEPTH:
        raise DatasetError(
            f"{path}: child runs are nested {depth} deep, more than the {MAX_CHILD_DEPTH} "
            "a trajectory may hold"
        )
    return traj


def _child_depth(traj: Trajectory) -> int:
    """How deep `traj`'s child runs nest (0: none), without recursion."""
    deepest, stack = 0, [(traj, 0)]
    while stack:
        run, depth = stack.pop()
        deepest = max(deepest, depth)
        stack += [(c.child, depth + 1) for c in run.own_sub_calls() if c.child is not None]
    return deepest


KEEP_TRAJECTORIES = 100


def prune_trajectories(log_dir: str | os.PathLike[str], keep: int = KEEP_TRAJECTORIES) -> None:
    """Delete all but the newest `keep` trajectory files (`rlm_*.jsonl`) of `log_dir`: the
    default log directory of `ask` gains a file per question and would otherwise grow forever
    (a `--log-dir` the user names is theirs, and not pruned)."""
    files = []
    for path in Path(log_dir).glob("rlm_*.jsonl"):
        try:
            files.append((path.stat().st_mtime_ns, path))
        except OSError:
            continue  # removed meanwhile (another process pruning)
    for _, old in sorted(files, reverse=True)[keep:]:
        old.unlink(missing_ok=True)


def trajectory_file(log_dir: str | os.PathLike[str], question_id: str | None) -> Path:
    """A fresh file name in `log_dir`: `rlm_<id-or-time>_<pid-ns>.jsonl` (rlms-like)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", question_id or datetime.now(UTC).strftime("%Y%m%d"))
    return Path(log_dir) / f"rlm_{stem}_{os.getpid()}_{time.time_ns() % 10**9}.jsonl"
