"""The notebooks execute top to bottom (nbclient, a real kernel) on the bundled demo
data, offline, in a scratch working directory with RLM_DOCS_HOME pointed at a temp dir."""

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
NAMES = ("explore_corpus", "ask_and_inspect", "cost_calibration_study", "decomposition_study")


def outputs_text(nb) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(out.get("text", ""))
            parts += [str(v) for v in out.get("data", {}).values()]
    return "\n".join(parts)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_is_committed_without_outputs(name):
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_top_to_bottom(rlm_home, name, tmp_path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("RLM_DOCS_NOTEBOOK_FULL", raising=False)
    monkeypatch.delenv("RLM_DOCS_MODEL", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    scratch = tmp_path / "tmp"  # tempfile.mkdtemp() in the kernel lands here
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=240, kernel_name="python3", resources={"metadata": {"path": str(work)}}
    )
    client.execute()  # raises CellExecutionError naming the failing cell
    text = outputs_text(nb)
    assert "Traceback (most recent call last)" not in text
    # Outputs go to a temp dir, never into the working (or repository) directory.
    assert not list(work.iterdir())
    if name == "explore_corpus":
        (store,) = scratch.glob("explore-corpus-*/demo_store")
        assert (store / "manifest.json").is_file()
        assert "NameError" not in text and "not available in the sandbox" in text
    elif name == "ask_and_inspect":
        (out,) = scratch.glob("ask-and-inspect-*")
        assert (out / "trajectory.html").stat().st_size > 10_000
        assert list((out / "logs").glob("*.jsonl"))
    elif name == "decomposition_study":
        assert "image/png" in str([o for c in nb.cells for o in c.get("outputs", [])])
        (figure,) = scratch.glob("decomposition-study-*/scaling.png")
        assert figure.stat().st_size > 10_000
        assert "oolong" in text and "needle" in text and "sub-calls" in text
        assert "llm_query_batched" in text  # the root's map step, printed from its trajectory
    else:
        (out,) = scratch.glob("cost-calibration-*")
        for figure in ("calibration", "accuracy_vs_cost", "accuracy_vs_steps"):
            assert (out / "figures" / f"{figure}.png").stat().st_size > 5_000
        runs = sorted(p.name for p in (out / "runs").iterdir())
        assert runs == ["bm25-agent-1steps", "bm25-agent-8steps", "rlm-1steps", "rlm-8steps"]
        assert "image/png" in str([o for c in nb.cells for o in c.get("outputs", [])])
