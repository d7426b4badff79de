import pytest

from rlm_docs.eval.citation_f1 import doc_f1, page_f1
from rlm_docs.questions import doc_key


def test_string_page_and_case_different_stem_match():
    cites = [{"file": "Report.PDF", "page": "1"}]
    gold = [{"document": "report", "page": 1}]
    assert page_f1(cites, gold) == 1.0
    assert doc_f1(cites, gold) == 1.0


def test_partial_overlap_hand_computed():
    cites = [{"file": "a", "page": 1}, {"file": "a", "page": 2}]
    gold = [{"document": "a", "page": 1}, {"document": "b", "page": 3}]
    # page level: 1 hit, precision 1/2, recall 1/2 -> F1 0.5
    assert page_f1(cites, gold) == pytest.approx(0.5)
    # doc level: {a} vs {a, b}: precision 1, recall 1/2 -> F1 2/3
    assert doc_f1(cites, gold) == pytest.approx(2 / 3)


def test_no_citations_scores_zero():
    gold = [{"document": "a", "page": 1}]
    assert page_f1([], gold) == 0.0
    assert doc_f1([], gold) == 0.0


def test_doc_key_keeps_dots_that_are_not_extensions():
    assert doc_key("dir/3M_2018_10K.pdf") == "3m_2018_10k"
    assert doc_key("FY2.5_report") == "fy2.5_report"
