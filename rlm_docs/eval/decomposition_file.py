"""Storing a question's decomposition record in its trajectory file: the trajectory-rewrite part
of the decomposition record (`rlm_docs.eval.decomposition`).

The record is computed after the run, so the trajectory's result record is rewritten with it
(`decomposition`) atomically: a reader never sees a half-written file.
"""

from typing import Any

from rlm_docs.engine.trajectory import load_trajectory, write_records
from rlm_docs.eval.decomposition import Decomposition, decompose


def record_decomposition(
    trajectory: str | None, ledger: list[dict[str, Any]], corpus: Any
) -> Decomposition:
    """Decompose one question and store the record as `decomposition` in its trajectory file's
    result record; with no trajectory file (a failed system), from the ledger alone."""
    if not trajectory:
        return decompose(None, ledger, corpus)
    traj = load_trajectory(trajectory)
    record = decompose(traj, ledger, corpus)
    if traj.result is not None:
        traj.result.extra["decomposition"] = record.to_dict()
        write_records(trajectory, traj.to_records())
    return record
