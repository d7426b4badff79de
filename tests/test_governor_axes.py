"""Every budget axis stops exactly at its limit, also under concurrency."""

import pickle
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import rlm_docs.governor.governor as governor_module
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, BudgetExceeded, Governor
from rlm_docs.models import ScriptedClient
from rlm_docs.tokens import count_message_tokens

MSGS = [{"role": "user", "content": "Find the 2022 operating margin."}]
T = count_message_tokens(MSGS)
LONG = " ".join(f"token{i}" for i in range(300))


def endless(text: str = "ok", model: str = "scripted") -> ScriptedClient:
    return ScriptedClient([lambda m: text] * 10_000, model=model)


def refused(gov: Governor, client, role: str = "sub", **kw) -> BudgetExceeded:
    with pytest.raises(BudgetExceeded) as info:
        gov.call(client, MSGS, role=role, **kw)
    return info.value


def test_steps_stop_exactly_at_limit() -> None:
    gov = Governor(Budget(max_steps=3))
    for _ in range(3):
        assert gov.exhausted() is None
        gov.step()
    assert gov.exhausted() == "steps"
    with pytest.raises(BudgetExceeded, match="root-step budget exhausted: 3/3 used"):
        gov.step()
    assert gov.totals()["steps"] == 3


def test_sub_calls_stop_exactly_at_limit_and_roots_do_not_count() -> None:
    client = endless()
    gov = Governor(Budget(max_sub_calls=2))
    gov.call(client, MSGS, role="root")
    gov.call(client, MSGS, role="sub")
    gov.call(client, MSGS, role="sub")
    err = refused(gov, client)
    assert str(err) == "sub-call budget exhausted: 2/2 used; answer with what you have"
    assert (err.axis, err.limit, err.used) == ("sub_calls", 2, 2)
    gov.call(client, MSGS, role="root")  # the root may still think and answer
    assert len(client.calls) == 4
    assert gov.exhausted() == "sub_calls"


def test_input_tokens_stop_before_the_call_that_would_cross() -> None:
    client = endless()
    gov = Governor(Budget(max_input_tokens=3 * T + T // 2))
    for _ in range(3):
        gov.call(client, MSGS, role="sub")
    err = refused(gov, client)
    assert err.axis == "input_tokens" and err.needed == T
    assert len(client.calls) == 3  # refused before reaching the model
    assert gov.totals()["input_tokens"] == 3 * T


def test_output_tokens_cap_max_tokens_and_stop_at_limit() -> None:
    client = endless(LONG)
    gov = Governor(Budget(max_output_tokens=10))
    outs = [gov.call(client, MSGS, role="sub", max_tokens=4).usage.output_tokens for _ in range(3)]
    assert outs == [4, 4, 2]
    assert refused(gov, client).axis == "output_tokens"
    assert gov.totals()["output_tokens"] == 10


def test_dollars_never_exceed_limit() -> None:
    client = endless(LONG, model="gpt-5-mini")
    limit = 0.0005
    gov = Governor(Budget(max_cost_usd=limit, max_sub_calls=None))
    made = 0
    with pytest.raises(BudgetExceeded) as info:
        while True:
            gov.call(client, MSGS, role="sub")
            made += 1
    assert info.value.axis == "cost_usd"
    spent = gov.totals()["cost_usd"]
    assert made > 0 and spent <= limit
    # the refusal is honest: not even the input plus one output token of the next call fit
    next_min = (T * 0.25 + 1 * 2.0) / 1e6
    assert spent + next_min > limit
    assert gov.exhausted() in ("cost_usd", None)


def test_dollar_budget_with_unknown_price_refuses_clearly() -> None:
    gov = Governor(Budget(max_cost_usd=1.0))
    with pytest.raises(ConfigError, match="dollar budget cannot be enforced"):
        gov.child(0.5).check_client(endless(model="mystery"))
    assert gov.check_client(endless(model="gpt-5-mini")) is not None
    assert Governor().check_client(endless(model="mystery")) is None
    with pytest.raises(ConfigError, match=r"no price known for 'mystery'.*RLM_DOCS_PRICES"):
        gov.call(endless(model="mystery"), MSGS, role="sub")


def test_wall_time_stops_further_calls() -> None:
    slow = ScriptedClient([lambda m: time.sleep(0.15) or "slow"] * 5)
    gov = Governor(Budget(max_wall_s=0.1))
    gov.call(slow, MSGS, role="root")
    err = refused(gov, slow, role="root")
    assert err.axis == "wall_s" and "wall-time budget exhausted" in str(err)
    assert gov.exhausted() == "wall_s"


def test_depth_limit() -> None:
    gov = Governor(Budget(max_depth=1))
    child = gov.child(0.5)
    assert child.depth == 1
    with pytest.raises(BudgetExceeded, match="recursion-depth budget exhausted: 2/1"):
        child.child(0.5)
    with pytest.raises(BudgetExceeded):
        gov.call(endless(), MSGS, role="sub", depth=2)


def test_concurrency_is_bounded_by_semaphore() -> None:
    active, peak = 0, 0
    lock = threading.Lock()

    def reply(messages: list[dict]) -> str:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1
        return "done"

    client = ScriptedClient([reply] * 24)
    gov = Governor(Budget(max_concurrency=3, max_sub_calls=None))
    with ThreadPoolExecutor(12) as pool:
        list(pool.map(lambda _: gov.call(client, MSGS, role="sub"), range(24)))
    assert peak == 3


@pytest.mark.parametrize(
    ("budget", "axis"),
    [
        (Budget(max_sub_calls=10, max_concurrency=16), "sub_calls"),
        (Budget(max_input_tokens=10 * T, max_concurrency=16), "input_tokens"),
        (Budget(max_output_tokens=10 * 5, max_concurrency=16), "output_tokens"),
    ],
)
def test_concurrent_callers_never_overshoot(budget: Budget, axis: str) -> None:
    def reply(messages: list[dict]) -> str:
        time.sleep(0.005)
        return LONG

    client = ScriptedClient([reply] * 64)
    gov = Governor(budget)
    barrier = threading.Barrier(32)

    def attempt(_: int) -> str:
        barrier.wait()
        try:
            gov.call(client, MSGS, role="sub", max_tokens=5)
            return "ok"
        except BudgetExceeded as exc:
            return exc.axis

    with ThreadPoolExecutor(32) as pool:
        outcomes = list(pool.map(attempt, range(32)))
    assert outcomes.count("ok") == 10
    assert set(outcomes) == {"ok", axis}
    totals = gov.totals()
    assert totals["sub_calls"] == 10 and totals["input_tokens"] == 10 * T
    assert totals["output_tokens"] == 50


def test_failed_call_is_recorded_reraised_and_frees_its_reservation() -> None:
    client = ScriptedClient([RuntimeError("provider down"), "fine"])
    gov = Governor(Budget(max_sub_calls=1, max_input_tokens=T))
    with pytest.raises(RuntimeError, match="provider down"):
        gov.call(client, MSGS, role="sub")
    assert gov.call(client, MSGS, role="sub").text == "fine"
    failed, ok = gov.ledger.entries
    assert failed.error == "RuntimeError: provider down" and failed.input_tokens == 0
    assert ok.error is None and gov.totals()["sub_calls"] == 1


def test_no_call_passes_a_hard_limit_and_refusal_comes_before_tokenizing(monkeypatch) -> None:
    client = endless()
    gov = Governor(Budget(max_input_tokens=T))
    gov.call(client, MSGS, role="root")
    assert gov.exhausted() == "input_tokens"
    counted: list[int] = []
    real = governor_module.count_message_tokens
    monkeypatch.setattr(
        governor_module, "count_message_tokens", lambda m: counted.append(1) or real(m)
    )
    assert refused(gov, client, role="root").axis == "input_tokens"
    assert counted == [] and len(client.calls) == 1 and gov.totals()["input_tokens"] == T


def test_notice_appears_past_soft_fraction() -> None:
    client = endless()
    gov = Governor(Budget(max_steps=10, max_input_tokens=5 * T))
    gov.step()
    for _ in range(3):
        gov.call(client, MSGS, role="root")
    assert gov.notice() is None  # 60%
    gov.call(client, MSGS, role="root")
    assert gov.notice() == (
        f"Budget notice: 80% of input tokens used ({4 * T:,}/{5 * T:,}); 9 root steps left."
    )


def test_notice_for_steps() -> None:
    gov = Governor(Budget(max_steps=5))
    for _ in range(4):
        gov.step()
    assert gov.notice() == "Budget notice: 80% of root steps used (4/5); 1 root step left."


def test_budget_exceeded_pickles_for_the_sandbox() -> None:
    err = BudgetExceeded("sub_calls", 100, 100)
    copy = pickle.loads(pickle.dumps(err))
    assert str(copy) == "sub-call budget exhausted: 100/100 used; answer with what you have"
    assert copy.axis == "sub_calls"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_steps": -1}, "max_steps"),
        ({"max_sub_calls": 2.5}, "max_sub_calls"),
        ({"max_cost_usd": "1"}, "max_cost_usd"),
        ({"max_concurrency": 0}, "max_concurrency"),
        ({"soft_fraction": 1.5}, "soft_fraction"),
        ({"max_depth": None}, "max_depth"),
        ({"max_wall_s": True}, "max_wall_s"),
    ],
)
def test_budget_validation_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=f"budget {field}"):
        Budget(**kwargs)


def test_bad_role_is_config_error() -> None:
    with pytest.raises(ConfigError, match="role 'boss'"):
        Governor().call(endless(), MSGS, role="boss")


def test_child_gets_a_share_of_what_is_left_on_every_axis() -> None:
    client = ScriptedClient(
        [{"text": "x", "usage": {"input_tokens": 400, "output_tokens": 100}}], model="gpt-4.1"
    )
    gov = Governor(
        Budget(
            max_steps=10,
            max_sub_calls=9,
            max_input_tokens=1000,
            max_output_tokens=300,
            max_cost_usd=0.01,
            max_wall_s=100.0,
            max_depth=3,
        )
    )
    gov.step()
    gov.call(client, MSGS, role="sub")  # $ 400*2e-6 + 100*8e-6 = 0.0016
    kid = gov.child(0.5).budget
    assert (kid.max_steps, kid.max_sub_calls) == (4, 4)
    assert (kid.max_input_tokens, kid.max_output_tokens) == (300, 100)
    assert kid.max_cost_usd == pytest.approx(0.0042)
    assert 49.0 < kid.max_wall_s <= 50.0
    assert (kid.max_depth, kid.max_concurrency) == (3, 8)
    with pytest.raises(ConfigError, match="share"):
        gov.child(0)


def test_steps_count_across_the_tree_and_a_child_without_a_step_is_refused_at_birth() -> None:
    gov = Governor(Budget(max_steps=5, max_depth=2))
    gov.step()
    kid = gov.child(0.5)
    assert kid.budget.max_steps == 2
    kid.step()
    kid.step()
    assert gov.steps_left() == 2 and kid.steps_left() == 0
    with pytest.raises(BudgetExceeded, match="root-step budget exhausted: 2/2"):
        kid.step()
    gov.step()  # 4 of 5 used, counting the child's two
    err = pytest.raises(BudgetExceeded, gov.child, 0.5).value
    assert err.axis == "steps" and "a child run needs 1 more" in str(err)
    assert gov.totals()["steps"] == 4


def test_a_child_with_no_money_or_tokens_left_is_refused_at_birth() -> None:
    gov = Governor(Budget(max_cost_usd=1e-9))  # one nano-dollar: half of it rounds to nothing
    assert pytest.raises(BudgetExceeded, gov.child, 0.5).value.axis == "cost_usd"
    gov = Governor(Budget(max_input_tokens=1))
    assert pytest.raises(BudgetExceeded, gov.child, 0.5).value.axis == "input_tokens"


def test_batch_larger_than_what_is_left_is_refused_in_constant_time() -> None:
    gov = Governor(Budget(max_sub_calls=3))
    gov.call(endless(), MSGS, role="sub")
    err = pytest.raises(BudgetExceeded, gov.check_calls, "sub", 1_000_000).value
    assert str(err) == (
        "sub-call budget exhausted: 1/3 used (a batch of 1,000,000 prompts needs "
        "1,000,000 more); answer with what you have"
    )
    gov.check_calls("sub", 2)  # exactly what is left is fine


def test_prompt_over_the_cap_is_refused_before_tokenizing(monkeypatch) -> None:
    from rlm_docs.governor.prompt_cap import MAX_PROMPT_CHARS, PromptTooLarge

    counted: list[int] = []
    real = governor_module.count_message_tokens
    monkeypatch.setattr(
        governor_module, "count_message_tokens", lambda m: counted.append(1) or real(m)
    )
    client = endless()
    gov = Governor(Budget())
    huge = [{"role": "user", "content": "x" * (MAX_PROMPT_CHARS + 1)}]
    with pytest.raises(PromptTooLarge, match=r"2,000,001 characters > the per-call limit"):
        gov.call(client, huge, role="sub")
    assert counted == [] and client.calls == []
