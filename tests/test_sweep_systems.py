"""The shipped sweep over every system that answers on its own (docs/sweep-systems.toml), run
as docs/systems.md shows it: all eight run offline on the demo questions and the report
compares them, each with its own decomposition tags."""

import shlex
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.cli.sweep_spec import load_sweep

REPO = Path(__file__).resolve().parents[1]
SPEC = REPO / "docs" / "sweep-systems.toml"
SYSTEMS = ("rlm", "bm25-agent", "static-rag", "long-context", "map-reduce", "deepread",
           "docdancer", "sleuth")  # fmt: skip


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("RLM_DOCS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    return tmp_path


def test_the_spec_names_the_eight_systems(tmp_path):
    cells = load_sweep(SPEC, tmp_path / "out").cells
    assert [dict(c.flags)["system"] for c in cells] == list(SYSTEMS)


def test_every_system_runs_on_the_demo_questions_and_the_report_compares_them(env, capsys):
    doc = (REPO / "docs" / "systems.md").read_text(encoding="utf-8")
    (line,) = [x for x in doc.splitlines() if x.startswith("    rlm-docs sweep ")]
    argv = shlex.split(line)[1:]
    assert argv == ["sweep", "docs/sweep-systems.toml", "--out", "sweeps/systems"]
    out = env / "systems"
    assert main(["sweep", str(REPO / argv[1]), "--out", str(out), "--no-progress"]) == 0
    printed = capsys.readouterr().out
    for system in SYSTEMS:
        assert f"{system}: 8 questions (8 run now)" in printed
    report = (out / "report" / "report.md").read_text()
    rows = {
        line.split("|")[1].strip(): line for line in report.splitlines() if line.startswith("| ")
    }
    for system in SYSTEMS:
        assert f"demo__{system}" in rows  # the accuracy and effort table: one row per system
    decomposition = {
        name.split(" / ")[0]: line for name, line in rows.items() if " / offline" in name
    }
    assert "locate-then-read" in decomposition["deepread"]
    assert "search-then-read" in decomposition["docdancer"]
    assert "screened-pages" in decomposition["sleuth"]
    assert "| deepread / offline · k 2 · max-iterations 50 |" in report  # its own settings only
