"""A caller's regex compiled by RE2, whose matching time is linear in the text.

Python's `re` backtracks: `(\\w+\\s?)*\\x00` over one page of words runs for hours while
holding the GIL. Inside a sandbox cell its time limit kills the worker, but on the host (the MCP
server's `grep`) nothing can: other clients time out and SIGTERM waits for the GIL. RE2 never
backtracks, so no pattern takes more than time proportional to the text; in exchange it has no
backreferences (`\\1`) and no lookaround (`(?=`, `(?<=`), and `\\w`, `\\d`, `\\b` match ASCII
only. A pattern it cannot compile is refused with RE2's reason.
"""

import re
from typing import Any

from rlm_docs.errors import ConfigError, CorpusError

MAX_PATTERN_CHARS = 2_000
# Python escapes RE2 spells differently (after an even number of backslashes, so `\\u` is a
# literal backslash and a `u`): `\uXXXX` / `\UXXXXXXXX` -> `\x{...}`, `\Z` -> `\z`.
_PY_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|Z)")


def _re2_spelling(pattern: str) -> str:
    def spell(m: re.Match[str]) -> str:
        escape = m.group(2)
        return m.group(1) + ("\\z" if escape == "Z" else f"\\x{{{escape[1:]}}}")

    return _PY_ESCAPE.sub(spell, pattern)


def compile_linear(pattern: Any, multiline: bool = True) -> Any:
    """`pattern` as an RE2 regex (`search`, `finditer`, match `start`/`end` as `re`'s);
    CorpusError naming the pattern and the reason when RE2 refuses it."""
    try:
        import re2
    except ImportError:
        raise ConfigError(
            "host-side grep needs google-re2 (in the 'mcp' extra): pip install 'rlm-docs[mcp]'"
        ) from None
    if not isinstance(pattern, str):
        raise TypeError(f"grep() pattern must be a string, got {type(pattern).__name__}")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise CorpusError(
            f"grep(): pattern of {len(pattern):,} characters, over the limit of "
            f"{MAX_PATTERN_CHARS:,}"
        )
    options = re2.Options()
    options.log_errors = False  # the reason goes into the error, not onto stderr
    try:
        spelled = _re2_spelling(pattern)
        return re2.compile(f"(?m){spelled}" if multiline else spelled, options)
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args else str(exc)
        raise CorpusError(
            f"grep(): pattern {pattern[:200]!r} is not supported here ({reason}); this server "
            "matches with RE2, which has no lookaround or backreferences"
        ) from None
