"""Citation validation: every cited (file, page) must exist in the corpus.

Models cite file names with or without extensions and sometimes pages that do not exist; an
invalid citation would silently cost Page F1, so they are normalised (`Corpus.resolve`) or
dropped. When nothing valid is cited, the evidence the run actually gathered stands in:
first the pages passed to `cite()`, else the pages the model read.
"""

from typing import Any

MAX_FALLBACK_PAGES = 5


def validate(
    corpus: Any, citations: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(valid, rejected): valid ones normalised to `{file: corpus name, page: int}`, deduped."""
    valid: list[dict[str, Any]] = []
    kept: set[tuple[str, int]] = set()  # `valid` as keys, so the check stays linear
    rejected: list[dict[str, Any]] = []
    for item in citations:
        name = corpus.resolve(str(item.get("file", ""))) if corpus is not None else None
        raw = item.get("page")
        try:
            page = int(raw) if raw is not None else 0
        except (TypeError, ValueError):
            page = 0
        if name is None or not 1 <= page <= corpus.num_pages(name):
            rejected.append(dict(item))
            continue
        if (name, page) not in kept:
            kept.add((name, page))
            valid.append({"file": name, "page": page})
    return valid, rejected


def with_fallback(
    corpus: Any,
    citations: list[dict[str, Any]],
    cited: list[dict[str, Any]],
    read: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """Validated citations, else `cite()` calls, else pages read (last few).

    Returns (citations, rejected, source) with source `model`, `cite`, `read` or `none`.
    """
    valid, rejected = validate(corpus, citations)
    if valid:
        return valid, rejected, "model"
    fallback, _ = validate(corpus, cited)
    if fallback:
        return fallback, rejected, "cite"
    pages, _ = validate(corpus, read)
    if pages:
        return pages[-MAX_FALLBACK_PAGES:], rejected, "read"
    return [], rejected, "none"
