"""The report's decomposition part: the table from the records h15a's runner writes (fixture
rows carry the documented fields), the context-length, fan-out, share-read and Kuiper figures,
and a clean n/a for runs without records."""

import json
import math
import re
from pathlib import Path

import pytest

from rlm_docs.bench.make import make_bench
from rlm_docs.cli import main
from rlm_docs.eval import decomposition_table
from rlm_docs.eval.decomposition import FIELDS
from rlm_docs.eval.kuiper_measures import kuiper_by_measure
from rlm_docs.eval.report import build_report

PNG = b"\x89PNG\r\n\x1a\n"
# question index -> the decomposition record the fixture gives it (h15a's field names)
RECORDS = [
    {"fanouts": [3, 5], "batches": 2, "child_runs": 1, "pages_looked": 4, "docs_looked": 1,
     "corpus_share_read": 0.5, "strategies": ["grep", "chunked-map"]},
    {"fanouts": [], "batches": 0, "child_runs": 0, "pages_looked": 2, "docs_looked": 1,
     "corpus_share_read": 0.1, "strategies": ["grep"]},
    {"fanouts": [4], "batches": 1, "child_runs": 0, "pages_looked": 6, "docs_looked": 2,
     "corpus_share_read": 0.25, "strategies": ["chunked-map"]},
]  # fmt: skip


def _with_records(run: Path) -> None:
    """Give every recorded question of `run` its RECORDS entry, as flat fields."""
    path = run / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows.sort(key=lambda r: r["id"])
    path.write_text("".join(json.dumps(r | RECORDS[i]) + "\n" for i, r in enumerate(rows)))


def _without_records(run: Path) -> None:
    """Drop the decomposition fields `eval` wrote, as in a run made before they existed."""
    path = run / "results.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    old = [{k: v for k, v in r.items() if k not in FIELDS} for r in rows]
    path.write_text("".join(json.dumps(r) + "\n" for r in old))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The rlm and bm25-agent on a needle workload at two lengths; rlm runs carry the fixture's
    records, bm25-agent runs none (as runs made before records existed)."""
    root = tmp_path_factory.mktemp("decomposition")
    make_bench("needle", root / "bench", tokens=[2048, 4096], questions=3)
    out = {}
    for tokens in (2048, 4096):
        part = root / "bench" / str(tokens)
        for system in ("rlm", "bm25-agent"):
            run = root / f"{system}-{tokens}"
            args = ["eval", "--dataset", str(part / "questions.jsonl"), "--corpus",
                    str(part / "corpus"), "--system", system, "--model", "offline",
                    "--out", str(run), "--no-progress", "--workers", "1"]  # fmt: skip
            assert main(args) == 0
            if system == "rlm":
                _with_records(run)
            else:
                _without_records(run)
            out[f"{system}-{tokens}"] = run
    return out


def test_report_shows_the_decomposition_of_workload_runs(runs, tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["report", *map(str, runs.values()), "--out", str(out)]) == 0
    capsys.readouterr()
    md = (out / "report.md").read_text()
    table = md.split("## Decomposition")[1].split("\n\n")[1].splitlines()
    assert table[0].startswith("| System | Workload | Length | N | Sub-calls/q | Batches/q |")
    rlm = [r for r in table if r.startswith("| rlm / offline | needle | 2,048 |")]
    # batches 3, 5 and 4 pooled: mean 4.0, max 5; 3 batches / 3 questions; 1 child run / 3
    cells = rlm[0].split(" | ")
    assert cells[3:] == ["3", cells[4], "1.0", "4.0", "5", "0.3", "4.0",
                         "28.3%", "chunked-map 67%, grep 67% |"]  # fmt: skip
    bm25 = [r for r in table if r.startswith("| bm25-agent / offline | needle | 4,096 |")]
    assert bm25[0].endswith("| n/a | n/a | n/a | n/a | n/a | n/a | n/a |")
    assert "## Kuiper K/N per effort measure [95% bootstrap CI]" in md
    for name in (
        "accuracy_cost_vs_context_length.png",
        "fanout_histogram.png",
        "corpus_share_vs_correctness.png",
    ):
        assert (out / name).read_bytes().startswith(PNG), name
        assert f"]({name})" in md
    assert "not drawn" not in md
    html = (out / "report.html").read_text()
    # self-contained: every figure is inside the page, none is a file reference
    assert html.count("<img src='data:image/png;base64,") == md.count("![")
    assert not re.search(r"<img src='[^d]", html)


def test_runs_without_records_degrade_to_na_and_say_why(runs, tmp_path):
    report = build_report([runs["bm25-agent-2048"]], tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| bm25-agent / offline | needle | 2,048 | 3 | 0.0 | n/a |" in md
    notes = [n for n in md.splitlines() if "not drawn" in n]
    assert notes == [
        "- Accuracy and cost vs context length: not drawn (no generated workload run at two or "
        "more lengths among these runs).",
        "- Fan-out histogram: not drawn (no decomposition records in these runs).",
        "- Share of corpus read vs correctness: not drawn (no decomposition records in these "
        "runs).",
    ]
    assert not (tmp_path / "rep" / "fanout_histogram.png").exists()
    assert report["runs"][0].label == "bm25-agent / offline"  # one length: no part in labels


def test_table_reads_flat_columns_and_the_decomposition_dict():
    rows = [
        {"id": "a", "sub_calls": 2, "fields": {"workload": "oolong", "target_tokens": 8192}}
        | RECORDS[0],
        {"id": "b", "sub_calls": 0, "fields": {"workload": "oolong", "target_tokens": 8192},
         "decomposition": json.dumps(RECORDS[2])},
        {"id": "c", "sub_calls": 1, "fields": {"workload": "oolong", "target_tokens": 8192}},
    ]  # fmt: skip
    (group,) = decomposition_table.groups([("rlm", rows)])
    s = decomposition_table.summary(group)
    assert (s["n"], s["recorded"], s["fanout_mean"], s["fanout_max"]) == (3, 2, 4.0, 5.0)
    assert s["sub_calls"] == 1.0 and s["pages_looked"] == 5.0
    assert s["corpus_share_read"] == pytest.approx(0.375)
    headers, table = decomposition_table.table([group])
    assert table[0][3] == "3 (2 recorded)" and table[0][-1] == "chunked-map 100%, grep 50%"
    assert headers[1:3] == ["Workload", "Length"]
    plain = [{k: v for k, v in r.items() if k != "fields"} for r in rows]
    headers, table = decomposition_table.table(decomposition_table.groups([("rlm", plain)]))
    assert "Workload" not in headers and table[0][:2] == ["rlm", "3 (2 recorded)"]


def test_kuiper_per_measure_is_na_for_constant_effort_or_correctness():
    rows = [
        {"steps": 1 + i % 2, "sub_calls": 3, "cost_usd": 0.0, "pages_looked": i,
         "correct": i % 3 == 0, "input_tokens": 10 * i, "output_tokens": 1, "wall_s": 0.1}
        for i in range(9)
    ]  # fmt: skip
    blocks = kuiper_by_measure(rows)
    assert blocks["sub_calls"] is None and blocks["cost_usd"] is None  # the same for all
    assert blocks["pages_looked"]["normalized"] > 0 and not math.isnan(blocks["steps"]["low"])
    assert blocks["pages_looked"]["low"] <= blocks["pages_looked"]["normalized"]
    assert all(b is None for b in kuiper_by_measure([r | {"correct": True} for r in rows]).values())


def test_scaling_figure_keeps_identical_systems_visible_and_its_legend_off_the_data(
    monkeypatch, tmp_path
):
    from rlm_docs.eval import plots
    from rlm_docs.eval.scaling import plot_scaling

    saved = []
    monkeypatch.setattr(plots, "save_png", lambda fig, path: saved.append(fig))
    rows = [
        {"workload": "needle", "system": system, "context_tokens": 2**k, "accuracy": 1.0,
         "accuracy_low": 1.0, "accuracy_high": 1.0, "tokens": 1000.0 * k, "cost_usd": 0.0}
        for system in ("bm25-agent", "rlm") for k in (13, 15, 17)
    ]  # fmt: skip
    plot_scaling(rows, tmp_path / "s.png")
    (fig,) = saved
    accuracy, tokens = fig.axes  # all $0: no dollar panel
    first, second = [bars.lines[0] for bars in accuracy.containers]  # the errorbar data lines
    assert list(first.get_ydata()) == list(second.get_ydata())  # the needle case: both 100%
    assert first.get_linewidth() > second.get_linewidth()
    assert first.get_marker() != second.get_marker()
    assert accuracy.get_xscale() == "log" and accuracy.xaxis.get_scale() == "log"
    labels = {t.get_text() for t in accuracy.get_xticklabels()}
    assert {"$2^{13}$", "$2^{15}$", "$2^{17}$"} <= labels
    assert accuracy.get_legend() is None and len(fig.legends) == 1  # below the panels
