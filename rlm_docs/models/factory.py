"""`make_client(spec)`: the single place a model string becomes a ready client."""

import math
import os
from importlib import import_module
from typing import Any

from rlm_docs.errors import ConfigError
from rlm_docs.models.base import Client
from rlm_docs.models.cache import CachedClient, ResponseCache, default_cache
from rlm_docs.models.endpoints import KEY_ENV
from rlm_docs.models.prices import PricesArg
from rlm_docs.models.retry import RetryPolicy
from rlm_docs.models.spec import parse_spec

# Seconds an HTTP request may take before it is retried. Reasoning models and slow local
# servers need more, and a timed-out request is paid for and then retried.
DEFAULT_TIMEOUT_S = 120.0
TIMEOUT_ENV = "RLM_DOCS_TIMEOUT"

# What model clients read from the environment, for processes started elsewhere (Ray workers):
# the keys (`secret_env`) and the other settings (plus every RLM_DOCS_*).
CLIENT_ENV = ("OPENAI_BASE_URL", "MISTRAL_BASE_URL", TIMEOUT_ENV)

# `--timeout` of the running command (`set_default_timeout`): data held here, not written into
# the environment, so a library caller's process environment is never changed by a CLI flag.
_timeout_override: float | None = None

_HTTP_BACKENDS = {
    "openai": ("rlm_docs.models.openai_client", "OpenAIClient"),
    "mistral": ("rlm_docs.models.mistral_client", "MistralClient"),
}


def secret_env() -> tuple[str, ...]:
    """The environment variables that hold secrets, never logged or shown: every HTTP backend's
    declared key (`endpoints.KEY_ENV`), read when asked so a backend declared later counts."""
    return tuple(dict.fromkeys(KEY_ENV.values()))


def make_client(
    spec: str,
    *,
    prices: PricesArg = None,
    cache: ResponseCache | bool | None = True,
    retry: RetryPolicy | None = None,
    timeout_s: float | None = None,
) -> Client:
    """Build the client for `spec` (see `rlm_docs.models.spec`).

    HTTP backends read their API key from the environment now, so a missing key fails before
    any run starts, and are wrapped in the response cache (`cache=True`: the default on-disk cache
    unless RLM_DOCS_CACHE=off; a `ResponseCache` to choose one; False/None for none). Offline,
    scripted and `py:` clients (yours: your client decides its own caching) are only cached
    when given an explicit `ResponseCache`;
    `human` (a person at the terminal) is never cached: a replayed reply is not their effort.
    `timeout_s` (per HTTP request) defaults to `default_timeout()`.
    """
    if timeout_s is None:
        timeout_s = default_timeout()
    parsed = parse_spec(spec)
    client: Any
    if parsed.backend == "offline":
        client = import_module("rlm_docs.models.offline").OfflineClient()
    elif parsed.backend == "human":
        client = import_module("rlm_docs.models.human").HumanClient(parsed.model)
    elif parsed.backend == "scripted":
        from rlm_docs.models.scripted import ScriptedClient

        client = ScriptedClient.from_file(parsed.model, prices=prices)
    elif parsed.backend == "py":
        from rlm_docs.models.python_client import load_python_client

        client = load_python_client(parsed.model)
    else:
        module, name = _HTTP_BACKENDS[parsed.backend]
        client = getattr(import_module(module), name)(
            parsed, prices=prices, retry=retry, timeout_s=timeout_s
        )
    if isinstance(cache, ResponseCache) and parsed.backend != "human":
        return CachedClient(client, cache)
    if cache is True and parsed.backend in _HTTP_BACKENDS:
        store = default_cache()
        if store is not None:
            return CachedClient(client, store)
    return client


def set_default_timeout(seconds: float | None) -> None:
    """Make `seconds` the per-request timeout of every client built from now on (None: back to
    RLM_DOCS_TIMEOUT or 120); a command's `--timeout`."""
    global _timeout_override
    _timeout_override = seconds


def client_settings() -> dict[str, str]:
    """The non-secret client settings a process started elsewhere (a Ray worker) needs to
    build the same clients: CLIENT_ENV and RLM_DOCS_* from the environment, plus the timeout
    set by `set_default_timeout`."""
    plain = {k: v for k, v in os.environ.items() if k in CLIENT_ENV or k.startswith("RLM_DOCS_")}
    if _timeout_override is not None:
        plain[TIMEOUT_ENV] = repr(_timeout_override)
    return {k: v for k, v in plain.items() if k not in secret_env()}


def default_timeout() -> float:
    """The timeout set by `set_default_timeout`, else RLM_DOCS_TIMEOUT seconds if set
    (ConfigError naming it when invalid), else 120."""
    if _timeout_override is not None:
        return _timeout_override
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ConfigError(f"{TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value
