"""`make_client("offline")`: the deterministic offline policy (`rlm_docs.offline`) as a client.

Usage is counted with tiktoken; the cost is always 0.
"""

import time
from typing import Any

from rlm_docs.models.base import Completion, Usage
from rlm_docs.offline import reply
from rlm_docs.tokens import count_message_tokens, count_tokens


class OfflineClient:
    """Client-protocol implementation of the offline policy."""

    backend = "offline"

    def __init__(self, model: str = "offline") -> None:
        self.model = model
        self.spec = "offline"

    def __repr__(self) -> str:
        return "OfflineClient()"

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """Deterministic reply for the call's purpose (`rlm_docs.call_purpose`); cost 0."""
        start = time.perf_counter()
        text = reply(messages)
        usage = Usage(count_message_tokens(messages), count_tokens(text), 0)
        return Completion(
            text=text,
            usage=usage,
            model=self.model,
            latency_s=time.perf_counter() - start,
            cost_usd=0.0,
            usage_source="tiktoken",
        )
