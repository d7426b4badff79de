"""Choosing documents by name: one name, a list of names, or a name pattern.

Models narrow a search to "the 3M filings" or "the 2022 10-Ks" far more often than to one exact
file, so every helper that takes `doc` accepts the same forms: a document name (resolved as
`Corpus.resolve` does: exact, case-insensitive, or a file-name stem), a glob pattern
(`3M_*_10K`, case-insensitive), a plain fragment that is part of names (`"AMCOR"`, `"2022"`),
or a list of any of these (their union, in corpus order).
"""

from fnmatch import fnmatchcase
from typing import Any

from rlm_docs.errors import CorpusError

_GLOB = set("*?[")


def _matches(corpus: Any, spec: str) -> list[str]:
    exact = corpus.resolve(spec)
    if exact is not None:
        return [exact]
    key = spec.lower()
    if _GLOB & set(spec):
        return [n for n in corpus.names if fnmatchcase(n.lower(), key)]
    return [n for n in corpus.names if key and key in n.lower()]


def select(corpus: Any, spec: Any, *, strict: bool = True) -> list[str] | None:
    """Document names chosen by `spec` in corpus order; None for `spec=None` (all documents).

    With `strict`, a form that matches nothing raises `CorpusError` naming close documents (as
    an unknown name always has); otherwise it contributes nothing.
    """
    if spec is None:
        return None
    items = [spec] if isinstance(spec, str) else spec
    if not isinstance(items, list | tuple) or not all(isinstance(s, str) for s in items):
        raise TypeError("doc must be a document name, a name pattern, or a list of them")
    chosen: set[str] = set()
    for item in items:
        found = _matches(corpus, item)
        if not found and strict:
            corpus.num_pages(item)  # raises CorpusError listing close names
            raise CorpusError(f"no document matches {item!r}")
        chosen.update(found)
    return [n for n in corpus.names if n in chosen]
