"""Real-set shapes through `ingest`, `eval --where` and `report --by`, on small fixtures written
here: document names with spaces (KG-RAG's `2023 Q3 AAPL`), a scanned document whose text is
only form feeds (MMLongBench-Doc), and the question fields those sets carry."""

import json

import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.errors import ConfigError
from rlm_docs.eval.dataset import parse_question
from rlm_docs.eval.filters import filter_questions, matches, parse_value, question_fields

PAGES = {
    "2023 Q3 ACME": [
        "ACME Corp quarterly report, third quarter 2023.",
        "Net sales were $812 million.",
    ],
    "2023 Q2 ACME": [
        "ACME Corp quarterly report, second quarter 2023.",
        "Net sales were $790 million.",
    ],
}
QUESTIONS = [
    ("q1", "What were ACME net sales in the third quarter of 2023?", "2023 Q3 ACME", 2, True),
    ("q2", "What were ACME net sales in the second quarter of 2023?", "2023 Q2 ACME", 2, True),
    ("q3", "What does the chart on slide 2 of the scanned deck show?", "deck_95", 2, False),
]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("sets")
    (root / "text").mkdir()
    for name, pages in PAGES.items():
        (root / "text" / f"{name}.txt").write_text("\f".join(pages) + "\f")
    (root / "text" / "deck_95.txt").write_text("\f\f\f")  # scanned: three pages, no text
    with (root / "questions.jsonl").open("w") as fh:
        for qid, text, doc, page, text_answerable in QUESTIONS:
            record = {
                "id": qid,
                "question": text,
                "answer_variants": [["x"]],
                "evidence": [{"document": doc, "page": page}],
                "question_type": "single-page",
                "doc_type": "Slides" if doc == "deck_95" else "Financial report",
                "text_answerable": text_answerable,
                "evidence_pages_have_text": text_answerable,
                "evidence_sources": ["Chart"],  # a list: not a filterable field
            }
            fh.write(json.dumps(record) + "\n")
    return root


def test_ingest_keeps_spaced_names_and_a_scanned_document_with_a_warning(data, tmp_path, capsys):
    assert main(["ingest", str(data / "text"), "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "deck_95.txt: all 3 page(s) are empty" in err and "scanned document" in err
    corpus = Corpus.load(tmp_path / "s")
    assert sorted(corpus.names) == ["2023 Q2 ACME", "2023 Q3 ACME", "deck_95"]
    assert corpus.num_pages("deck_95") == 3 and corpus.page("deck_95", 3) == ""
    assert corpus.page("2023 Q3 ACME", 2) == "Net sales were $812 million."
    assert corpus.resolve("2023 Q3 ACME.pdf") == "2023 Q3 ACME"  # as KG-RAG answers cite them
    assert corpus.search("ACME net sales third quarter", k=1)[0].document == "2023 Q3 ACME"


def test_a_file_without_form_feeds_or_text_is_still_an_error(tmp_path, capsys):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "blank.txt").write_text("  \n")
    assert main(["ingest", str(tmp_path / "src"), "--out", str(tmp_path / "s")]) == 2
    assert "blank.txt: empty file" in capsys.readouterr().err


def test_eval_where_and_report_by_question_fields(rlm_home, data, tmp_path, capsys):
    assert main(["ingest", str(data / "text"), "--out", str(tmp_path / "s")]) == 0
    base = ["eval", "--dataset", str(data / "questions.jsonl"), "--corpus", str(tmp_path / "s")]
    base += ["--system", "static-rag", "--model", "offline", "--no-progress"]
    assert main([*base, "--out", str(tmp_path / "all")]) == 0
    assert main([*base, "--out", str(tmp_path / "text"), "--where", "text_answerable=true"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "text" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["q1", "q2"]
    assert all(r["fields"]["text_answerable"] is True for r in rows)
    assert "evidence_sources" not in rows[0]["fields"]
    manifest = json.loads((tmp_path / "text" / "run.json").read_text())
    assert manifest["where"] == ["text_answerable=true"]
    # a resume must use the same filter
    assert main([*base, "--out", str(tmp_path / "text"), "--resume"]) == 2
    assert "where" in capsys.readouterr().err
    out = tmp_path / "rep"
    assert (
        main(["report", str(tmp_path / "all"), "--out", str(out), "--by", "text_answerable"]) == 0
    )
    md = (out / "report.md").read_text()
    assert "by doc type" in md and "| Slides | 1 |" in md and "| Financial report | 2 |" in md
    section = md.split("by text_answerable")[1].split("##")[0]
    assert "| true | 2 |" in section and "| false | 1 |" in section


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--where", "text_answerble=true"], "--where text_answerble: unknown question field"),
        (["--where", "text_answerable"], "expected FIELD=VALUE"),
        (["--where", "doc_type=Poster"], "no question of the data set matches"),
    ],
)
def test_bad_where_clauses_exit_2_naming_the_field(data, tmp_path, capsys, flags, message):
    code = main(
        ["eval", "--dataset", str(data / "questions.jsonl"), "--corpus", str(data / "nostore"),
         "--system", "static-rag", "--model", "offline", "--out", str(tmp_path / "r"), *flags]
    )  # fmt: skip
    assert code == 2 and message in capsys.readouterr().err


def test_report_by_an_unknown_field_is_an_error(rlm_home, data, tmp_path, capsys):
    assert main(["ingest", str(data / "text"), "--out", str(tmp_path / "s")]) == 0
    assert main(
        ["eval", "--dataset", str(data / "questions.jsonl"), "--corpus", str(tmp_path / "s"),
         "--system", "static-rag", "--model", "offline", "--out", str(tmp_path / "r"),
         "--no-progress", "--limit", "1"]
    ) == 0  # fmt: skip
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "o"), "--by", "hops"]) == 2
    assert "report --by hops: no question of these runs has that field" in capsys.readouterr().err
    assert not (tmp_path / "o" / "report.md").exists()


def test_values_are_json_scalars_and_booleans_never_equal_numbers():
    assert [parse_value(v) for v in ("true", "3", "null", "cross-page", "2.5")] == [
        True,
        3,
        None,
        "cross-page",
        2.5,
    ]
    assert matches(True, True) and not matches(1, True) and not matches(True, 1)
    assert matches("Cross-Page", "cross-page") and matches(3, 3) and matches("3", 3)
    q = parse_question(
        {"id": "a", "question": "?", "answer_variants": [["x"]], "hops": 2, "note": None}, "f:1"
    )
    fields = question_fields(q)
    assert fields["hops"] == 2 and fields["note"] is None and fields["question_type"] == ""
    assert filter_questions([q], ["hops=2"]) == [q]
    with pytest.raises(ConfigError, match="known|fields of this data set: .*hops"):
        filter_questions([q], ["hop=2"])
