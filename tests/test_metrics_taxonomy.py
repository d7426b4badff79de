import pytest

from rlm_docs.eval.taxonomy import error_type

GOLD = [{"document": "acme_10k", "page": 5}]


@pytest.mark.parametrize(
    ("answer", "cites", "kind"),
    [
        ([], [{"file": "acme_10k", "page": 5}], "refusal"),
        (["The information is not found in the documents"], [], "refusal"),
        (["42"], [{"file": "other", "page": 5}], "retrieval"),
        (["42"], [], "retrieval"),
        (["42"], [{"file": "ACME_10K.pdf", "page": 9}], "navigation"),
        (["42"], [{"file": "acme_10k", "page": "5"}], "comprehension"),
    ],
)
def test_error_types(answer, cites, kind):
    assert error_type(answer, cites, GOLD, correct=False) == kind


def test_correct_answer_has_no_error_type():
    assert error_type(["42"], [], GOLD, correct=True) is None
