"""Ledger and roll-ups: totals equal what the server counted, children counted exactly once."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from rlm_docs.errors import DatasetError
from rlm_docs.governor import Budget, Governor, Ledger
from rlm_docs.models import RetryPolicy, make_client
from rlm_docs.tokens import count_message_tokens
from tests.servers.chat import ChatServer

MSGS = [{"role": "user", "content": "Which page reports total assets?"}]


def usage(i: int, o: int, c: int = 0) -> dict:
    return {"text": "x", "usage": {"input_tokens": i, "output_tokens": o, "cached_tokens": c}}


def test_totals_equal_server_side_counts(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    lengths = iter(range(1, 10_000))
    with ChatServer(
        reply=lambda m: "answer " * next(lengths),
        prompt_tokens=lambda m: 1000 + len(str(m)),
        cached_tokens=lambda m: 128,
    ) as srv:
        client = make_client(
            f"openai:gpt-5-mini@{srv.base_url}",
            cache=False,
            retry=RetryPolicy(base_delay_s=0.001),
        )
        gov = Governor(Budget(max_depth=2), question_id="q7")
        gov.step()
        gov.call(client, MSGS, role="root")
        with ThreadPoolExecutor(8) as pool:
            list(
                pool.map(
                    lambda n: gov.call(
                        client, [{"role": "user", "content": f"chunk {n}"}], role="sub"
                    ),
                    range(16),
                )
            )
        srv.fail(429, retry_after=0.01)  # a retried call is still counted once
        kid = gov.child(0.5)
        kid.call(client, MSGS, role="root")
        kid.call(client, MSGS, role="sub")
        served = srv.served_usage()
    ledger = gov.ledger.totals()
    assert served["responses"] == ledger["calls"] == 19
    assert ledger["input_tokens"] == served["prompt_tokens"]
    assert ledger["output_tokens"] == served["completion_tokens"]
    assert ledger["cached_tokens"] == served["cached_tokens"] == 19 * 128
    fresh = served["prompt_tokens"] - served["cached_tokens"]
    exact = (
        fresh * 0.25 + served["cached_tokens"] * 0.025 + served["completion_tokens"] * 2.0
    ) / 1e6
    assert ledger["cost_usd"] == pytest.approx(exact, abs=19 * 0.5e-9)
    totals = gov.totals()
    for key in ("input_tokens", "output_tokens", "cached_tokens", "cost_usd", "calls"):
        assert totals[key] == ledger[key], key
    assert totals["sub_calls"] == 17 and totals["max_depth"] == 1
    assert max(e.attempts for e in gov.ledger.entries) == 2


def test_children_count_once_at_depth_two() -> None:
    from rlm_docs.models import ScriptedClient

    client = ScriptedClient(
        [usage(100, 10), usage(200, 20), usage(300, 30), usage(400, 40), usage(500, 50)],
        model="gpt-4o-mini",
    )
    root = Governor(Budget(max_depth=2, max_sub_calls=10), question_id="q")
    root.call(client, MSGS, role="root")  # 100/10
    child = root.child(0.5)
    assert child.budget.max_sub_calls == 5
    child.call(client, MSGS, role="sub")  # 200/20
    grandchild = child.child(0.5)
    assert grandchild.budget.max_sub_calls == 2 and grandchild.depth == 2
    grandchild.call(client, MSGS, role="root")  # 300/30
    grandchild.call(client, MSGS, role="sub")  # 400/40
    root.call(client, MSGS, role="sub")  # 500/50

    assert root.totals()["input_tokens"] == 1500
    assert child.totals()["input_tokens"] == 900
    assert grandchild.totals()["input_tokens"] == 700
    assert root.totals()["sub_calls"] == 3 and root.totals()["max_depth"] == 2
    assert root.totals()["cost_usd"] == root.ledger.totals()["cost_usd"]
    assert root.ledger.totals()["input_tokens"] == 1500  # one shared ledger, nothing twice
    by_depth = {
        d: sum(e.input_tokens for e in root.ledger.entries if e.depth == d) for d in (0, 1, 2)
    }
    assert by_depth == {0: 600, 1: 200, 2: 700}


def test_child_spending_counts_against_parent_limits() -> None:
    from rlm_docs.models import ScriptedClient

    client = ScriptedClient([usage(0, 0)] * 10)
    root = Governor(Budget(max_sub_calls=4))
    child = root.child(1.0)
    for _ in range(4):
        child.call(client, MSGS, role="sub")
    assert root.exhausted() == "sub_calls"
    with pytest.raises(Exception, match="sub-call budget exhausted: 4/4"):
        root.call(client, MSGS, role="sub")


def test_entries_link_calls_to_the_root_turn_that_made_them() -> None:
    from rlm_docs.models import ScriptedClient

    client = ScriptedClient(["r1", "s1", "kr", "ks", "r2"])
    gov = Governor(question_id="q9")
    gov.call(client, MSGS, role="root")
    gov.call(client, MSGS, role="sub")
    kid = gov.child(0.5)
    kid.call(client, MSGS, role="root")
    kid.call(client, MSGS, role="sub")
    last = gov.call(client, MSGS, role="root")
    r1, s1, kr, ks, r2 = gov.ledger.entries
    assert r1.parent_id is None and s1.parent_id == r1.call_id
    assert kr.parent_id == r1.call_id and ks.parent_id == kr.call_id
    assert r2.parent_id is None and last.call_id == r2.call_id
    assert len({e.call_id for e in gov.ledger.entries}) == 5
    assert {e.question_id for e in gov.ledger.entries} == {"q9"}
    assert gov.ledger.totals(role="sub")["calls"] == 2
    assert gov.ledger.totals(question_id="other")["calls"] == 0


def test_jsonl_round_trip(tmp_path: Path) -> None:
    from rlm_docs.models import ScriptedClient

    gov = Governor(question_id="q1")
    gov.call(ScriptedClient(["a"], model="gpt-5"), MSGS, role="judge")
    out = tmp_path / "runs" / "ledger.jsonl"
    gov.ledger.to_jsonl(out)
    again = Ledger.from_jsonl(out)
    assert again.entries == gov.ledger.entries
    assert again.totals() == gov.ledger.totals()
    assert again.entries[0].input_tokens == count_message_tokens(MSGS)


def test_bad_ledger_file_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "l.jsonl"
    bad.write_text('{"question_id": "q"}\n')
    with pytest.raises(DatasetError, match=r"l.jsonl: line 1: invalid entry"):
        Ledger.from_jsonl(bad)
    bad.write_text("\n[1]\n")
    with pytest.raises(DatasetError, match=r"line 2"):
        Ledger.from_jsonl(bad)
    with pytest.raises(DatasetError, match="cannot read"):
        Ledger.from_jsonl(tmp_path / "missing.jsonl")
