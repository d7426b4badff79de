"""Which sub-call mattered: re-run one question of an `rlm` eval run with one sub-call's reply
replaced, and see whether the answer and its score change.

Why: a run's answer rests on some of its sub-calls and not others, and reading a trajectory
does not say which. The re-run builds the run's system from its manifest (same models, budget,
prompt, options) over the response cache, so recorded replies replay at no cost and new model
calls are made only where the re-run diverges from the recording. The sub-call under test is
named by its number among the recorded `llm_query` calls of the whole run tree (1-based, depth
first: a child RLM's calls are numbered right after the `rlm_query` that ran it, before its
parent's later calls), so the numbers depend only on the trajectory file and a child's calls
can be picked like the root's; every sub-call with exactly its prompt, at any depth, gets the
replacement (`empty`, `text:STR`, or `model:SPEC`, another model's reply), without a model
call. `attribute_run` does this for every sub-call of every question: which ones mattered.
"""

import hashlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rlm_docs.corpus import Corpus
from rlm_docs.engine.records import SubCall
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.errors import ConfigError
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import load_run
from rlm_docs.eval.scoring import rescore
from rlm_docs.governor import Budget, Ledger
from rlm_docs.models import make_client
from rlm_docs.models.cache import ResponseCache
from rlm_docs.systems.base import SystemConfig, make_system

PROMPT_SHOWN = 80


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def recorded_sub_calls(trajectory_path: str | os.PathLike[str]) -> list[SubCall]:
    """The run's answered `llm_query` sub-calls, its child RLMs' included, depth first in
    recording order (the numbers `--sub-call` takes)."""
    trajectory = load_trajectory(trajectory_path)
    return [
        call
        for _turn, call in trajectory.walk_sub_calls()
        if call.kind == "llm_query" and call.response is not None
    ]


def replacement(spec: str) -> Callable[[str], str]:
    """The reply function `--replace` names: `empty`, `text:STR` or `model:SPEC`."""
    if spec == "empty":
        return lambda _prompt: ""
    if spec.startswith("text:"):
        text = spec[len("text:") :]
        return lambda _prompt: text
    if spec.startswith("model:"):
        client = make_client(spec[len("model:") :])
        return lambda prompt: client.complete([{"role": "user", "content": prompt}]).text
    raise ConfigError(f"--replace {spec!r}: expected empty, text:STR or model:SPEC")


def attribute(
    run_dir: str | os.PathLike[str],
    question_id: str,
    numbers: list[int] | None,
    replace: str,
    cache: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per sub-call tried (`numbers`; None: all): whether the answer and the score
    changed with its reply replaced, and what the re-run cost. `cache`: the response-cache file
    the run used, if not the default one."""
    manifest, rows = _rlm_run(run_dir)
    row = next((r for r in rows if r.get("id") == question_id), None)
    if row is None or not row.get("trajectory"):
        raise ConfigError(f"{run_dir}: no recorded question {question_id!r}")
    return _attribute_row(manifest, row, numbers, replacement(replace), cache)


def attribute_run(
    run_dir: str | os.PathLike[str],
    replace: str,
    cache: str | os.PathLike[str] | None = None,
) -> list[dict[str, Any]]:
    """`attribute` for every sub-call of every recorded question of the run, in the run's
    question order: the run-wide table of which sub-calls mattered."""
    manifest, rows = _rlm_run(run_dir)
    reply = replacement(replace)
    return [
        found
        for row in rows
        if row.get("trajectory")
        for found in _attribute_row(manifest, row, None, reply, cache)
    ]


def mattered(rows: list[dict[str, Any]]) -> str:
    """The table's closing sentence: how many sub-calls changed the answer and the score."""
    answers = sum(1 for r in rows if r["answer_changed"])
    scores = sum(1 for r in rows if r["score_changed"])
    cost = sum(r["cost_usd"] for r in rows)
    return (
        f"{answers} of {len(rows)} sub-calls changed the answer when replaced, {scores} the "
        f"score; the re-runs cost ${cost:.4f}"
    )


def _rlm_run(run_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], list[ResultRow]]:
    manifest, rows = load_run(run_dir)
    if manifest.get("system") != "rlm":
        raise ConfigError(f"{run_dir}: attribution re-runs `rlm` runs, not {manifest['system']}")
    return manifest, rows


def _attribute_row(
    manifest: dict[str, Any],
    row: Mapping[str, Any],
    numbers: list[int] | None,
    reply: Callable[[str], str],
    cache: str | os.PathLike[str] | None,
) -> list[dict[str, Any]]:
    """The rows of one question (see `attribute`)."""
    question_id = row["id"]
    calls = recorded_sub_calls(Path(row["trajectory"]))
    chosen = list(range(1, len(calls) + 1)) if numbers is None else numbers
    for n in chosen:
        if not 1 <= n <= len(calls):
            raise ConfigError(
                f"--sub-call {n}: question {question_id} has sub-calls 1..{len(calls)}"
            )
    corpus = Corpus.load(manifest["corpus"])
    out = []
    for n in chosen:
        call = calls[n - 1]
        target = call.prompt_sha256 or _sha(call.prompt)
        ledger = Ledger()
        system = make_system(
            "rlm",
            SystemConfig(
                corpus=corpus,
                model=manifest["model"],
                sub_model=manifest.get("sub_model"),
                budget=Budget(**manifest["budget"]),
                ledger=ledger,
                options=manifest.get("options") or {},
                cache=ResponseCache(cache) if cache else True,
            ),
        )

        def override(prompt: str, target: str = target) -> str | None:
            return reply(prompt) if _sha(prompt) == target else None

        system.rlm.settings.override = override  # type: ignore[attr-defined]
        pred = system.rlm.ask(row["question"], question_id=question_id)  # type: ignore[attr-defined]
        record = pred.to_madqa()
        fields = ("answer", "explanation", "caveat", "citations", "stop_reason", "error")
        new = rescore({**row, **{k: record.get(k) for k in fields}})
        entries = ledger.entries
        out.append(
            {
                "question": question_id,
                "sub_call": n,
                "depth": call.depth or 0,
                "prompt": call.prompt[:PROMPT_SHOWN],
                "answer": pred.answer,
                "answer_changed": pred.answer != row.get("answer"),
                "score_was": row.get("score"),
                "score": new.get("score"),
                "score_changed": new.get("score") != row.get("score"),
                "new_calls": sum(1 for e in entries if not e.cached),
                "replayed_calls": sum(1 for e in entries if e.cached),
                "cost_usd": pred.cost_usd,
            }
        )
    return out
