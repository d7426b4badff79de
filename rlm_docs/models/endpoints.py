"""Where a provider's API key may go: its own endpoint, or one the user named.

A model string can name any server (`openai:m@http://HOST:PORT/v1`), and model strings also
come from files: a sweep spec someone shared, a run directory. Sending `OPENAI_API_KEY` to
whatever a file names hands the key to its author. So a key goes only to

- the provider's own endpoint (`https://api.openai.com`, `https://api.mistral.ai`);
- an endpoint the user named in the environment: OPENAI_BASE_URL, MISTRAL_BASE_URL,
  RLM_DOCS_MODEL, RLM_DOCS_SUB_MODEL, or RLM_DOCS_ALLOW_ENDPOINTS (`HOST[:PORT],...`);
- an endpoint the user named on the command line (`--model`, `--sub-model`, `--judge`,
  `--allow-model`, `--ray-address`, or `--allow-endpoint HOST[:PORT]`).

Any other endpoint still gets the request (a local server without a key works as before), but
with no key. The rule is applied where a client reads its key (`http_common.resolve_key`) and
where Ray actors get theirs, so no path a model string travels (sweep cell, run settings,
question task, Ray actor) can skip it.

The command line installs the rule for the length of one command (`named_by_user`). Python
code that calls `make_client` or `RLM` itself names its own model strings, so without an
installed rule every endpoint counts as named; Ray actors get the driver's rule with the task.
"""

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit

ALLOW_ENV = "RLM_DOCS_ALLOW_ENDPOINTS"
# Environment variables whose endpoints the user named: base URLs, and model strings.
_BASE_URL_ENV = ("OPENAI_BASE_URL", "MISTRAL_BASE_URL")
_MODEL_ENV = ("RLM_DOCS_MODEL", "RLM_DOCS_SUB_MODEL")
OFFICIAL = {"openai": "api.openai.com", "mistral": "api.mistral.ai"}
# Each HTTP backend's API key variable, declared once: the clients read their key from it, and
# every variable here is a secret (`factory.secret_env`): masked in logged trajectories, kept from
# agent programs and from Ray clusters the user did not name. A new backend declares its key here.
KEY_ENV = {"openai": "OPENAI_API_KEY", "mistral": "MISTRAL_API_KEY"}
_DEFAULT_PORT = {"http": 80, "https": 443}


def endpoint_of(text: str) -> str | None:
    """`host:port` of a URL or of `HOST:PORT`; a bare `HOST` stays `host` (an allowance for
    every port of it); None when `text` names no host."""
    raw = text.strip()
    if "://" not in raw:
        host, sep, port = raw.rpartition(":")
        if sep and port.isdigit():
            return f"{host.strip('[]').lower()}:{port}" if host else None
        return raw.strip("[]").lower() or None
    try:
        parts = urlsplit(raw)
        number = parts.port or _DEFAULT_PORT.get(parts.scheme)
    except ValueError:
        return None
    if not parts.hostname:
        return None
    return f"{parts.hostname.lower()}:{number}" if number else parts.hostname.lower()


def spec_url(spec: str) -> str | None:
    """The `@URL` of a model string `BACKEND:MODEL@URL`, else None."""
    _, at, url = spec.partition("@")
    return url.strip() if at and "://" in url else None


def is_official(backend: str, base_url: str | None) -> bool:
    """Whether `base_url` is the provider's own endpoint (None: the SDK's default, which is)."""
    if base_url is None:
        return True
    host = OFFICIAL.get(backend)
    try:
        secure = urlsplit(base_url).scheme == "https"
    except ValueError:  # e.g. an unclosed `[` of an IPv6 host
        return False
    return host is not None and secure and endpoint_of(base_url) == f"{host}:443"


@dataclass(frozen=True)
class KeyRule:
    """The endpoints the user named for this command (besides the environment's)."""

    named: frozenset[str]


_rule: KeyRule | None = None


def current_rule() -> KeyRule | None:
    """The rule in force (None: Python use, every endpoint counts as named)."""
    return _rule


def install(rule: KeyRule | None) -> None:
    """Apply `rule` for the rest of this process (a Ray actor gets its driver's)."""
    global _rule
    _rule = rule


@contextmanager
def named_by_user(endpoints: Iterable[str]) -> Iterator[KeyRule]:
    """Apply the rule, with `endpoints` (URLs or `HOST[:PORT]`) named by the user, until the
    block ends."""
    previous = _rule
    found = {endpoint_of(e) for e in endpoints if e}
    rule = KeyRule(frozenset(e for e in found if e))
    install(rule)
    try:
        yield rule
    finally:
        install(previous)


def _env_named() -> set[str]:
    values = [os.environ.get(name, "") for name in _BASE_URL_ENV]
    values += [spec_url(os.environ.get(name, "")) or "" for name in _MODEL_ENV]
    values += os.environ.get(ALLOW_ENV, "").split(",")
    return {e for e in (endpoint_of(v) for v in values if v.strip()) if e}


def _matches(endpoint: str, allowed: Iterable[str]) -> bool:
    host = endpoint.rpartition(":")[0] or endpoint
    return any(a == endpoint or (":" not in a and a == host) for a in allowed)


def named(endpoint: str) -> bool:
    """Whether the user named `endpoint` (`host:port`), or no rule is in force."""
    rule = _rule
    if rule is None:
        return True
    return _matches(endpoint, rule.named | _env_named())


def key_may_go(backend: str, base_url: str | None) -> bool:
    """Whether `backend`'s API key may be sent to `base_url` (see the module docstring)."""
    if is_official(backend, base_url):
        return True
    endpoint = endpoint_of(base_url or "")
    return endpoint is not None and named(endpoint)


def cluster_may_get_keys(address: str | None) -> bool:
    """Whether API keys may be shipped to the Ray cluster at `address` (None: a new local Ray;
    `auto`: the one started on this machine, or RAY_ADDRESS)."""
    if address in (None, "auto"):
        return True
    endpoint = endpoint_of(address or "")
    return endpoint is not None and named(endpoint)


def withheld_note(backend: str, base_url: str) -> str:
    """Why a key was not sent, and how to send it."""
    endpoint = endpoint_of(base_url) or base_url
    return (
        f"{KEY_ENV.get(backend, 'the API key')} was not sent to {endpoint}: the endpoint was not "
        f"named on the command line or in the environment (allow it with --allow-endpoint "
        f"{endpoint} or {ALLOW_ENV}={endpoint})"
    )


def describe(spec: str) -> str:
    """Where a model string's requests go and whether its key goes with them (dry runs)."""
    from rlm_docs.models.spec import parse_spec

    parsed = parse_spec(spec)
    env_key = KEY_ENV.get(parsed.backend)
    if env_key is None:
        return "runs here, no endpoint"
    base_url = parsed.base_url or os.environ.get(f"{parsed.backend.upper()}_BASE_URL") or None
    where = base_url or f"https://{OFFICIAL[parsed.backend]}"
    if key_may_go(parsed.backend, base_url):
        return f"{where} ({env_key} sent)"
    endpoint = endpoint_of(where) or where
    return f"{where} (no key: not named by you; --allow-endpoint {endpoint} sends {env_key})"
