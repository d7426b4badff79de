"""An eval run as rlms logs (`--format rlms`): one rlms JSONL log per answered question, under
its trajectory's file name in the `--out` directory, so rlms' own viewer opens rlm-docs runs of
any system. The conversion is `rlm_docs.engine.rlms_log.to_rlms`; `load_trajectory` reads rlms
logs the other way. A single trajectory file is converted too.

Every trajectory is read and converted before the first file is written, so a bad log stops the
export with nothing half-written."""

from pathlib import Path

from rlm_docs.engine.rlms_log import to_rlms
from rlm_docs.engine.trajectory import load_trajectory, write_records
from rlm_docs.errors import DatasetError
from rlm_docs.export.run_files import read_run, trajectory_of

SUFFIX = ".jsonl"  # of each log written in the `--out` directory
DIRECTORY = True  # `--out` is a directory


def export(source: Path, out: Path) -> Path:
    """Write the rlms logs of the run at `source` (or of one trajectory file) into `out`."""
    if source.is_file():
        converted = [(source.name, to_rlms(load_trajectory(source)))]
    else:
        _, rows = read_run(source)
        found = [(row.get("trajectory"), trajectory_of(source, row)) for row in rows]
        converted = [
            (Path(name).name, to_rlms(traj)) for name, traj in found if name and traj is not None
        ]
        if not converted:
            raise DatasetError(f"{source}: no question of this run has a trajectory to export")
    out.mkdir(parents=True, exist_ok=True)
    for name, records in converted:
        write_records(out / name, records)
    return out
