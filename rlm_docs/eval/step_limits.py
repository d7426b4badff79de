"""The exact accuracy-vs-step-limit curve: `rlm-docs eval ... --max-steps 1,2,4,8,16`.

The report's curve from one run is a lower bound: a question counts at limit s only if it
finished within s steps, though a forced answer at step s might have been right. The exact
curve runs the same questions once per limit, each in its own ordinary run directory
(`RUN_DIR/steps-<s>/`), so `report`, `--resume` and the viewer handle every limit as they handle
any run, and `RUN_DIR/step_limits.json` lists the limits.

Every limit shows the model the longest limit in its prompts, notices and child budgets and is
cut at s by `Budget.stop_at_step`: its trajectory is the longest run's trajectory up to step s,
then the forced answer. At temperature 0 those prefixes are the same requests, so the response
cache (`rlm_docs.models.cache`; one `ResponseCache` for every client of the sweep, offline and
scripted models included) replays them for free and only the forced answers are new calls. The
longest limit runs first; each run's ledger says which of its calls were new (`cached` false),
which is how the extra calls and dollars of the curve are counted. With RLM_DOCS_CACHE=off
nothing is shared and every limit pays in full (the counts then say so).
"""

import json
import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.errors import ConfigError, DatasetError
from rlm_docs.eval.executor import Executor
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import load_run
from rlm_docs.eval.runner import EvalSettings, run_eval
from rlm_docs.models.cache import default_cache
from rlm_docs.models.prices import sum_usd

FORMAT = "rlm-docs.step-limits"
MANIFEST = "step_limits.json"


def limit_dir(root: str | os.PathLike[str], limit: int) -> Path:
    """The run directory of one limit."""
    return Path(root) / f"steps-{limit}"


def is_sweep(path: str | os.PathLike[str]) -> bool:
    """Whether `path` holds a step-limit sweep (its manifest) rather than one run."""
    return (Path(path) / MANIFEST).is_file()


def _start(root: Path, limits: list[int], resume: bool) -> None:
    """Write the sweep manifest, or check it against `limits` on resume."""
    manifest = root / MANIFEST
    if manifest.exists():
        if not resume:
            raise ConfigError(
                f"{root}: a step-limit run already exists here; pass --resume to continue it "
                "or choose another --out"
            )
        old = read_limits(root)
        if old != limits:
            raise ConfigError(
                f"{root}: cannot resume, step limits differ from the original run "
                f"({','.join(map(str, sorted(old)))} != {','.join(map(str, sorted(limits)))})"
            )
        return
    if root.exists() and any(root.iterdir()):
        raise ConfigError(f"{root}: directory is not empty and holds no {MANIFEST}")
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(manifest, json.dumps({"format": FORMAT, "limits": limits}, indent=2) + "\n")


def read_limits(root: str | os.PathLike[str]) -> list[int]:
    """The sweep's limits, longest first; DatasetError naming a bad manifest."""
    path = Path(root) / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{path}: unreadable step-limit manifest ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DatasetError(f"{path}: not an rlm-docs step-limit manifest")
    limits = data.get("limits")
    if not isinstance(limits, list) or not limits or not all(_is_limit(v) for v in limits):
        raise DatasetError(f"{path}: field 'limits' must be a non-empty list of integers >= 1")
    return sorted(limits, reverse=True)


def _is_limit(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def calls(rows: Sequence[ResultRow]) -> dict[str, Any]:
    """New (uncached) and replayed calls of a run's rows, and the dollars of the new ones."""
    entries = [e for r in rows for e in r.get("ledger") or []]
    new = [e for e in entries if not e.get("cached")]
    return {
        "calls": len(entries),
        "new_calls": len(new),
        "replayed_calls": len(entries) - len(new),
        "new_cost_usd": sum_usd([e.get("cost_usd") or 0.0 for e in new]),
    }


def run_step_limits(
    settings: EvalSettings, limits: Sequence[int], executor: Executor | None = None
) -> list[dict[str, Any]]:
    """Run `settings` once per limit under `settings.out` (longest first; see module
    docstring); one entry per limit: limit, run directory, summary and `calls` counts."""
    ordered = sorted(set(limits), reverse=True)
    root = Path(settings.out)
    _start(root, ordered, settings.resume)
    cache = default_cache()
    top = ordered[0]
    out = []
    for limit in ordered:
        budget = replace(
            settings.budget, max_steps=top, stop_at_step=None if limit == top else limit
        )
        run = replace(
            settings,
            out=limit_dir(root, limit),
            budget=budget,
            cache=str(cache.path) if cache is not None else None,
        )
        summary = run_eval(run, executor)
        _, rows = load_run(run.out)
        out.append({"limit": limit, "out": run.out, "summary": summary, **calls(rows)})
    return out


def load_step_limits(
    root: str | os.PathLike[str],
) -> dict[int, tuple[dict[str, Any], list[ResultRow]]]:
    """{limit: (manifest, rows)} of every limit that has a run, longest first."""
    found = {}
    for limit in read_limits(root):
        if (limit_dir(root, limit) / "run.json").is_file():
            found[limit] = load_run(limit_dir(root, limit))
    if not found:
        raise DatasetError(f"{root}: a step-limit run with no run of any limit yet")
    return found
