"""docs/runs.md's table of the results row is `ResultRow`'s declaration, and a run's rows hold
only declared columns (so the declaration, the builder and the docs cannot drift apart); a
run directory written before rows had a `version` still loads."""

import json
import re
from pathlib import Path

from rlm_docs.eval.decomposition import FIELDS
from rlm_docs.eval.results_row import (
    ROW_VERSION,
    columns,
    columns_table,
    missing_row,
    row_version,
)
from rlm_docs.eval.rundir import load_run
from rlm_docs.eval.scoring import SCORING_VERSION
from rlm_docs.governor import axes

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "runs.md"


def test_the_docs_table_is_the_declaration():
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"<!-- results row: begin -->\n(.*?)<!-- results row: end -->", text, re.S)
    assert found is not None
    assert found.group(1) == columns_table()


def test_every_column_a_row_is_built_with_is_declared():
    declared = set(columns())
    assert set(axes.recorded()) <= declared  # the effort columns
    assert {a.name for a in axes.axes() if a.source == "derived"} <= declared
    assert set(FIELDS) <= declared  # the decomposition's flat columns
    row = missing_row({"id": "q"})
    assert set(row) <= declared and row_version(row) == ROW_VERSION


def test_an_old_run_without_row_versions_loads(tmp_path):
    row = {"id": "q1", "question": "Q?", "answer": ["4"], "citations": [], "steps": 2}
    row |= {"score": 1.0, "correct": True, "stage": "exact", "status": "ok"}
    manifest = {"format": "rlm-docs.eval-run", "scoring_version": SCORING_VERSION}
    manifest["questions"] = [{"id": "q1"}, {"id": "q2"}]
    (tmp_path / "run.json").write_text(json.dumps(manifest))
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    _, rows = load_run(tmp_path)
    assert rows[0] == row and row_version(rows[0]) == 0
    assert rows[1]["status"] == "missing" and row_version(rows[1]) == ROW_VERSION
