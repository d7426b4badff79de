"""Accuracy against the share of the budget used (`eval.budget_share`), a report figure."""

from rlm_docs.eval.budget_share import accuracy_by_share, accuracy_vs_share_used, limited_axes


def row(score: float, steps: float | None, sub_calls: float | None = None) -> dict:
    budget = {
        "steps": {"limit": 4, "used": 0, "left": 0, "share_used": steps},
        "sub_calls": {"limit": None, "used": 0, "left": None, "share_used": sub_calls},
        "depth": {"limit": 1, "used": 0, "left": 1, "share_used": 0.0},
    }
    return {"score": score, "budget": budget}


def test_questions_are_binned_by_quarter_and_exhausted_ones_apart():
    rows = [row(1.0, 0.1), row(0.0, 0.2), row(1.0, 0.5), row(0.0, 1.0), row(0.0, 1.0)]
    rows.append({"score": 1.0})  # a baseline's row: no budget data, left out
    assert accuracy_by_share(rows, "steps") == [(0.125, 0.5, 2), (0.625, 1.0, 1), (1.0, 0.0, 2)]
    assert accuracy_by_share(rows, "sub_calls") == []  # unlimited: no share


def test_the_figure_draws_the_limited_axes_only(tmp_path):
    runs = [("a", [row(1.0, 0.25), row(0.0, 1.0)]), ("b", [{"score": 1.0}])]
    assert [a.name for a in limited_axes(runs)] == ["steps"]  # not depth: a setting
    assert accuracy_vs_share_used(runs, tmp_path / "share.png")
    assert (tmp_path / "share.png").read_bytes()[:4] == b"\x89PNG"
    assert not accuracy_vs_share_used([("b", [{"score": 1.0}])], tmp_path / "none.png")
    assert not (tmp_path / "none.png").exists()
