"""Report/summary wording follows the run: workload scorers, unchecked comprehension errors,
human token ticks, no all-unknown breakdowns, Doc F1 next to Page F1."""

from pathlib import Path

import matplotlib.pyplot as plt

from rlm_docs.eval import plots
from rlm_docs.eval.aggregate import (
    citation_f1_text,
    headline_accuracy,
    scoring_method,
    summarize,
)
from rlm_docs.eval.report import ReportedRun, _accuracy_how, _errors_note, _sections
from rlm_docs.eval.taxonomy import error_type, unchecked_comprehension

PAGE_EVIDENCE = [{"document": "a.pdf", "page": 2}]
DOC_EVIDENCE = [{"document": "a.pdf", "page": None}]


def _row(i, stage, score, evidence=(), error=None, **extra):
    return {
        "id": f"q{i}",
        "stage": stage,
        "score": score,
        "correct": score >= 0.5,
        "evidence": list(evidence),
        "error_type": error,
        "page_f1": None,
        "doc_f1": None,
        "status": "ok",
        "domain": "",
        **extra,
    }


def _run(rows, judge=None):
    manifest = {"system": "rlm", "model": "offline", "judge": judge, "scoring_version": 2}
    return ReportedRun("rlm / offline", Path("."), manifest, rows, summarize(rows, n_boot=50))


def test_scoring_method_names_the_scorers_used_and_mixed_runs():
    assert scoring_method({"anls": 2, "numeric": 1}) == "numeric + ANLS* ≥ 0.5 stages, no judge"
    oolong = scoring_method({"oolong": 4, "empty": 1})
    assert oolong == (
        "oolong scorer: exact labels, 0.75^|error| partial credit for counts; accuracy = mean score"
    )
    assert "ANLS" not in oolong
    both = scoring_method({"needle": 2, "oolong-pairs": 1})
    assert both.startswith("needle scorer") and "oolong-pairs scorer" in both
    mixed = scoring_method({"oolong": 3, "exact": 1, "anls": 1})
    assert mixed.startswith("mixed: oolong scorer") and "(3 q)" in mixed and "(2 q)" in mixed
    assert "ANLS* ≥ 0.5" in mixed


def test_eval_and_report_take_the_method_from_the_rows_stages():
    rows = [_row(1, "oolong", 0.75), _row(2, "oolong", 0.0, error="comprehension")]
    s = summarize(rows, n_boot=50)
    assert s["stages"] == {"oolong": 2}
    _, how = headline_accuracy(s)
    assert how.startswith("oolong scorer:") and how.endswith("; bootstrap CI") and "ANLS" not in how
    note = _accuracy_how(_run(rows))
    assert (
        note.startswith("- rlm / offline: oolong scorer: exact labels") and "no judge" not in note
    )
    assert note.count("accuracy =") == 1


def test_taxonomy_keeps_madqa_classes_and_flags_unchecked_comprehension():
    cited = [{"document": "a.pdf", "page": 2}]
    assert error_type(["x"], cited, PAGE_EVIDENCE, False) == "comprehension"
    assert error_type(["x"], [{"document": "a.pdf", "page": 9}], PAGE_EVIDENCE, False) == (
        "navigation"
    )
    assert error_type(["x"], [{"document": "b.pdf", "page": 2}], PAGE_EVIDENCE, False) == (
        "retrieval"
    )
    checked = _row(1, "anls", 0.0, PAGE_EVIDENCE, "comprehension")
    doc_level = _row(2, "anls", 0.0, DOC_EVIDENCE, "comprehension")
    workload = _row(3, "oolong", 0.0, (), "comprehension")
    assert not unchecked_comprehension(checked)
    assert unchecked_comprehension(doc_level) and unchecked_comprehension(workload)
    assert not unchecked_comprehension(_row(4, "anls", 0.0, (), "refusal"))
    assert summarize([checked, doc_level, workload], n_boot=50)["errors_unchecked"] == 2


def test_error_legend_says_when_c_had_no_page_evidence_to_check():
    madqa = _run([_row(1, "anls", 0.0, PAGE_EVIDENCE, "comprehension")])
    assert "C = comprehension (gold page cited, wrong answer)," in _errors_note([madqa])
    workload = _run([_row(1, "oolong", 0.0, (), "comprehension")])
    note = _errors_note([madqa, workload])
    assert "or no page evidence to check" in note and "such C: rlm / offline: 0" in note
    assert "Ref = refusal/no answer;" in note and ": 1)" in note


def test_breakdowns_with_no_value_are_left_out():
    rows = [_row(1, "oolong", 1.0, hop_type="none"), _row(2, "oolong", 0.0, hop_type="none")]
    titles = [t for t, _, _ in _sections([_run(rows)], "Comparison")]
    assert not any("by domain" in t for t in titles)
    assert not any("by question type" in t for t in titles)  # field absent: "null" only
    assert any("by hop type" in t for t in titles)  # "none" is a value
    rows[0]["domain"] = "finance"
    titles = [t for t, _, _ in _sections([_run(rows)], "Comparison")]
    assert any("by domain" in t for t in titles)


def test_citation_f1_text_shows_doc_f1_next_to_page_f1():
    rows = [
        _row(1, "anls", 1.0, DOC_EVIDENCE, doc_f1=1.0),
        _row(2, "anls", 0.0, DOC_EVIDENCE, doc_f1=0.5),
    ]
    text = citation_f1_text(summarize(rows, n_boot=50))
    assert text == "page F1 n/a (n=0 with page evidence), doc F1 0.750"
    none = citation_f1_text(summarize([_row(1, "oolong", 1.0)], n_boot=50))
    assert none == "page F1 n/a (n=0 with page evidence), doc F1 n/a (n=0 with document evidence)"


def test_human_count_tick_labels():
    got = [plots.human_count(v) for v in (0, 950, 1500, 16000, 100000, 121900, 768000, 1e6, 2.5e6)]
    assert got == ["0", "950", "1.5k", "16k", "100k", "121.9k", "768k", "1M", "2.5M"]


def _tick_labels(ax):
    ax.figure.canvas.draw()
    return [t.get_text() for t in ax.get_xticklabels() if t.get_text()]


def test_wide_token_spread_gets_a_log_axis_with_human_labels():
    fig, ax = plt.subplots()
    ax.plot([16000, 768000], [0.5, 0.6])
    plots._token_axis(ax, [16000, 768000], "tokens")
    labels = _tick_labels(ax)
    assert ax.get_xscale() == "log" and "100k" in labels and "20k" in labels
    assert all("e" not in lab and "+" not in lab for lab in labels)
    fig2, ax2 = plt.subplots()
    ax2.plot([121900, 121950], [0.5, 0.6])
    plots._token_axis(ax2, [121900, 121950], "tokens")
    assert ax2.get_xscale() == "linear"
    assert ax2.xaxis.get_offset_text().get_text() == ""
    assert all(lab.endswith("k") or lab == "0" for lab in _tick_labels(ax2))
    plt.close(fig)
    plt.close(fig2)
