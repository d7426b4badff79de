"""Response cache: exact replays at temperature 0, zero cost, flagged, never caching errors."""

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from rlm_docs.errors import ConfigError, ModelError
from rlm_docs.governor import Governor
from rlm_docs.models import CachedClient, ResponseCache, ScriptedClient, default_cache, make_client
from tests.servers.chat import ChatServer

MSGS = [{"role": "user", "content": "Summarise page 3."}]


@pytest.fixture
def cache(tmp_path: Path) -> ResponseCache:
    return ResponseCache(tmp_path / "cache.sqlite")


def test_hit_replays_same_text_and_tokens_at_zero_cost(cache: ResponseCache) -> None:
    usage = {"input_tokens": 1200, "output_tokens": 80, "cached_tokens": 200}
    inner = ScriptedClient([{"text": "Page 3 says X.", "usage": usage}], model="gpt-5-mini")
    client = CachedClient(inner, cache)
    first = client.complete(MSGS)
    second = client.complete(MSGS)  # the script has no second reply: must come from the cache
    assert not first.cached and first.cost_usd > 0
    assert second.cached and second.cost_usd == 0.0
    assert second.text == first.text
    assert second.usage == first.usage
    assert second.usage_source == "provider"
    assert len(inner.calls) == 1


def test_replay_is_byte_identical_through_real_server(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    odd = 'Ünïcode ✓ \u2028 line\nbreak\t"quotes" \\ ½'
    with ChatServer(reply=lambda m: odd) as srv:
        store = ResponseCache(tmp_path / "c.sqlite")
        first = make_client(f"openai:gpt-4o@{srv.base_url}", cache=store).complete(MSGS)
        # A new process would open the file afresh: do the same.
        again = make_client(
            f"openai:gpt-4o@{srv.base_url}", cache=ResponseCache(tmp_path / "c.sqlite")
        ).complete(MSGS)
    assert len(srv.requests) == 1
    assert again.cached and again.text.encode("utf-8") == first.text.encode("utf-8") == odd.encode()
    assert again.usage == first.usage


def test_key_covers_messages_params_model_and_base_url(cache: ResponseCache) -> None:
    inner = ScriptedClient([f"reply {i}" for i in range(10)])
    client = CachedClient(inner, cache)
    client.complete(MSGS)
    client.complete(MSGS, max_tokens=5)
    client.complete([{"role": "user", "content": "other"}])
    client.complete(MSGS, stop=["\n"])
    other_model = CachedClient(ScriptedClient(["m2"], model="other"), cache)
    assert other_model.complete(MSGS).cached is False
    assert len(inner.calls) == 4
    assert len(cache) == 5


def test_nonzero_temperature_bypasses_cache_unless_forced(cache: ResponseCache) -> None:
    inner = ScriptedClient(["a", "b", "c"])
    client = CachedClient(inner, cache)
    assert client.complete(MSGS, temperature=0.7).text == "a"
    assert client.complete(MSGS, temperature=0.7).text == "b"
    assert len(cache) == 0
    forced = CachedClient(inner, cache, force=True)
    assert forced.complete(MSGS, temperature=0.7).text == "c"
    assert forced.complete(MSGS, temperature=0.7).cached


def test_errors_are_never_cached(cache: ResponseCache) -> None:
    client = CachedClient(ScriptedClient([{"error": "refused"}, "fine"]), cache)
    with pytest.raises(ModelError):
        client.complete(MSGS)
    assert len(cache) == 0
    assert client.complete(MSGS).text == "fine"


def test_cache_hit_is_flagged_in_ledger(cache: ResponseCache) -> None:
    client = CachedClient(ScriptedClient(["x"], model="gpt-5-mini"), cache)
    gov = Governor(question_id="q")
    gov.call(client, MSGS, role="sub")
    gov.call(client, MSGS, role="sub")
    first, second = gov.ledger.entries
    assert (first.cached, second.cached) == (False, True)
    assert second.cost_usd == 0.0 and second.input_tokens == first.input_tokens > 0
    totals = gov.totals()
    assert totals["cache_hits"] == 1 and totals["cost_usd"] == first.cost_usd


def test_concurrent_use_from_threads(cache: ResponseCache) -> None:
    inner = ScriptedClient([lambda m: m[0]["content"][::-1]] * 40)
    client = CachedClient(inner, cache)
    errors: list[Exception] = []

    def worker(n: int) -> None:
        try:
            for i in range(10):
                msgs = [{"role": "user", "content": f"q{(n * 10 + i) % 20}"}]
                assert client.complete(msgs).text == f"q{(n * 10 + i) % 20}"[::-1]
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(cache) == 20


def test_wal_mode_and_stored_record(cache: ResponseCache) -> None:
    CachedClient(ScriptedClient(["stored"]), cache).complete(MSGS)
    db = sqlite3.connect(cache.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    (record,) = [json.loads(r[0]) for r in db.execute("SELECT record FROM responses")]
    assert record["text"] == "stored" and record["usage_source"] == "tiktoken"


def test_default_cache_location_and_off_switch(rlm_home, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("RLM_DOCS_CACHE", raising=False)
    assert default_cache().path == tmp_path / "home" / "cache.sqlite"
    monkeypatch.setenv("RLM_DOCS_CACHE", str(tmp_path / "elsewhere.sqlite"))
    assert default_cache().path == tmp_path / "elsewhere.sqlite"
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    assert default_cache() is None


def test_make_client_wraps_http_backends_by_default(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("RLM_DOCS_CACHE", str(tmp_path / "auto.sqlite"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with ChatServer(reply=lambda m: "once") as srv:
        client = make_client(f"openai:gpt-4o@{srv.base_url}")
        assert isinstance(client, CachedClient)
        assert client.spec == f"openai:gpt-4o@{srv.base_url}" and client.price is not None
        client.complete(MSGS)
        assert client.complete(MSGS).cached
        assert len(srv.requests) == 1
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    assert not isinstance(make_client("openai:gpt-4o@http://127.0.0.1:9/v1"), CachedClient)


def test_corrupt_cache_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "cache.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match=r"cache.sqlite: unusable.*RLM_DOCS_CACHE=off"):
        ResponseCache(bad)
