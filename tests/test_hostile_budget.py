"""Hostile model code against the cost governor, through the real engine and sandbox.

The cases: `rlm_query` in a loop under tight count limits and under a dollar limit,
batches far larger than what is left, and the forced final turn, which must respect every
limit (no call may push spend, tokens or counts past the budget).
"""

from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.engine.trajectory import load_trajectory
from rlm_docs.governor import Budget
from rlm_docs.models import ScriptedClient

DOCS = {"memo": ["The widget budget for 2024 was $12 million.", "Nothing else of note."]}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("corpus") / "store")


def repl(code: str) -> str:
    return f"```repl\n{code}\n```"


def spawn_loop(n: int) -> str:
    return repl(
        "refused = 0\n"
        f"for i in range({n}):\n"
        "    try:\n"
        "        rlm_query('sub question ' + str(i))\n"
        "    except BudgetExceeded:\n"
        "        refused += 1\n"
        "print('refused', refused)"
    )


def child_or_loop(n: int):
    """Root replies: the spawning loop for the top-level run, an answer for child runs."""

    def reply(messages: list[dict]) -> str:
        if "sub question" in messages[0]["content"]:
            return "FINAL(child answer)"
        return spawn_loop(n)

    return reply


def test_rlm_query_loop_cannot_pass_step_and_call_counts(store, tmp_path) -> None:
    warm = RLM(store, model=ScriptedClient(["FINAL(x)", "{}"]), log_dir=None)
    warm.ask("warm the sandbox zygote?")
    root = ScriptedClient([child_or_loop(200)] * 1000)
    budget = Budget(max_steps=2, max_sub_calls=1, max_wall_s=1)
    rlm = RLM(store, model=root, sub_model=ScriptedClient([]), budget=budget, log_dir=tmp_path)
    pred = rlm.ask("How much was the widget budget?")
    # 2 steps + the one forced answering turn of the top-level run (+ the answer's extraction
    # call, role `extract`); no child ever ran.
    roles = [e.role for e in rlm.ledger.entries]
    assert roles.count("root") <= 3 and len(roles) <= 4
    assert all(e.depth == 0 for e in rlm.ledger.entries)
    assert pred.sub_calls <= 1 and pred.steps <= 3
    outputs = [block.result.stdout for block in load_trajectory(pred.trajectory).code_blocks]
    assert all(out.strip() == "refused 200" for out in outputs)


def test_rlm_query_loop_never_spends_past_the_dollar_limit(store, tmp_path) -> None:
    limit = 0.01
    root = ScriptedClient([child_or_loop(100)] * 1000, model="gpt-5-mini")
    rlm = RLM(store, model=root, budget=Budget(max_cost_usd=limit), log_dir=tmp_path)
    pred = rlm.ask("How much was the widget budget?")
    spent = sum(e.cost_usd for e in rlm.ledger.entries)
    assert pred.cost_usd == pytest.approx(spent, abs=1e-12)
    assert 0 < spent <= limit
    assert any(e.depth == 1 for e in rlm.ledger.entries)  # some children could afford calls
    assert pred.stop_reason in ("forced", "budget")


def test_forced_turn_is_capped_by_the_output_tokens_left(store, tmp_path) -> None:
    long_text = "FINAL(" + " ".join(f"word{i}" for i in range(400)) + ")"
    root = ScriptedClient([repl("x = 1"), long_text, "{}"])
    budget = Budget(max_steps=1, max_output_tokens=60)
    rlm = RLM(store, model=root, budget=budget, log_dir=tmp_path)
    pred = rlm.ask("How much was the widget budget?")
    assert pred.stop_reason == "forced"
    assert pred.output_tokens <= 60  # the forced reply was cut to what was left


def test_forced_turn_is_refused_when_no_money_is_left(store, tmp_path) -> None:
    probe = RLM(store, model=ScriptedClient([repl("x = 1"), "{}"], model="gpt-5-mini"))
    probe.ask("How much was the widget budget?", question_id="probe")
    first = probe.ledger.entries[0].cost_usd
    root = ScriptedClient([repl("x = 1"), "FINAL(too late)"], model="gpt-5-mini")
    rlm = RLM(store, model=root, budget=Budget(max_cost_usd=first * 1.2), log_dir=tmp_path)
    pred = rlm.ask("How much was the widget budget?", question_id="probe")
    assert pred.stop_reason == "budget" and len(root.calls) == 1
    assert pred.cost_usd <= first * 1.2


def test_huge_batch_is_refused_whole_before_anything_is_sent(store, tmp_path) -> None:
    sub = ScriptedClient([lambda m: "ok"] * 10)
    code = (
        "llm_query('one')\n"
        "try:\n    llm_query_batched([''] * 1000000)\nexcept BudgetExceeded as e:\n    print(e)\n"
        "print(llm_query_batched(['a', 'b']))"
    )
    root = ScriptedClient([repl(code), "FINAL(done)", "{}"])
    rlm = RLM(store, model=root, sub_model=sub, budget=Budget(max_sub_calls=3), log_dir=tmp_path)
    pred = rlm.ask("q?")
    block = load_trajectory(pred.trajectory).iterations[0].code_blocks[0].result
    assert "a batch of 1,000,000 prompts needs 1,000,000 more" in block.stdout
    assert "['ok', 'ok']" in block.stdout
    assert len(sub.calls) == 3 and pred.sub_calls == 3
    assert len(block.sub_calls) == 3


def test_long_prompts_are_logged_as_size_hash_and_head(store, tmp_path) -> None:
    sub = ScriptedClient([lambda m: "ok"] * 2)
    code = "big = 'z' * 300000\nllm_query(big)\nllm_query('short')"
    root = ScriptedClient([repl(code), "FINAL(done)", "{}"])
    rlm = RLM(store, model=root, sub_model=sub, log_dir=tmp_path)
    pred = rlm.ask("q?")
    big, short = load_trajectory(pred.trajectory).iterations[0].sub_calls
    assert big.prompt_chars == 300_000 and len(big.prompt_sha256) == 64
    assert len(big.prompt) < 2_100 and short.prompt == "short"
    assert Path(pred.trajectory).stat().st_size < 50_000
