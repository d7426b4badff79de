"""OpenAI and Mistral backends against a real loopback server speaking each wire format.

Every fault a provider is known to send is injected server-side: 429 with Retry-After, 500, a reply slower
than the timeout, malformed JSON, missing usage, 400 context-length, 401.
"""

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.governor import Governor
from rlm_docs.models import (
    AuthError,
    BadRequestError,
    ContextLengthError,
    ModelUnavailableError,
    RetryPolicy,
    make_client,
)
from rlm_docs.models.sdk_pool import SdkPool
from rlm_docs.tokens import count_message_tokens, count_tokens
from tests.servers.chat import ChatServer

KEY = "sk-test-SECRET-0123456789"
MSGS = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Capital of France?"},
]
ENV = {"openai": "OPENAI_API_KEY", "mistral": "MISTRAL_API_KEY"}


class Sleeps(list):
    """Records requested backoff waits and sleeps them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)
        time.sleep(seconds)


@pytest.fixture(params=["openai", "mistral"])
def flavor(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def server(flavor: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ChatServer]:
    monkeypatch.setenv(ENV[flavor], KEY)
    with ChatServer(reply=lambda m: "Paris.", flavor=flavor, api_key=KEY) as srv:
        yield srv


def client_for(srv: ChatServer, model: str = "gpt-4o-mini", **kwargs):
    base = srv.base_url if srv.flavor == "openai" else srv.url
    kwargs.setdefault("retry", RetryPolicy(base_delay_s=0.001, max_delay_s=0.01))
    kwargs.setdefault("timeout_s", 5.0)
    return make_client(f"{srv.flavor}:{model}@{base}", cache=False, **kwargs)


def test_completion_uses_provider_usage_and_price(server: ChatServer) -> None:
    client = client_for(server, model="mistral-small-latest")
    c = client.complete(MSGS)
    assert c.text == "Paris."
    assert c.usage_source == "provider"
    assert c.usage.input_tokens == count_message_tokens(MSGS)
    assert c.usage.output_tokens == count_tokens("Paris.")
    # mistral-small: $0.1 in / $0.3 out per 1M
    expected = (c.usage.input_tokens * 0.1 + c.usage.output_tokens * 0.3) / 1e6
    assert c.cost_usd == pytest.approx(expected, abs=1e-12)
    assert c.attempts == 1 and not c.cached
    req = server.requests[-1]
    assert req.path == "/v1/chat/completions" and req.authorized
    assert req.body["model"] == "mistral-small-latest"
    assert req.body["messages"][-1]["content"] == "Capital of France?"
    assert req.body["temperature"] == 0.0


def test_max_tokens_is_sent_and_honoured(server: ChatServer) -> None:
    server.reply = lambda m: "one two three four five six seven eight nine ten"
    c = client_for(server).complete(MSGS, max_tokens=3)
    assert c.usage.output_tokens == 3
    assert server.requests[-1].body["max_tokens"] == 3


def test_429_honours_retry_after_seconds(server: ChatServer) -> None:
    sleeps = Sleeps()
    server.fail(429, retry_after=0.05)
    client = client_for(server, retry=RetryPolicy(base_delay_s=5.0, sleep=sleeps))
    c = client.complete(MSGS)
    assert c.text == "Paris." and c.attempts == 2
    assert sleeps == [0.05]


def test_429_honours_retry_after_ms(server: ChatServer) -> None:
    sleeps = Sleeps()
    server.fail(429, retry_after_ms=30)
    client = client_for(server, retry=RetryPolicy(base_delay_s=5.0, sleep=sleeps))
    assert client.complete(MSGS).attempts == 2
    assert sleeps == [pytest.approx(0.03)]


def test_500s_back_off_with_bounded_jitter_then_succeed(server: ChatServer) -> None:
    sleeps = Sleeps()
    server.fail(500).fail(502).fail(503)
    policy = RetryPolicy(base_delay_s=0.002, max_delay_s=0.005, sleep=sleeps)
    c = client_for(server, retry=policy).complete(MSGS)
    assert c.attempts == 4 and len(server.requests) == 4
    caps = [0.002, 0.004, 0.005]
    assert all(0 <= s <= cap for s, cap in zip(sleeps, caps, strict=True))


def test_retries_give_up_with_typed_error(server: ChatServer) -> None:
    for _ in range(3):
        server.fail(500, message="overloaded")
    client = client_for(server, retry=RetryPolicy(max_attempts=3, base_delay_s=0.001))
    with pytest.raises(ModelUnavailableError, match=r"gave up after 3 attempt.*HTTP 500"):
        client.complete(MSGS)
    assert len(server.requests) == 3


def test_slow_response_times_out_and_is_retried(server: ChatServer) -> None:
    server.delay(2.0)
    c = client_for(server, timeout_s=0.3).complete(MSGS)
    assert c.attempts == 2 and c.text == "Paris."


def test_malformed_json_is_retried(server: ChatServer) -> None:
    server.malformed()
    c = client_for(server).complete(MSGS)
    assert c.attempts == 2 and c.usage_source == "provider"


def test_missing_usage_falls_back_to_tiktoken(server: ChatServer) -> None:
    server.no_usage()
    c = client_for(server).complete(MSGS)
    assert c.attempts == 1
    assert c.usage_source == "tiktoken"
    assert c.usage.input_tokens == count_message_tokens(MSGS)
    assert c.usage.output_tokens == count_tokens("Paris.")


def test_context_length_error_says_by_how_much(server: ChatServer) -> None:
    server.context_length(prompt_tokens=140_045, limit=131_072)
    with pytest.raises(ContextLengthError) as info:
        client_for(server).complete(MSGS)
    err = info.value
    assert (err.prompt_tokens, err.limit) == (140_045, 131_072)
    assert "over by 8,973" in str(err)
    assert len(server.requests) == 1  # never retried


def test_401_is_auth_error_naming_env_var_not_key(server: ChatServer, flavor: str) -> None:
    server.unauthorized()
    with pytest.raises(AuthError) as info:
        client_for(server).complete(MSGS)
    assert ENV[flavor] in str(info.value) and KEY not in str(info.value)
    assert len(server.requests) == 1


def test_wrong_key_is_rejected_by_server(server: ChatServer, flavor: str, monkeypatch) -> None:
    monkeypatch.setenv(ENV[flavor], "sk-wrong")
    with pytest.raises(AuthError):
        client_for(server).complete(MSGS)
    assert server.requests[-1].authorized is False


def test_other_400_is_bad_request_with_scrubbed_message(server: ChatServer) -> None:
    server.fail(400, message=f"invalid parameter near {KEY}")
    with pytest.raises(BadRequestError) as info:
        client_for(server).complete(MSGS)
    assert not isinstance(info.value, ContextLengthError)
    assert "invalid parameter" in str(info.value) and KEY not in str(info.value)


def test_key_never_in_repr_requests_or_ledger(server: ChatServer) -> None:
    client = client_for(server, model="gpt-5-mini")
    gov = Governor()
    gov.call(client, MSGS, role="sub")
    assert KEY not in repr(client) and KEY not in str(client)
    assert KEY not in repr(gov.ledger.entries)
    for req in server.requests:
        assert KEY not in repr(req.headers) and KEY not in repr(req.body)


@pytest.mark.parametrize(
    ("backend", "var"), [("openai", "OPENAI_API_KEY"), ("mistral", "MISTRAL_API_KEY")]
)
def test_missing_key_is_config_error_naming_env_var(backend: str, var: str, monkeypatch) -> None:
    monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv(f"{backend.upper()}_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match=f"{var} is not set"):
        make_client(f"{backend}:some-model", cache=False)


def test_local_server_needs_no_key(flavor: str, monkeypatch) -> None:
    monkeypatch.delenv(ENV[flavor], raising=False)
    with ChatServer(reply=lambda m: "hi", flavor=flavor) as srv:
        assert client_for(srv, model="qwen3").complete(MSGS).text == "hi"


def test_cached_tokens_are_reported_and_discounted(flavor: str, monkeypatch) -> None:
    monkeypatch.setenv(ENV[flavor], KEY)
    with ChatServer(reply=lambda m: "ok", cached_tokens=lambda m: 10, flavor=flavor) as srv:
        c = client_for(srv, model="gpt-5-mini").complete(MSGS)
    assert c.usage.cached_tokens == 10
    fresh = c.usage.input_tokens - 10
    expected = (fresh * 0.25 + 10 * 0.025 + c.usage.output_tokens * 2.0) / 1e6
    assert c.cost_usd == pytest.approx(expected, abs=1e-12)


def test_base_url_from_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(reply=lambda m: "via env") as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        client = make_client("openai:gpt-4o-mini", cache=False)
        assert client.complete(MSGS).text == "via env"


def test_request_params_adapt_to_official_reasoning_models() -> None:
    from rlm_docs.models.openai_client import request_params

    official = request_params("gpt-5-mini", MSGS, 0.0, 100, official=True)
    assert "temperature" not in official and official["max_completion_tokens"] == 100
    classic = request_params("gpt-4o", MSGS, 0.0, 100, official=True)
    assert classic["temperature"] == 0.0 and classic["max_completion_tokens"] == 100
    local = request_params("gpt-5-mini", MSGS, 0.0, 100, official=False)
    assert local["temperature"] == 0.0 and local["max_tokens"] == 100
    assert "max_tokens" not in request_params("o4-mini", MSGS, 0.0, None, official=True)


def test_timeout_comes_from_rlm_docs_timeout_when_not_given(
    server: ChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.delay(1.0)
    monkeypatch.setenv("RLM_DOCS_TIMEOUT", "0.3")
    c = client_for(server, timeout_s=None).complete(MSGS)
    assert c.attempts >= 2  # the first request outlived the 0.3 s timeout and was retried
    server.delay(1.0)
    monkeypatch.setenv("RLM_DOCS_TIMEOUT", "5")
    assert client_for(server, timeout_s=None).complete(MSGS).attempts == 1


@pytest.mark.parametrize("bad", ["0", "-1", "soon", "inf"])
def test_invalid_rlm_docs_timeout_is_a_config_error_naming_it(
    bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("RLM_DOCS_TIMEOUT", bad)
    with pytest.raises(ConfigError, match="RLM_DOCS_TIMEOUT"):
        make_client("openai:gpt-4o-mini@http://127.0.0.1:9/v1", cache=False)


def test_concurrent_calls_each_lease_a_client_and_reuse_it_later(flavor, monkeypatch) -> None:
    """Calls in flight at once never share an SDK client (so never one connection pool); once
    returned, clients are reused, so the pool grows only to the most calls in flight at once."""
    monkeypatch.setenv(ENV[flavor], KEY)
    with ChatServer(reply=lambda m: "Paris.", flavor=flavor, api_key=KEY, latency_s=0.3) as srv:
        client = client_for(srv)
        messages = [{"role": "user", "content": "Capital of France?"}]
        with ThreadPoolExecutor(6) as pool:
            texts = list(pool.map(lambda _: client.complete(messages).text, range(6)))
        assert texts == ["Paris."] * 6
        assert client._pool.created == 6
        for _ in range(3):
            assert client.complete(messages).text == "Paris."
        assert client._pool.created == 6
        assert len(srv.requests) == 9


def test_sdk_pool_hands_out_distinct_clients_and_keeps_returned_ones() -> None:
    made = []
    pool = SdkPool(lambda: made.append(object()) or made[-1])
    assert len(made) == 1  # built at once: a bad setting fails where it is configured
    with pool.lease() as a, pool.lease() as b:
        assert a is not b and len(made) == 2
    with pool.lease() as c:
        assert c is a  # the most recently returned (b went back first): the warmest connection
    assert pool.created == 2


def test_cache_writes_are_reported_and_priced_apart(monkeypatch) -> None:
    """Anthropic prices prompt-cache writes above fresh input: a reply reporting
    `cache_creation_input_tokens` is charged 4 cache-read, 6 cache-write and the rest fresh."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with ChatServer(
        reply=lambda m: "ok", cached_tokens=lambda m: 4, cache_write_tokens=lambda m: 6
    ) as srv:
        c = client_for(srv, model="claude-sonnet-4-20250514").complete(MSGS)
        assert srv.served_usage()["cache_write_tokens"] == 6
    assert (c.usage.cached_tokens, c.usage.cache_write_tokens) == (4, 6)
    fresh = c.usage.input_tokens - 10
    assert fresh > 0
    expected = (fresh * 3.0 + 4 * 0.3 + 6 * 3.75 + c.usage.output_tokens * 15.0) / 1e6
    assert c.cost_usd == pytest.approx(expected, abs=1e-12)
