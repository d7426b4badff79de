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
