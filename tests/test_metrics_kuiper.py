import itertools
import math

import numpy as np
import pytest

from rlm_docs.eval.effort import effort_correlations, kuiper, kuiper_bootstrap, wasted_effort_ratio


def test_four_items_hand_computed():
    # sorted by effort: correct 1, 1, 0, 0; mean 0.5; curve 0.5, 1.0, 0.5, 0.0 -> K = 1
    r = kuiper([3, 1, 4, 2], [0, 1, 0, 1], permutations=0)
    assert r.curve == [0.5, 1.0, 0.5, 0.0]
    assert r.statistic == pytest.approx(1.0)
    assert r.normalized == pytest.approx(0.25)
    assert r.accuracy == 0.5


def test_range_spans_both_signs():
    # correct 0, 1, 1, 0 -> curve -0.5, 0, 0.5, 0 -> K = 0.5 - (-0.5) = 1
    assert kuiper([1, 2, 3, 4], [0, 1, 1, 0], permutations=0).statistic == pytest.approx(1.0)


def test_ties_give_the_same_value_in_every_order():
    effort = [1, 1, 1, 2]
    correct = [1, 0, 0, 1]
    values = set()
    for perm in itertools.permutations(range(4)):
        r = kuiper([effort[i] for i in perm], [correct[i] for i in perm], permutations=0)
        values.add(round(r.statistic, 12))
    # tie block at effort 1 sums to 1 - 3 * 0.5 = -0.5, then back to 0 -> K = 0.5
    assert values == {0.5}


def test_permutation_p_value_separates_signal_from_noise():
    effort = list(range(40))
    strong = kuiper(effort, [1 if e < 20 else 0 for e in effort], permutations=500)
    noise = kuiper(effort, [e % 2 for e in effort], permutations=500)
    assert strong.p_value < 0.01
    assert noise.p_value > 0.5
    assert strong.p_value >= 1 / 501


def test_degenerate_and_empty():
    r = kuiper([1, 2, 3], [1, 1, 1])
    assert r.degenerate and r.statistic == 0.0 and r.p_value == 1.0
    assert math.isnan(kuiper([], []).statistic)


def test_spearman_between_effort_measures():
    corr = effort_correlations({"steps": [1, 2, 3, 4], "tokens": [10, 30, 20, 40], "flat": [1] * 4})
    # ranks 1,2,3,4 vs 1,3,2,4: d^2 = 2 -> rho = 1 - 6*2/(4*15) = 0.8
    assert corr[("steps", "tokens")] == pytest.approx(0.8)
    assert math.isnan(corr[("steps", "flat")])


def test_vectorised_bootstrap_matches_per_resample_kuiper():
    effort = [1, 1, 2, 3, 3, 3, 5, 8, 8, 9]
    correct = [1, 0, 1, 1, 0, 0, 1, 0, 0, 1]
    low, high = kuiper_bootstrap(effort, correct, n_boot=200, seed=7)
    idx = np.random.default_rng(7).integers(0, 10, size=(200, 10))
    e, y = np.array(effort), np.array(correct)
    values = [kuiper(e[i], y[i], permutations=0).normalized for i in idx]
    assert (low, high) == pytest.approx(tuple(np.quantile(values, [0.025, 0.975])))


def test_wasted_effort_ratio_by_hand():
    # correct: steps 2 and 4 (mean 3); wrong: steps 6 and 9 (mean 7.5); the missing one (0 steps)
    # is left out as in MADQA's harness.
    effort = [2, 6, 4, 9, 0]
    correct = [1, 0, 1, 0, 0]
    assert wasted_effort_ratio(effort, correct) == pytest.approx(7.5 / 3)
    assert math.isnan(wasted_effort_ratio([1, 2], [1, 1]))  # no wrong answers
    assert math.isnan(wasted_effort_ratio([], []))


def test_package_exports_the_functions_not_the_module():
    import rlm_docs.eval as ev
    from rlm_docs.eval import kuiper as exported

    assert callable(exported) and exported is kuiper
    assert ev.wasted_effort_ratio is wasted_effort_ratio
