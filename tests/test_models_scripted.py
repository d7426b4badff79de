"""ScriptedClient: ordered replay, computed replies, files, exhaustion and token accounting."""

import json
import threading
from pathlib import Path

import pytest

from rlm_docs.errors import ConfigError, ModelError
from rlm_docs.models import ScriptedClient, make_client
from rlm_docs.tokens import count_message_tokens, count_tokens

MSGS = [{"role": "user", "content": "What was revenue in 2022?"}]


def test_replays_in_order_and_counts_tokens_with_tiktoken() -> None:
    client = ScriptedClient(["first reply", "second"])
    a = client.complete(MSGS)
    b = client.complete(MSGS)
    assert (a.text, b.text) == ("first reply", "second")
    assert a.usage.input_tokens == count_message_tokens(MSGS)
    assert a.usage.output_tokens == count_tokens("first reply")
    assert a.usage_source == "tiktoken"
    assert client.calls == [MSGS, MSGS]


def test_callable_entry_computes_reply_from_messages() -> None:
    client = ScriptedClient([lambda messages: messages[-1]["content"].upper()])
    assert client.complete(MSGS).text == "WHAT WAS REVENUE IN 2022?"


def test_exception_and_error_entries_raise() -> None:
    client = ScriptedClient([RuntimeError("boom"), {"error": "refused"}])
    with pytest.raises(RuntimeError, match="boom"):
        client.complete(MSGS)
    with pytest.raises(ModelError, match="refused"):
        client.complete(MSGS)


def test_dict_entry_with_usage_is_provider_accounted_and_priced() -> None:
    usage = {"input_tokens": 1_000_000, "output_tokens": 1_000_000, "cached_tokens": 0}
    client = ScriptedClient([{"text": "x", "usage": usage}], model="gpt-5-mini")
    c = client.complete(MSGS)
    assert c.usage_source == "provider"
    assert (c.usage.input_tokens, c.usage.output_tokens) == (1_000_000, 1_000_000)
    assert c.cost_usd == pytest.approx(0.25 + 2.0)
    assert c.price_known


def test_unknown_model_costs_zero_and_says_so() -> None:
    c = ScriptedClient(["hello"]).complete(MSGS)
    assert c.cost_usd == 0.0
    assert c.price_known is False


def test_exhausted_script_raises_clear_error() -> None:
    client = ScriptedClient(["only"])
    client.complete(MSGS)
    with pytest.raises(ModelError, match="script exhausted: all 1 replies used, call 2"):
        client.complete(MSGS)


def test_reply_is_cut_to_max_tokens() -> None:
    long_text = " ".join(f"word{i}" for i in range(200))
    c = ScriptedClient([long_text]).complete(MSGS, max_tokens=7)
    assert c.usage.output_tokens == 7
    assert long_text.startswith(c.text) and len(c.text) < len(long_text)


def test_concurrent_calls_each_get_a_distinct_reply() -> None:
    client = ScriptedClient([str(i) for i in range(64)])
    got: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(8):
            text = client.complete(MSGS).text
            with lock:
                got.append(text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got, key=int) == [str(i) for i in range(64)]


def test_scripted_file_json_list_and_jsonl(tmp_path: Path) -> None:
    listing = tmp_path / "replies.json"
    listing.write_text(json.dumps(["a", {"text": "b"}]))
    client = make_client(f"scripted:{listing}")
    assert [client.complete(MSGS).text for _ in range(2)] == ["a", "b"]
    assert client.spec == f"scripted:{listing}"

    lines = tmp_path / "replies.jsonl"
    lines.write_text('"one"\n\n{"text": "two"}\n')
    client = make_client(f"scripted:{lines}")
    assert [client.complete(MSGS).text for _ in range(2)] == ["one", "two"]


def test_scripted_file_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing.json: cannot read"):
        make_client(f"scripted:{tmp_path / 'missing.json'}")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('"ok"\n{broken\n')
    with pytest.raises(ConfigError, match=r"bad.jsonl: invalid JSON at line 1"):
        make_client(f"scripted:{bad}")
    wrong = tmp_path / "wrong.json"
    wrong.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="wrong.json: entry 1 must be a string or object"):
        make_client(f"scripted:{wrong}")
