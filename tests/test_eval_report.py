import json
import shutil

import pytest

from rlm_docs.cli import main
from rlm_docs.errors import DatasetError
from rlm_docs.eval.plots import step_limit_curve
from rlm_docs.eval.report import build_report
from rlm_docs.eval.rundir import load_run
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.servers.chat import ChatServer

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    store = build_store(root / "store")
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    mp.setenv("RLM_DOCS_CACHE", "off")
    with ChatServer(reply=fake_model) as srv:
        for system, out, limit in (
            ("static-rag", "static-rag", []),
            ("bm25-agent", "bm25-agent", []),
            ("static-rag", "static-rag-3", ["--limit", "3"]),
        ):
            code = main(
                ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", system,
                 "--model", f"openai:fake@{srv.base_url}", "--out", str(root / out),
                 "--no-progress", *limit]
            )  # fmt: skip
            assert code == 0
    mp.undo()
    return root


def test_report_tables_notes_and_figures(runs, tmp_path, capsys):
    out = tmp_path / "rep"
    assert (
        main(["report", str(runs / "static-rag"), str(runs / "bm25-agent"), "--out", str(out)]) == 0
    )
    printed = capsys.readouterr().out
    assert "| static-rag / openai:fake@" in printed and "| bm25-agent / openai:fake@" in printed
    assert "accuracy = numeric + ANLS* ≥ 0.5 stages, no judge; bootstrap CI." in printed
    md = (out / "report.md").read_text()
    assert "Kuiper steps K/N" in md and "by hop type" in md and "Spearman" in md
    # static-rag answers q1, q2, q6 exactly and q5 by number: 4/6; X-doc is q4 only (refused)
    assert "| static-rag / openai:fake@" in md and "66.7% [" in md and "0.0% (n=1)" in md
    html = (out / "report.html").read_text()
    assert (
        html.count("<table>") == md.count("\n|---") and "<img src='data:image/png;base64," in html
    )
    for name in (
        "cumulative_differences.png",
        "accuracy_vs_cost.png",
        "accuracy_vs_step_limit.png",
        "effort_distributions.png",
    ):
        assert (out / name).read_bytes().startswith(PNG)
    summary = json.loads((out / "summary.json").read_text())
    bm25 = next(v for k, v in summary.items() if k.startswith("bm25-agent"))
    failed = [
        r.get("error") for r in load_run(runs / "bm25-agent")[1] if r.get("status") == "failed"
    ]
    assert bm25["steps"]["value"] == 2.0 and bm25["n"] == 6, failed  # a flake names its cause
    rag = next(v for k, v in summary.items() if k.startswith("static-rag"))
    assert rag["wasted_effort_steps"] == 1.0  # one step for every question, right or wrong
    assert "Wasted effort ρ" in md


def test_runs_on_different_question_sets_are_compared_on_the_shared_ones(runs, tmp_path):
    out = tmp_path / "rep"
    report = build_report([runs / "bm25-agent", runs / "static-rag-3"], out)
    assert "use only the 3 questions all runs share" in report["notes"][0]
    assert "bm25-agent / openai:fake@" in report["notes"][0] and ": 6, " in report["notes"][0]
    rows = report["markdown"].splitlines()[2:]
    assert [r.split(" | ")[1] for r in rows] == ["3", "3"]
    md = (out / "report.md").read_text()
    assert "## Comparison on the 3 shared questions" in md
    full = md.split("## Each run on its full question set")[1].split("##")[0]
    assert [r.split(" | ")[1] for r in full.strip().splitlines()[2:]] == ["6", "3"]
    summary = json.loads((out / "summary.json").read_text())
    bm25 = next(v for k, v in summary.items() if k.startswith("bm25-agent"))
    assert bm25["n"] == 3 and bm25["full_question_set"]["n"] == 6
    # the same question set: no note, one comparison table
    same = build_report([runs / "static-rag", runs / "bm25-agent"], tmp_path / "same")
    assert not any("question sets" in n for n in same["notes"])
    # no shared question at all: nothing to compare, said in one line
    other = tmp_path / "other"
    shutil.copytree(runs / "static-rag-3", other)
    manifest = json.loads((other / "run.json").read_text())
    manifest["questions"] = [{"id": "elsewhere", "question": "?"}]
    (other / "run.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="share no question"):
        build_report([runs / "bm25-agent", other], tmp_path / "none")


def test_report_on_a_non_run_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    assert "not a run directory (no run.json)" in capsys.readouterr().err


def test_report_refuses_to_write_into_a_run_directory(runs, capsys):
    before = sorted(p.name for p in (runs / "static-rag").iterdir())
    for out, where in (
        (runs / "static-rag-3", "is"),
        (runs / "static-rag-3" / "report", f"is inside {runs / 'static-rag-3'},"),
    ):
        assert main(["report", str(runs / "static-rag"), "--out", str(out)]) == 2
        assert capsys.readouterr().err.strip() == (
            f"rlm-docs report: error: --out {out}: {where} an eval run's directory (run.json); "
            "write the report to a directory of its own, e.g. reports/NAME"
        )
    assert sorted(p.name for p in (runs / "static-rag").iterdir()) == before
    assert not (runs / "static-rag-3" / "report").exists()
    assert not (runs / "static-rag-3" / "report.md").exists()


def test_step_limit_curve_hand_computed():
    rows = [
        {"steps": 1, "score": 1.0},
        {"steps": 3, "score": 1.0},
        {"steps": 2, "score": 0.5},
        {"steps": 3, "score": 0.0},
    ]
    # limit 1: only the first counts -> 1/4; limit 2: + 0.5 -> 1.5/4; limit 3: all -> 2.5/4
    assert step_limit_curve(rows, 3) == [0.25, 0.375, 0.625]


def _figure(monkeypatch, draw):
    """Draw with `draw()` and return the matplotlib figure instead of only saving it."""
    from rlm_docs.eval import plots

    saved = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: saved.append(fig))
    draw(plots)
    return saved[0]


def test_plots_keep_identical_series_visible_and_axes_sensible(monkeypatch, tmp_path):
    from rlm_docs.eval.aggregate import summarize

    rows = [
        {"id": f"q{i}", "steps": 1 + i % 3, "score": float(i % 2), "correct": bool(i % 2)}
        for i in range(9)
    ]
    runs = [("a", rows), ("b", list(rows))]  # two identical runs
    summaries = [summarize(rows, n_boot=20) for _ in runs]
    fig = _figure(monkeypatch, lambda p: p.accuracy_vs_step_limit(runs, tmp_path / "x.png"))
    (ax,) = fig.axes
    first, second = ax.get_lines()
    assert list(first.get_ydata()) == list(second.get_ydata())
    assert first.get_marker() != second.get_marker()
    assert first.get_linestyle() != second.get_linestyle()
    assert first.get_linewidth() > second.get_linewidth()  # the later one drawn inside
    assert all(float(t).is_integer() for t in ax.get_xticks())
    fig = _figure(monkeypatch, lambda p: p.accuracy_vs_cost(runs, summaries, tmp_path / "c.png"))
    tokens_ax, cost_ax = fig.axes
    assert cost_ax.get_xlim() == pytest.approx((-0.03, 1.0))  # all $0: not -0.04..0.04
    assert "cost = 0" in cost_ax.get_xlabel()  # under the axis, off the data and legend
    two_steps = [r | {"steps": 2} for r in rows]  # one value only: still integer ticks
    fig = _figure(
        monkeypatch, lambda p: p.effort_distributions([*runs, ("c", two_steps)], tmp_path / "e")
    )
    for steps_ax in (fig.axes[0], fig.axes[4]):
        assert all(float(t).is_integer() for t in steps_ax.get_xticks())
        assert all(float(t).is_integer() for t in steps_ax.get_yticks())
    assert fig.axes[4].get_xlim() == (1.0, 3.0)


def test_runs_scored_by_an_older_rlm_docs_are_scored_again(runs, tmp_path):
    from rlm_docs.eval.rundir import load_run
    from rlm_docs.eval.scoring import SCORING_VERSION

    old = tmp_path / "old"
    shutil.copytree(runs / "static-rag", old)
    manifest = json.loads((old / "run.json").read_text())
    assert manifest.pop("scoring_version") == SCORING_VERSION
    (old / "run.json").write_text(json.dumps(manifest))
    results = old / "results.jsonl"
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:  # as the ANLS*-only scoring left q5's right number
        if row["id"] == "q5":
            row |= {"stage": "anls", "score": 0.0, "correct": False, "error_type": "comprehension"}
    results.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, now = load_run(old)
    q5 = next(r for r in now if r["id"] == "q5")
    assert (q5["stage"], q5["correct"], q5["error_type"]) == ("numeric", True, None)
    report = build_report([old], tmp_path / "rep")
    assert "Scored again with the current stages" in report["notes"][0]
    assert "| 6 | 66.7% [" in report["markdown"]


def _table(md: str, heading: str) -> dict[str, list[str]]:
    """{system: cells} of the markdown table under `heading` (its header row under "")."""
    lines = md.split(heading, 1)[1].split("\n\n", 2)[1].splitlines()
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in lines if line[:1] == "|"]
    return {"" if i == 0 else r[0]: r[1:] for i, r in enumerate(rows) if not r[0].startswith("-")}


def test_comparison_kuiper_is_na_exactly_where_the_per_measure_table_is(runs, tmp_path):
    """One n/a rule (effort.kuiper_applicable): constant effort or constant correctness."""
    import math

    from rlm_docs.eval.aggregate import kuiper_block
    from rlm_docs.eval.kuiper_measures import kuiper_by_measure
    from rlm_docs.eval.report import _kuiper

    rows = [{"steps": 1 + i % 3, "total_tokens": 100.0, "correct": i % 2 == 0} for i in range(8)]
    for case in (
        rows,
        [r | {"correct": True} for r in rows],
        [r | {"correct": False} for r in rows],
    ):
        per_measure = kuiper_by_measure(case)
        for measure in ("steps", "total_tokens"):
            block = kuiper_block(case, measure)
            assert (_kuiper(block) == "n/a") == (per_measure[measure] is None)
    assert _kuiper(kuiper_block(rows, "total_tokens")) == "n/a"  # the same tokens everywhere
    assert _kuiper(kuiper_block(rows, "steps")) != "n/a" and not math.isnan(
        kuiper_by_measure(rows)["steps"]["normalized"]
    )
    all_right = [r | {"correct": True} for r in rows]
    assert _kuiper(kuiper_block(all_right, "steps")) == "n/a"  # not "0.000 [0.000, 0.000] (K=0"

    out = tmp_path / "rep"
    assert (
        main(["report", str(runs / "static-rag"), str(runs / "bm25-agent"), "--out", str(out)]) == 0
    )
    md = (out / "report.md").read_text()
    comparison = _table(md, "## Comparison")
    measures = _table(md, "## Kuiper K/N per effort measure")
    assert set(comparison) == set(measures) and len(comparison) == 3
    for column, measure in (
        ("Kuiper steps K/N", "root steps"),
        ("Kuiper tokens K/N", "total tokens"),
    ):
        left, right = comparison[""].index(column), measures[""].index(measure)
        for system in set(comparison) - {""}:
            assert (comparison[system][left] == "n/a") == (measures[system][right] == "n/a"), system


def test_many_series_figures_keep_legend_and_notes_off_the_data(monkeypatch, tmp_path):
    from matplotlib.colors import to_hex

    from rlm_docs.eval import plots

    saved = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: saved.append(fig))
    rows = [
        {"steps": 1 + i % 3, "total_tokens": 100.0 * i, "correct": i % 2 == 0} for i in range(6)
    ]
    runs = [(f"run {k}", rows) for k in range(16)]
    block = {"value": 0.5, "low": 0.2, "high": 0.8}
    summaries = [
        {"accuracy": block, "total_tokens": block, "cost_usd": block | {"value": 0.0}}
    ] * 16
    plots.accuracy_vs_cost(runs, summaries, tmp_path / "c.png")
    plots.accuracy_vs_step_limit(runs, tmp_path / "s.png")
    cost, steps = saved
    tokens_ax, dollars_ax = cost.axes
    assert tokens_ax.get_legend() is None and dollars_ax.get_legend() is None
    assert len(cost.legends) == 1  # one legend, below the panels
    colours = {to_hex(bars.lines[0].get_color()) for bars in tokens_ax.containers}
    assert len(colours) == 16  # no colour repeats after 10 series
    assert "every run: cost = 0" in dollars_ax.get_xlabel() and not dollars_ax.texts
    (ax,) = steps.axes
    assert "lower bound" in ax.get_title() and not ax.texts  # a subtitle, not over the data
