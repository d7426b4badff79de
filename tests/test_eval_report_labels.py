"""Report labels say what a run did: each limit of a step-limit run is labelled with its own
limit (its budget records the longest), and `report --label RUN_DIR=NAME` names a run."""

import pytest

from rlm_docs.cli import main
from tests.fixtures.eval.support import QUESTIONS, build_store


@pytest.fixture(scope="module")
def steps(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RLM_DOCS_HOME", str(root / "home"))
        argv = [
            "eval", "--dataset", str(QUESTIONS), "--corpus", str(build_store(root / "store")),
            "--system", "rlm", "--model", "offline", "--max-steps", "1,2,4", "--limit", "2",
            "--out", str(root / "run"), "--no-progress",
        ]  # fmt: skip
        assert main(argv) == 0
    return root / "run"


def _labels(capsys, *argv: str) -> list[str]:
    assert main(["report", *argv]) == 0
    out = capsys.readouterr().out
    return [line.split(" | ")[0][2:] for line in out.splitlines() if line.startswith("| rlm")]


def test_each_step_limit_is_labelled_with_its_own_limit(steps, tmp_path, capsys):
    one = _labels(capsys, str(steps / "steps-1"), "--out", str(tmp_path / "a"))
    assert one == ["rlm / offline · max-steps 1"]
    runs = [str(steps / f"steps-{n}") for n in (1, 2, 4)]
    assert _labels(capsys, *runs, "--out", str(tmp_path / "b")) == [
        "rlm / offline · max-steps 1",
        "rlm / offline · max-steps 2",
        "rlm / offline · max-steps 4",
    ]


def test_label_names_a_run_and_bad_labels_are_one_line_errors(steps, tmp_path, capsys):
    one, four = str(steps / "steps-1"), str(steps / "steps-4")
    labels = _labels(capsys, one, four, "--label", f"{four}=full budget", "--out", str(tmp_path))
    assert labels == ["rlm / offline · max-steps 1"]  # the other row starts with its name
    md = (tmp_path / "report.md").read_text()
    assert "| full budget | 2 |" in md and "full budget: by hop type" in md
    for bad, why in (
        (f"{steps}=x", "is not one of the RUN_DIRs reported"),
        ("nothing", "expected RUN_DIR=NAME"),
    ):
        assert main(["report", one, "--label", bad, "--out", str(tmp_path / "c")]) == 2
        assert why in capsys.readouterr().err
    twice = ["--label", f"{one}=x", "--label", f"{four}=x"]
    assert main(["report", one, four, *twice, "--out", str(tmp_path / "d")]) == 2
    assert "the name 'x' is given twice" in capsys.readouterr().err
