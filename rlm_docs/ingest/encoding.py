"""Text encodings of source files: a name given with `--encoding`, checked before any reading,
or a guess for text that is not UTF-8 (charset-normalizer), so a Windows-1252 `Café … £100`
is read as written instead of as `Caf� … �100`.

Short texts fit many single-byte code pages equally well (`Café … £100` decodes cleanly as
cp1252, cp1250 and a dozen others); among the equally good guesses, Windows-1252, the commonest
legacy encoding of English and Western European text, is preferred. Random bytes also
decode in some multi-byte code page, so a guess is only made for data that breaks into lines
or words as text does (an ASCII space or line break at least every `WHITESPACE_EVERY` bytes).
A guess is reported as a warning and recorded in the manifest, and `--encoding` overrides it.
"""

import codecs

from rlm_docs.errors import IngestError

PREFERRED = "cp1252"
WHITESPACE_EVERY = 1000
_WHITESPACE = b" \t\n\r\f"


def checked(name: str) -> str:
    """The codec name for `--encoding NAME` (IngestError naming it when Python has no such
    text encoding)."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise IngestError(f"unknown --encoding {name!r} (e.g. utf-8, cp1252, latin-1)") from None
    if not getattr(info, "_is_text_encoding", True):
        raise IngestError(f"--encoding {name!r} is not a text encoding")
    return info.name


def detect(data: bytes) -> str | None:
    """The likeliest encoding of `data` that decodes it without errors, or None."""
    from charset_normalizer import from_bytes

    if sum(data.count(c) for c in _WHITESPACE) < len(data) // WHITESPACE_EVERY + 1:
        return None
    matches = list(from_bytes(data))
    if not matches:
        return None
    best = matches[0]
    for match in matches:
        if (match.chaos, match.coherence) != (best.chaos, best.coherence):
            break
        if PREFERRED in match.could_be_from_charset:
            return PREFERRED
    return best.encoding
