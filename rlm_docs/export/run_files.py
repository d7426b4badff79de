"""What every export reads from a run directory: its manifest, one row per question, and each
answered question's trajectory (found beside the run even after the directory was moved)."""

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlm_docs.engine.records import Trajectory
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.eval.results_row import ResultRow
from rlm_docs.eval.rundir import EvalRunDir, run_rows


def read_run(run_dir: Path) -> tuple[dict[str, Any], list[ResultRow]]:
    """(manifest, rows in question order; unanswered questions are `missing` rows)."""
    run = EvalRunDir(run_dir)
    manifest = run.read_manifest()
    return manifest, run_rows(manifest, run.read_results())


def trajectory_of(run_dir: Path, row: Mapping[str, Any]) -> Trajectory | None:
    """The row's trajectory, or None when the question has none (missing, or not logged)."""
    recorded = row.get("trajectory")
    if not recorded:
        return None
    path = Path(recorded)
    if not path.is_file():  # the run directory was moved or copied since the run
        path = EvalRunDir(run_dir).trajectories / path.name
    return load_trajectory(path) if path.is_file() else None
