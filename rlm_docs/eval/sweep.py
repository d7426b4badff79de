"""`run_sweep`: a grid of evaluations, one resumable run directory per cell, reported together.

Each cell is an `EvalSettings` run with `run_eval` into `OUT/<cell name>`. Generated workloads
(`bench make`) are written once into `OUT/workloads/`. A cell whose results are complete, none
failed, and whose identity (for a sweep from a spec file: the eval command line that runs it) is
the one recorded in `OUT/sweep.json` when it finished is skipped; any other existing cell is
resumed (`run_eval` refuses a resume whose settings differ) with its failed questions run again:
an outage must not freeze into the study as a 0% cell. The sweep holds `OUT`'s writer lock
(`run_lock`) and each cell its own. Interrupted, every cell stays resumable: run the same sweep
again. The sweep ends with one `report` over all cells in `OUT/report/`, labelled by cell name.

`rlm-docs sweep SPEC.toml` is this function over the cells a spec expands into.
"""

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.eval.run_lock import RunLock
from rlm_docs.eval.rundir import EvalRunDir
from rlm_docs.eval.runner import EvalSettings, run_eval

RECORD = "sweep.json"


@dataclass(frozen=True)
class Workload:
    """One `bench make` output (all its lengths), generated once into `OUT/workloads/`."""

    kind: str
    seed: int
    tokens: tuple[int, ...]
    questions: int
    needles: int = 1
    data: str | None = None
    filler: str | None = None

    @property
    def dirname(self) -> str:
        return f"{self.kind}-s{self.seed}"

    def expected_questions(self) -> int:
        """Questions per length: exact for needle and pairs, an upper bound for oolong."""
        if self.kind == "oolong-pairs":
            from rlm_docs.bench.pairs import TASKS

            return min(self.questions, len(TASKS))
        return self.questions

    def root(self, out: Path) -> Path:
        """Where the workload is written in sweep directory `out` (one folder per length)."""
        return out / "workloads" / self.dirname


@dataclass(frozen=True)
class SweepCell:
    """One run directory of a sweep: its name (its folder under the sweep directory; the
    settings' own `out` is replaced by it), the run's settings, and its identity, recorded
    when it finishes so an unchanged finished cell is skipped next time (default: the settings
    themselves)."""

    name: str
    settings: EvalSettings
    identity: list[str] = field(default_factory=list)

    def recorded(self) -> list[str]:
        if self.identity:
            return self.identity
        fields = dataclasses.asdict(self.settings) | {"out": None, "progress": None}
        return [json.dumps(fields, default=str, sort_keys=True)]


@dataclass
class SweepResult:
    """Each cell's run summary (`run_eval`'s; None for a finished cell that was skipped), the
    cells with failed questions left, and the combined report (`build_report`'s result)."""

    summaries: dict[str, dict[str, Any] | None]
    failed: list[str]
    report: dict[str, Any]


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep: `done` of `total` cells had finished; every cell is resumable."""

    def __init__(self, done: int, total: int) -> None:
        super().__init__(f"{done} of {total} cells finished")
        self.done, self.total = done, total


def run_sweep(
    cells: Sequence[SweepCell],
    out: str | Path,
    *,
    workloads: Sequence[Workload] = (),
    spec: str | Path | None = None,
    run: Callable[[SweepCell, EvalSettings], dict[str, Any]] | None = None,
    log: Callable[[str], None] = lambda _line: None,
) -> SweepResult:
    """Run every cell not finished into `out/<name>`, then report them all (see the module).

    `spec`: the spec file the cells came from, recorded in `sweep.json`. `run`: how one cell
    runs (default `run_eval(settings)`; the CLI prints eval's summary line and traces spans);
    it returns the run summary. `log`: one line per workload generated and per cell.
    Raises `SweepInterrupted` on Ctrl-C."""
    root = Path(out)
    names = [c.name for c in cells]
    if len(set(names)) < len(names):
        from rlm_docs.errors import ConfigError

        raise ConfigError(f"{root}: two sweep cells share a name; each needs its own directory")
    with RunLock(root):
        return _run_cells(cells, root, workloads, spec, run or _run_eval, log)


def _run_eval(_cell: SweepCell, settings: EvalSettings) -> dict[str, Any]:
    return run_eval(settings)


def _run_cells(
    cells: Sequence[SweepCell],
    out: Path,
    workloads: Sequence[Workload],
    spec: str | Path | None,
    run: Callable[[SweepCell, EvalSettings], dict[str, Any]],
    log: Callable[[str], None],
) -> SweepResult:
    record = _read_record(out)
    summaries: dict[str, dict[str, Any] | None] = {}
    failed: list[str] = []
    done = 0
    try:
        for workload in workloads:
            _generate(workload, out, log)
        for i, cell in enumerate(cells, 1):
            head = f"[{i}/{len(cells)}] {cell.name}"
            where = out / cell.name
            if _finished(where) and record.get(cell.name) == cell.recorded():
                log(f"{head}: finished, skipped")
                summaries[cell.name] = None
            else:
                log(f"{head}:")
                again = (where / "run.json").exists()
                settings = dataclasses.replace(
                    cell.settings, out=where, resume=again, retry_failed=again
                )
                summary = run(cell, settings)
                summaries[cell.name] = summary
                if summary["failures"]:
                    failed.append(cell.name)
                record[cell.name] = cell.recorded()
                _write_record(out, spec, record)
            done += 1
    except KeyboardInterrupt:
        raise SweepInterrupted(done, len(cells)) from None
    report = _report(cells, out)
    return SweepResult(summaries, failed, report)


def _generate(workload: Workload, out: Path, log: Callable[[str], None]) -> None:
    """Write the workload under out/workloads unless the same one is already there."""
    from rlm_docs.bench.make import MANIFEST, make_bench

    root = workload.root(out)
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = None
    wanted = {"tokens": list(workload.tokens), "questions": workload.questions}
    if (
        isinstance(manifest, dict)
        and manifest.get("kind") == workload.kind
        and manifest.get("seed") == workload.seed
        and {k: manifest.get("parameters", {}).get(k) for k in wanted} == wanted
    ):
        return
    log(f"generating {workload.kind} (seed {workload.seed}) -> {root}")
    make_bench(
        workload.kind,
        root,
        seed=workload.seed,
        tokens=list(workload.tokens),
        questions=workload.questions,
        data=workload.data,
        filler=workload.filler,
        needles=workload.needles,
    )


def _read_record(out: Path) -> dict[str, list[str]]:
    try:
        data = json.loads((out / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    cells = data.get("cells") if isinstance(data, dict) else None
    return cells if isinstance(cells, dict) else {}


def _write_record(out: Path, spec: str | Path | None, cells: dict[str, list[str]]) -> None:
    where = str(Path(spec).resolve()) if spec is not None else None
    record = {"format": "rlm-docs.sweep", "spec": where, "cells": cells}
    atomic_write_text(out / RECORD, json.dumps(record, indent=1) + "\n")


def _finished(path: Path) -> bool:
    """Every question of the run has a result, none failed, and the end-of-run files were
    written."""
    run = EvalRunDir(path)
    if not run.manifest_path.exists() or not (path / "predictions.parquet").exists():
        return False
    done = run.read_results()
    return all(
        q["id"] in done and done[q["id"]].get("status") != "failed"
        for q in run.read_manifest()["questions"]
    )


def _report(cells: Sequence[SweepCell], out: Path) -> dict[str, Any]:
    from rlm_docs.eval.report import build_report

    result: dict[str, Any] = build_report(
        [out / c.name for c in cells],
        out / "report",
        labels=[c.name for c in cells],
        disjoint=True,
    )
    return result
