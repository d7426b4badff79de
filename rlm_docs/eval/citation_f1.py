"""Citation F1 at page and document level.

MADQA's harness compares file names verbatim and pages as given, so `"a.pdf"` vs `A` or `"1"`
vs `1` silently count as misses. Here documents are compared by stem, case-insensitively, and
pages as integers; an uncited prediction scores 0.
"""

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

from rlm_docs.errors import DatasetError
from rlm_docs.questions import doc_key

K = TypeVar("K", bound=Hashable)


def page_number(value: Any, where: str = "citation") -> int:
    """A page as an integer (`"7"` -> 7); DatasetError naming `where` if it is not one."""
    if isinstance(value, bool):
        raise DatasetError(f"{where}: page must be an integer, got {value!r}")
    try:
        number = int(str(value).strip())
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: page must be an integer, got {value!r}") from None
    return number


def _doc_of(ref: Mapping[str, Any]) -> Any:
    return ref.get("file", ref.get("document"))


def page_set(refs: Iterable[Mapping[str, Any]]) -> set[tuple[str, int]]:
    """{(doc key, page)} of citations or evidence (`file` or `document` key); bad pages skipped."""
    out: set[tuple[str, int]] = set()
    for ref in refs:
        doc = _doc_of(ref)
        if doc is None or ref.get("page") is None:
            continue
        try:
            out.add((doc_key(doc), page_number(ref["page"])))
        except DatasetError:
            continue
    return out


def doc_set(refs: Iterable[Mapping[str, Any]]) -> set[str]:
    """{doc key} of citations or evidence."""
    return {doc_key(d) for d in map(_doc_of, refs) if d is not None and str(d).strip()}


def _f1(predicted: set[K], gold: set[K]) -> float:
    hits = len(predicted & gold)
    if not hits:
        return 0.0
    precision, recall = hits / len(predicted), hits / len(gold)
    return 2 * precision * recall / (precision + recall)


def page_f1(citations: Iterable[Mapping[str, Any]], evidence: Iterable[Mapping[str, Any]]) -> float:
    """F1 between cited and gold (document, page) pairs."""
    return _f1(page_set(citations), page_set(evidence))


def doc_f1(citations: Iterable[Mapping[str, Any]], evidence: Iterable[Mapping[str, Any]]) -> float:
    """F1 between cited and gold document sets."""
    return _f1(doc_set(citations), doc_set(evidence))
