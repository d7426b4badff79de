import json

import pytest

from rlm_docs.errors import DatasetError
from rlm_docs.eval.dataset import load_questions
from tests.fixtures.eval.support import QUESTIONS


def test_fixture_loads_with_hop_types_and_integer_pages():
    qs = load_questions(QUESTIONS)
    assert [q.id for q in qs] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert [q.hop_type for q in qs] == [
        "single",
        "single",
        "cross_page",
        "cross_doc",
        "single",
        "single",
    ]
    assert qs[4].evidence == [{"document": "globex_2021_10k", "page": 3}]
    assert len(load_questions(QUESTIONS, limit=2)) == 2


GOOD = {"id": "a", "question": "Q?", "answer_variants": [["x"]], "evidence": []}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": ""}, "field 'id'"),
        ({"answer_variants": "x"}, "field 'answer_variants'"),
        ({"answer_variants": [[1]]}, "field 'answer_variants[0]'"),
        ({"evidence": [{"document": "d", "page": "two"}]}, "evidence[0]'.page"),
        ({"evidence": [{"document": "d", "page": 0}]}, "1-based"),
        ({"question": None}, "field 'question'"),
    ],
)
def test_bad_record_names_line_and_field(tmp_path, change, message):
    path = tmp_path / "qs.jsonl"
    lines = [json.dumps(GOOD), json.dumps({**GOOD, "id": "b", **change})]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError) as err:
        load_questions(path)
    assert f"{path}:2:" in str(err.value) and message in str(err.value)


def test_duplicate_ids_and_bad_json(tmp_path):
    path = tmp_path / "qs.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + json.dumps(GOOD) + "\n")
    with pytest.raises(DatasetError, match="repeats line 1"):
        load_questions(path)
    path.write_text("{not json\n")
    with pytest.raises(DatasetError, match=r"qs.jsonl:1: invalid JSON"):
        load_questions(path)
    with pytest.raises(DatasetError, match="not found"):
        load_questions(tmp_path / "absent.jsonl")


FINANCEBENCH = QUESTIONS.resolve().parents[3].parent / "shared" / "datasets" / "financebench"


@pytest.mark.financebench
@pytest.mark.skipif(not FINANCEBENCH.is_dir(), reason="FinanceBench data set not present")
def test_financebench_dev_questions_load():
    qs = load_questions(FINANCEBENCH / "questions.dev.jsonl")
    assert len(qs) == 67 and len({q.id for q in qs}) == 67
    assert sum(q.hop_type != "single" for q in qs) == 17
    assert all(isinstance(e["page"], int) for q in qs for e in q.evidence)


def _load_one(tmp_path, **fields):
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({**GOOD, **fields}) + "\n")
    return load_questions(path)[0]


def test_hops_decide_cross_page_when_evidence_lists_alternatives(tmp_path):
    two_pages = [{"document": "d", "page": 3}, {"document": "d", "page": 9}]
    assert _load_one(tmp_path, evidence=two_pages).hop_type == "cross_page"
    assert _load_one(tmp_path, evidence=two_pages, hops=1).hop_type == "single"
    assert _load_one(tmp_path, evidence=two_pages, hops=2).hop_type == "cross_page"
    two_docs = [{"document": "d", "page": 3}, {"document": "e", "page": 3}]
    assert _load_one(tmp_path, evidence=two_docs, hops=1).hop_type == "single"
    assert _load_one(tmp_path, evidence=two_docs, hops=2).hop_type == "cross_doc"
    assert _load_one(tmp_path, evidence=[]).hop_type == "none"
    with pytest.raises(DatasetError, match=r"one.jsonl:1: field 'hops'"):
        _load_one(tmp_path, hops=0)


def test_document_level_evidence_and_unanswerable_gold(tmp_path):
    q = _load_one(tmp_path, evidence=[{"document": "2023 Q1 NVDA", "page": None}])
    assert q.evidence == [{"document": "2023 Q1 NVDA", "page": None}]
    assert not q.page_evidence and q.hop_type == "single"
    assert _load_one(tmp_path, evidence=[{"document": "d", "page": 2}]).page_evidence
    assert _load_one(tmp_path, answer_variants=[["Not answerable"]]).unanswerable
    assert not _load_one(tmp_path, answer_variants=[["Not answerable"], ["7"]]).unanswerable


def test_unknown_scorer_is_refused_with_line_and_field(tmp_path):
    with pytest.raises(DatasetError, match=r"one.jsonl:1: field 'scorer' must be one of"):
        _load_one(tmp_path, scorer="nope")


def test_a_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(GOOD) + "\n", encoding="utf-8-sig")  # as Windows editors save
    assert path.read_bytes().startswith(b"\xef\xbb\xbf")
    assert [q.id for q in load_questions(path)] == ["a"]


def test_json_errors_are_whole_phrases(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(GOOD) + '\n{"id": "b", "question": "unfinished\n', encoding="utf-8")
    with pytest.raises(DatasetError) as err:
        load_questions(path)
    assert str(err.value) == (f"{path}:2: invalid JSON (Unterminated string starting at column 25)")
