"""Rich notebook views: HTML and plain-text fallbacks, escaping, folding, trajectory walking."""

import json
import subprocess
import sys

import pytest

from rlm_docs.corpus import Corpus, Hit
from rlm_docs.engine.prediction import Prediction
from rlm_docs.errors import DatasetError
from rlm_docs.governor import Ledger, LedgerEntry
from rlm_docs.notebook import Rich, TrajectoryView, show
from rlm_docs.notebook.display import FOLD_ROWS
from tests.test_viewer_build import HOSTILE, make_trajectory


def test_corpus_view_lists_documents_and_folds_long_lists():
    many = Corpus.from_documents({f"doc{i:02d}": ["page one", "page two"] for i in range(20)})
    view = show(many)
    assert isinstance(view, Rich)
    assert repr(view) == many_text(many)
    html = view._repr_html_()
    assert html.count("<tr>") == 20 + 2  # rows plus one header per table
    assert "doc00" in html.split("<details>")[0] and "doc19" in html.split("<details>")[1]
    assert f"{20 - FOLD_ROWS:,} more rows" in html


def many_text(corpus: Corpus) -> str:
    return (
        f"Corpus (in memory): 20 documents, 40 pages, {corpus.total_tokens:,} tokens, "
        f"{corpus.total_chars:,} chars"
    )


def test_hits_are_escaped_and_numbered():
    hits = [Hit("A", 3, 1.5, f"text {HOSTILE}"), Hit("B", 1, 0.25, "plain")]
    view = show(hits)
    assert "<script>window.PWNED" not in view._repr_html_()
    assert "&lt;/script&gt;" in view._repr_html_()
    assert repr(view).splitlines()[1].startswith("1. A p.3 (1.50): text Revenue table")
    assert "B p.1" in repr(show(hits[1]))


def test_prediction_view_quotes_cited_pages_when_given_the_corpus():
    corpus = Corpus.from_documents({"3M": ["cover", "Net sales were $32,765 million."]})
    pred = Prediction(
        question="Net sales?",
        answer=["$32,765 million"],
        citations=[{"file": "3M", "page": 2}, {"file": "3M", "page": 9}],
        steps=2,
        sub_calls=3,
        input_tokens=1234,
        output_tokens=56,
        cost_usd=0.0125,
        wall_s=1.5,
    )
    plain = show(pred)._repr_html_()
    assert "$32,765 million" in plain and "3M · page 2" in plain
    assert "Net sales were" not in plain
    rich = show(pred, corpus=corpus)
    assert "Net sales were $32,765 million." in rich._repr_html_()
    text = repr(rich)
    assert "Citations: 3M p.2, 3M p.9" in text
    assert "2 root steps, 3 sub-calls, 1,234 input tokens, 56 output tokens, $0.0125" in text
    assert "[3M p.2] Net sales were $32,765 million." in text
    assert "3M p.9]" not in text  # no such page: no snippet, no crash


def test_ledger_view_totals():
    entry = dict(
        question_id="q",
        depth=0,
        model="m",
        backend="openai",
        input_tokens=100,
        output_tokens=10,
        cached_tokens=0,
        latency_s=0.1,
        cached=False,
        usage_source="provider",
        error=None,
        started_at=0.0,
        parent_id=None,
    )
    ledger = Ledger(
        [
            LedgerEntry(role="root", cost_usd=0.001, call_id="c1", **entry),
            LedgerEntry(role="sub", cost_usd=0.0005, call_id="c2", **entry),
        ]
    )
    view = show(ledger)
    assert repr(view) == (
        "Ledger: 2 calls, 200 in / 20 out tokens, $0.001500, 0 errors, 0 cache hits"
    )
    assert view._repr_html_().count("<tr>") == 3


def test_trajectory_view_walks_turns_calls_and_children(tmp_path):
    log = make_trajectory(tmp_path / "t.jsonl", "q1", "How much?", "42", 2)
    view = TrajectoryView.from_file(log)
    assert [it.iteration for it in view.iterations] == [1, 2]
    assert view.code == ["hits = search('net sales')\nprint(hits)"]
    assert [(c.kind, c.depth) for c in view.sub_calls()] == [("llm_query", 0), ("rlm_query", 0)]
    turns = [(it.iteration, c.kind) for it, c in view.trajectory.walk_sub_calls()]
    assert turns == [(1, "llm_query"), (1, "rlm_query")]
    assert [r["role"] for r in view.ledger_rows()] == ["root", "sub"]
    assert view.result.answer == ["42"]
    html = view._repr_html_()
    assert "<details open><summary>Turn 1" in html and "child run" in html
    assert "<script>window.PWNED" not in html
    assert repr(view).startswith("Trajectory: 'How much?' — 2 turns, 1 code blocks, 2 sub-calls")
    assert repr(show(view.trajectory.to_records())) == repr(view)
    assert repr(show(view.trajectory)) == repr(view)


def test_bad_inputs(tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(DatasetError, match="x.jsonl"):
        TrajectoryView.from_file(bad)
    with pytest.raises(DatasetError, match="metadata"):
        TrajectoryView([{"type": "iteration"}])
    with pytest.raises(TypeError, match="no rich view for int"):
        show(3)


_SHOW_IN_IPYTHON = """
import json
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
from rlm_docs.corpus import Corpus, Hit  # not rlm_docs.notebook: importing rlm_docs registers
from rlm_docs.engine.prediction import Prediction
from rlm_docs.governor import Ledger
from sandbox import CellOutcome

objects = {
    "corpus": Corpus.from_documents({"A <b>": ["one", "two"]}),
    "hit": Hit("A", 1, 0.5, "x"),
    "prediction": Prediction(question="q?", answer=["yes"], citations=[{"file": "A", "page": 1}]),
    "ledger": Ledger(),
    "cell": CellOutcome(stdout="", error="ZeroDivisionError: x", restarted=True, duration_s=0.1),
}
print(json.dumps({k: shell.display_formatter.format(v)[0] for k, v in objects.items()}))
"""


def test_library_objects_render_richly_in_a_fresh_ipython_shell():
    """The core types carry no display code; `import rlm_docs` inside IPython registers the
    notebook's views, so a notebook shows them without importing `rlm_docs.notebook`."""
    out = subprocess.run(
        [sys.executable, "-c", _SHOW_IN_IPYTHON], capture_output=True, text=True, check=True
    )
    shown = json.loads(out.stdout)
    corpus = shown["corpus"]["text/html"]
    assert "A &lt;b&gt;" in corpus and "2 pages" in corpus
    assert shown["corpus"]["text/plain"] == "<Corpus: 1 documents, 2 pages>"
    assert "<td>A</td>" in shown["hit"]["text/html"]
    assert shown["hit"]["text/plain"] == "A p.1 (0.50): x"
    pred = shown["prediction"]["text/html"]
    assert "<b>yes</b>" in pred and "A · page 1" in pred
    assert shown["prediction"]["text/plain"].startswith("Q: q?\nA: yes\nCitations: A p.1")
    assert "0 calls" in shown["ledger"]["text/html"]
    assert shown["ledger"]["text/plain"] == "Ledger(0 entries)"
    cell = shown["cell"]["text/html"]
    assert "ZeroDivisionError" in cell and "restarted" in cell
    assert shown["cell"]["text/plain"].startswith("ZeroDivisionError: x\n[the sandbox worker")


def test_plain_python_keeps_plain_reprs():
    """Outside IPython nothing is registered and nothing of the notebook is imported."""
    code = (
        "import sys; from rlm_docs.corpus import Hit; "
        "print(repr(Hit('A', 1, 0.5, 'x')), 'rlm_docs.notebook' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "Hit(document='A', page=1, score=0.5, snippet='x', title='') False"


def test_plain_text_views_in_ipython_are_readable():
    from IPython.lib.pretty import pretty

    from sandbox import CellOutcome

    hits = [Hit("3M_2018_10K", 56, 12.5, "Net   sales\n32,765"), Hit("B", 1, 0.25, "x")]
    assert pretty(hits) == "[3M_2018_10K p.56 (12.50): Net sales 32,765, B p.1 (0.25): x]"
    pred = Prediction(
        question="Net sales?", answer=["32,765"], citations=[{"file": "3M", "page": 2}]
    )
    text = pretty(pred)
    assert text.startswith("Q: Net sales?") and "Citations: 3M p.2" in text
    assert "Prediction(" in repr(pred)  # the debugging repr is unchanged
    cell = CellOutcome(stdout="42\n", error="NameError: x", restarted=True, duration_s=0.1)
    assert (
        pretty(cell) == "42\nNameError: x\n[the sandbox worker was restarted: variables are gone]"
    )
    quiet = CellOutcome(stdout="", error=None, restarted=False, duration_s=0.25)
    assert pretty(quiet) == "(no output, 0.250 s)"
