"""Price table: lookup, cached-rate charging, overrides, exact sums."""

import json
from pathlib import Path

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.models import Price, Usage, load_prices, price_of
from rlm_docs.models.prices import default_prices, sum_usd


def test_bundled_table_has_date_and_current_models() -> None:
    table = default_prices()
    assert table.date and table.currency == "USD"
    for name in ("gpt-5-mini", "gpt-5", "gpt-4.1", "mistral-large", "mistral-small"):
        assert table.lookup(name) is not None


def test_lookup_exact_then_longest_prefix() -> None:
    table = default_prices()
    assert table.lookup("gpt-5-mini") == table.models["gpt-5-mini"]
    assert table.lookup("gpt-5-mini-2025-08-07") == table.models["gpt-5-mini"]
    assert table.lookup("gpt-5-2025-08-07") == table.models["gpt-5"]
    assert table.lookup("mistral-large-latest") == table.models["mistral-large"]
    assert table.lookup("qwen3") is None


def test_cached_input_charged_at_cached_rate() -> None:
    price = Price(input=1.25, output=10.0, cached_input=0.125)
    usage = Usage(input_tokens=1_000_000, output_tokens=200_000, cached_tokens=400_000)
    # 600k fresh * 1.25 + 400k cached * 0.125 + 200k out * 10, per 1M
    assert price.cost(usage) == 0.75 + 0.05 + 2.0


def test_costs_sum_exactly_in_any_order() -> None:
    price = Price(0.15, 0.6, 0.075)
    costs = [price.cost(Usage(i * 37 + 1, i * 11, i % 5)) for i in range(500)]
    assert sum_usd(costs) == sum_usd(list(reversed(costs)))
    exact_nano = sum(round(c * 1e9) for c in costs)
    assert round(sum_usd(costs) * 1e9) == exact_nano


def test_override_file_via_env_merges_over_bundled(tmp_path: Path, monkeypatch) -> None:
    override = tmp_path / "prices.json"
    override.write_text(
        json.dumps({"date": "2030-01-01", "models": {"qwen3": {"input": 0.1, "output": 0.2}}})
    )
    monkeypatch.setenv("RLM_DOCS_PRICES", str(override))
    table = load_prices()
    assert table.date == "2030-01-01"
    assert table.lookup("qwen3") == Price(0.1, 0.2, 0.1)  # cached defaults to the input rate
    assert table.lookup("gpt-5-mini") == default_prices().models["gpt-5-mini"]


def test_override_by_argument_dict() -> None:
    table = load_prices({"models": {"gpt-5-mini": {"input": 9, "output": 9, "cached_input": 9}}})
    assert table.lookup("gpt-5-mini") == Price(9.0, 9.0, 9.0)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("not json", "not readable JSON"),
        ('{"models": []}', "expected an object with a 'models' object"),
        ('{"models": {"m": {"input": -1, "output": 1}}}', "model 'm' field 'input'"),
        ('{"models": {"m": {"input": 1}}}', "model 'm' field 'output'"),
    ],
)
def test_bad_override_file_names_file_and_field(
    tmp_path: Path, content: str, fragment: str
) -> None:
    bad = tmp_path / "p.json"
    bad.write_text(content)
    with pytest.raises(ConfigError) as info:
        load_prices(bad)
    assert str(bad) in str(info.value) and fragment in str(info.value)


def test_missing_override_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="nope.json: file not found"):
        load_prices(tmp_path / "nope.json")


def test_price_of_prefers_client_attribute_and_frees_offline() -> None:
    class Plain:
        backend, model, spec = "openai", "gpt-4o-mini", "openai:gpt-4o-mini"

    class Offline:
        backend, model, spec = "offline", "offline", "offline"

    class Priced(Plain):
        price = None

    assert price_of(Plain()) == default_prices().models["gpt-4o-mini"]
    assert price_of(Offline()) == Price(0.0, 0.0, 0.0)
    assert price_of(Priced()) is None


def test_context_windows_come_from_the_table_and_can_be_overridden(tmp_path, monkeypatch) -> None:
    from rlm_docs.models import context_window_of, make_client

    assert all(p.context_window for p in default_prices().models.values())
    assert context_window_of(make_client("offline")) == 131072
    assert (
        context_window_of(make_client("openai:gpt-4.1-mini-2025-04-14@http://127.0.0.1:9/v1"))
        == 1047576
    )
    assert context_window_of(make_client("openai:qwen3@http://127.0.0.1:9/v1")) is None

    class OwnWindow:
        backend, model, spec, context_window = "openai", "gpt-4o", "openai:gpt-4o", 5000

    assert context_window_of(OwnWindow()) == 5000
    override = tmp_path / "prices.json"
    override.write_text(
        json.dumps({"models": {"qwen3": {"input": 0, "output": 0, "context_window": 32768}}})
    )
    monkeypatch.setenv("RLM_DOCS_PRICES", str(override))
    assert context_window_of(make_client("openai:qwen3@http://127.0.0.1:9/v1")) == 32768


@pytest.mark.parametrize("bad", [0, -5, 1.5, "128k", True])
def test_a_bad_context_window_names_the_model_and_field(bad) -> None:
    with pytest.raises(ConfigError, match="model 'm' field 'context_window'"):
        load_prices({"models": {"m": {"input": 1, "output": 1, "context_window": bad}}})


def test_message_counts_are_the_same_whether_remembered_or_not():
    from rlm_docs.tokens import count_message_tokens, count_tokens

    long = "Revenue was $4.2 billion. " * 200  # remembered (mid-sized)
    short, huge = "hello", "x y " * 60_000  # counted each time
    messages = [{"content": long}, {"content": short}, {"content": huge}, {"content": None}]
    expected = sum(4 + count_tokens(t) for t in (long, short, huge, "")) + 3
    assert count_message_tokens(messages) == count_message_tokens(messages) == expected
