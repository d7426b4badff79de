"""A client that replays prepared replies: for tests and for exact replays of recorded runs.

Entries are consumed in order, one per call: a string is the reply; a dict is
`{"text": ..., "usage": {"input_tokens": .., "output_tokens": .., "cached_tokens": ..}}` (usage
optional; with it the call is accounted as provider-reported) or `{"error": "message"}`; an
exception instance is raised; a callable computes the reply from the messages. Like a real model,
a reply is cut to `max_tokens` tokens.
"""

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rlm_docs.call_purpose import Purpose, current
from rlm_docs.errors import ConfigError, ModelError
from rlm_docs.models.base import Completion, Usage, UsageSource
from rlm_docs.models.prices import PricesArg, load_prices
from rlm_docs.tokens import clip_tokens, count_message_tokens

Entry = str | dict | Exception | Callable[[list[dict]], Any]


class ScriptedClient:
    """Replays `responses`; thread-safe; `calls` records the messages of every call."""

    backend = "scripted"

    def __init__(
        self,
        responses: list[Entry],
        *,
        model: str = "scripted",
        spec: str | None = None,
        prices: PricesArg = None,
    ) -> None:
        self.model = model
        self.spec = spec or f"scripted:{model}"
        self.price = load_prices(prices).lookup(model)
        self.calls: list[list[dict]] = []
        self.purposes: list[Purpose | None] = []  # each call's purpose (`rlm_docs.call_purpose`)
        self._responses = list(responses)
        self._next = 0
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | Path, **kwargs: Any) -> "ScriptedClient":
        """Load a JSON list or JSONL file of string / dict entries."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"scripted replies {p}: cannot read ({exc.strerror})") from None
        try:
            if text.lstrip().startswith("["):
                entries = json.loads(text)
            else:
                entries = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise ConfigError(f"scripted replies {p}: invalid JSON at line {exc.lineno}") from None
        for i, entry in enumerate(entries, 1):
            if not isinstance(entry, str | dict):
                raise ConfigError(f"scripted replies {p}: entry {i} must be a string or object")
        kwargs.setdefault("spec", f"scripted:{p}")
        return cls(entries, **kwargs)

    def __repr__(self) -> str:
        return f"ScriptedClient(spec={self.spec!r}, remaining={len(self._responses) - self._next})"

    def _take(self, messages: list[dict]) -> Entry:
        with self._lock:
            self.calls.append(messages)
            self.purposes.append(current())
            if self._next >= len(self._responses):
                raise ModelError(
                    f"{self.spec}: script exhausted: all {len(self._responses)} replies used, "
                    f"call {self._next + 1} has none"
                )
            entry = self._responses[self._next]
            self._next += 1
            return entry

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """Return the next scripted reply as a Completion."""
        start = time.perf_counter()
        entry = self._take(messages)
        if isinstance(entry, Exception):
            raise entry
        reply = entry(messages) if callable(entry) else entry
        if isinstance(reply, dict) and "error" in reply:
            raise ModelError(f"{self.spec}: {reply['error']}")
        text = str(reply.get("text", "")) if isinstance(reply, dict) else str(reply)
        text, output_tokens = clip_tokens(text, max_tokens)
        given = reply.get("usage") if isinstance(reply, dict) else None
        source: UsageSource
        if given:
            usage = Usage(
                int(given.get("input_tokens", 0)),
                int(given.get("output_tokens", 0)),
                int(given.get("cached_tokens", 0)),
                int(given.get("cache_write_tokens", 0)),
            )
            source = "provider"
        else:
            usage = Usage(count_message_tokens(messages), output_tokens, 0)
            source = "tiktoken"
        return Completion(
            text=text,
            usage=usage,
            model=self.model,
            latency_s=time.perf_counter() - start,
            cost_usd=self.price.cost(usage) if self.price else 0.0,
            usage_source=source,
            price_known=self.price is not None,
        )
