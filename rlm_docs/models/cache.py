"""On-disk response cache (SQLite, WAL) so a temperature-0 re-run replays exactly and costs nothing.

The key is the sha256 of canonical JSON of (backend, model, base_url, messages, sampling params).
Only successful replies are stored. A hit keeps the original text and token counts (the tokens
were really processed once) but costs $0 and is flagged `cached=True` for the ledger.
"""

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from rlm_docs.env import blame, env_value
from rlm_docs.errors import ConfigError
from rlm_docs.models.base import Client, Completion, Usage
from rlm_docs.resources import home_dir

_SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, record TEXT NOT NULL)"


class ResponseCache:
    """A thread-safe key → record store in one SQLite file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except (sqlite3.Error, OSError) as exc:
            raise ConfigError(
                f"response cache {self.path}: unusable ({exc}); delete it or set RLM_DOCS_CACHE=off"
            ) from None

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"

    def get(self, key: str) -> dict | None:
        """The stored record for `key`, or None."""
        with self._lock:
            row = self._db.execute("SELECT record FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, record: dict) -> None:
        """Store `record` under `key` (last writer wins; identical keys mean identical requests)."""
        blob = json.dumps(record, ensure_ascii=False, sort_keys=True)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?)", (key, blob))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()


_DEFAULT: dict[Path, ResponseCache] = {}
_DEFAULT_LOCK = threading.Lock()


def default_cache() -> ResponseCache | None:
    """The shared cache at RLM_DOCS_CACHE (or `home_dir()/cache.sqlite`); None when set to `off`."""
    setting = env_value("RLM_DOCS_CACHE")
    if setting is not None and setting.lower() == "off":
        return None
    path = Path(setting) if setting else home_dir() / "cache.sqlite"
    with _DEFAULT_LOCK:
        if path not in _DEFAULT:
            if setting is None:
                _DEFAULT[path] = ResponseCache(path)
            else:
                with blame("RLM_DOCS_CACHE", setting):
                    _DEFAULT[path] = ResponseCache(path)
        return _DEFAULT[path]


def cache_key(client: Client, messages: list[dict], params: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of everything that determines the reply."""
    payload = {
        "backend": client.backend,
        "model": client.model,
        "base_url": getattr(client, "base_url", None),
        "messages": messages,
        "params": params,
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class CachedClient:
    """Wraps any client; temperature-0 calls (or all, with `force=True`) go through the cache."""

    def __init__(self, client: Client, cache: ResponseCache, *, force: bool = False) -> None:
        self.client = client
        self.cache = cache
        self.force = force
        self.spec = client.spec
        self.backend = client.backend
        self.model = client.model

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set in __init__ (e.g. `price`, `base_url`).
        if name == "client":
            raise AttributeError(name)
        return getattr(self.client, name)

    def __repr__(self) -> str:
        return f"CachedClient({self.client!r}, {self.cache!r})"

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """Replay a stored reply, or call the wrapped client and store its reply."""
        if temperature != 0 and not self.force:
            return self.client.complete(
                messages, temperature=temperature, max_tokens=max_tokens, **params
            )
        start = time.perf_counter()
        key = cache_key(
            self.client, messages, {"temperature": temperature, "max_tokens": max_tokens, **params}
        )
        record = self.cache.get(key)
        if record is not None:
            return Completion(
                text=record["text"],
                usage=Usage(**record["usage"]),
                model=record["model"],
                latency_s=time.perf_counter() - start,
                cost_usd=0.0,
                cached=True,
                usage_source=record["usage_source"],
                attempts=0,
            )
        result = self.client.complete(
            messages, temperature=temperature, max_tokens=max_tokens, **params
        )
        self.cache.put(
            key,
            {
                "text": result.text,
                "usage": result.to_dict()["usage"],
                "model": result.model,
                "usage_source": result.usage_source,
            },
        )
        return result
