"""Report figures stay readable at study scale: a dozen runs in the cumulative-differences
figure (one legend, nothing overlapping), distinct tick labels on a narrow token range
(map-reduce's near-identical totals), groups in numeric order, and the step-limit figure
counting a forced answer at the limit that forced it, and saying so."""

import random

from rlm_docs.eval import plots
from rlm_docs.eval.aggregate import by_group


def _drawn(monkeypatch, draw):
    saved = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: saved.append(fig))
    draw()
    fig = saved[0]
    fig.canvas.draw()
    return fig, fig.canvas.get_renderer()


def _overlap(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_cumulative_differences_with_twelve_runs_has_one_legend_clear_of_the_panels(
    monkeypatch, tmp_path
):
    rng = random.Random(1)
    runs = [
        (
            f"rlm / openai:gpt-5-mini@http://127.0.0.1:41234/v1 · max-steps {2**k} (steps-{k})",
            [
                {
                    "steps": rng.randint(1, 8),
                    "input_tokens": rng.randint(10**4, 10**6),
                    "correct": rng.random() < 0.5,
                }
                for _ in range(24)
            ],
        )  # fmt: skip
        for k in range(12)
    ]
    fig, renderer = _drawn(
        monkeypatch, lambda: plots.cumulative_differences(runs, tmp_path / "c.png")
    )
    steps_ax, tokens_ax = fig.axes
    assert steps_ax.get_legend() is None and tokens_ax.get_legend() is None
    (legend,) = fig.legends
    assert len(legend.get_texts()) == 12
    assert all("(K/N " in t.get_text() for t in legend.get_texts())
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
    assert not _overlap(*boxes)  # tick and axis labels of one panel clear of the other
    assert not any(_overlap(legend.get_window_extent(renderer), box) for box in boxes)


def test_token_ticks_of_a_narrow_range_read_differently(monkeypatch, tmp_path):
    rows = [
        {"steps": 1, "input_tokens": 3_250_000 + 500 * i, "correct": i % 3 == 0} for i in range(24)
    ]
    fig, _ = _drawn(
        monkeypatch,
        lambda: plots.effort_distributions([("map-reduce", rows)], tmp_path / "e.png"),
    )
    labels = [t.get_text() for t in fig.axes[1].get_xticklabels() if t.get_text()]
    assert len(labels) >= 3 and len(set(labels)) == len(labels), labels
    assert all(label.endswith("M") for label in labels)


def test_groups_of_numbers_are_in_numeric_order():
    rows = [
        {"id": f"q{i}", "target_tokens": t, "score": 1.0, "correct": True}
        for i, t in enumerate([32768, 8192, 131072, 8192])
    ]
    groups = by_group(rows, lambda r: str(r["target_tokens"]), n_boot=10)
    assert list(groups) == ["8192", "32768", "131072"]


def test_a_forced_answer_counts_at_the_limit_that_forced_it(monkeypatch, tmp_path):
    # bm25-agent at --max-steps 1: one SEARCH turn, then the forced answer; 3 of 8 right
    forced = [
        {"steps": 2, "stop_reason": "forced", "score": 1.0 if i < 3 else 0.0} for i in range(8)
    ]
    assert plots.step_limit_curve(forced, 2) == [0.375, 0.375]
    finished = [{"steps": 2, "stop_reason": "final", "score": 1.0}]
    assert plots.step_limit_curve(finished, 2) == [0.0, 1.0]  # its 2nd turn was an ordinary one
    fig, _ = _drawn(
        monkeypatch,
        lambda: plots.accuracy_vs_step_limit([("bm25-agent", forced)], tmp_path / "s.png"),
    )
    (ax,) = fig.axes
    assert "s ordinary turns, then a forced answer, counted at s" in ax.get_title()
    assert list(ax.get_lines()[0].get_ydata()) == [0.375]
    assert list(ax.get_xticks()) == [1]  # whole limits only, even for a single one
