import pytest

from rlm_docs.eval.anls import anls_star


def test_single_string_similarity_is_one_minus_normalised_levenshtein():
    # "hallo" vs "hello": one substitution over 5 characters -> 0.8
    assert anls_star("hallo", [["hello"]]) == pytest.approx(0.8)


def test_below_threshold_scores_zero():
    # 3 edits over 4 characters -> similarity 0.25 < 0.5 -> 0
    assert anls_star("abcd", [["wxyd"]]) == 0.0


def test_case_and_whitespace_are_ignored():
    assert anls_star("  PARIS ", [["paris"]]) == 1.0


def test_lists_are_matched_regardless_of_order():
    assert anls_star(["banana", "apple"], [["apple", "banana"]]) == 1.0


def test_extra_list_item_is_penalised():
    # one perfect match, one hallucinated item -> 1 / 2
    assert anls_star(["apple", "pear"], [["apple"]]) == pytest.approx(0.5)


def test_best_variant_wins():
    assert anls_star("$8.70", [["8.7 billion"], ["$8.70"]]) == 1.0


def test_missing_or_empty_prediction_scores_zero():
    assert anls_star(None, [["x"]]) == 0.0
    assert anls_star([], [["x"]]) == 0.0
    assert anls_star(["  "], [["x"]]) == 0.0
