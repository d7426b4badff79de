"""Per-question upper bounds on calls and dollars (`rlm_docs.eval.bounds`), used by sweeps."""

import pytest

from rlm_docs.eval.bounds import calls_per_question, dollars_per_question
from rlm_docs.governor import Budget


def test_calls_follow_the_budget_axes_of_each_system():
    b = Budget(max_steps=4, max_sub_calls=10)
    assert calls_per_question("rlm", b, {}, judged=False).value == 4 + 2 + 10
    assert calls_per_question("rlm", b, {"sub_calls": False}, judged=True).value == 4 + 2 + 1
    assert calls_per_question("bm25-agent", b, {"max_iterations": 10}, False).value == 5
    assert calls_per_question("bm25-agent", b, {"max_iterations": 2}, False).value == 3
    assert calls_per_question("map-reduce", b, {}, False).value == 11
    assert calls_per_question("static-rag", b, {}, True).value == 2
    open_ended = calls_per_question("map-reduce", Budget(max_sub_calls=None), {}, False)
    assert open_ended.value is None and open_ended.why == "--max-sub-calls"
    assert calls_per_question("rlm", Budget(max_steps=None), {}, False).why == "--max-steps"


def test_dollars_take_the_tighter_limit_at_the_dearest_price():
    models = ["openai:gpt-5-mini", "openai:gpt-5"]  # $0.25/$2 and $1.25/$10 per 1M tokens
    tokens = Budget(max_input_tokens=100_000, max_output_tokens=10_000)
    assert dollars_per_question(tokens, models, None).value == pytest.approx(0.225)
    both = Budget(max_input_tokens=100_000, max_output_tokens=10_000, max_cost_usd=0.05)
    assert dollars_per_question(both, models, None).value == 0.05
    assert dollars_per_question(Budget(), ["offline"], None).value == 0
    assert dollars_per_question(Budget(), models, None).value is None
    unknown = dollars_per_question(both, ["openai:my-local-model"], None)
    assert unknown.value is None and "no price for openai:my-local-model" in unknown.why
    judged = dollars_per_question(both, models, "openai:gpt-5-mini")
    assert judged.value is None and "judge" in judged.why
