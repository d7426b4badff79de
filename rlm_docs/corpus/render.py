"""The marked context string a root model sees, and where each page sits inside it.

Exact form (MADQA's marked corpus): for each document

    [FILE: {name} | TOTAL PAGES: {n}]\\n
    [PAGE 1]\\n{text of page 1}\\n[END PAGE 1]\\n
    ...
    [PAGE n]\\n{text of page n}\\n[END PAGE n]\\n
    [END FILE: {name}]\\n

and documents are separated by exactly one blank line (one extra "\\n" between a document's
`[END FILE: ...]` line and the next `[FILE: ...]` line; none after the last document). Page text is
inserted verbatim (no stripping), so `rlm_docs.ingest.marked` can parse the string back into the
same pages, and `render` of the parsed pages gives the identical string.

`page_starts` gives, for every page in corpus order, the offset where the text belonging to it
starts: the `[FILE:` header for a document's first page, the `[PAGE i]` marker otherwise. A
document's `[END FILE]` line and the blank separator after it belong to its last page, so every
offset of the rendered string maps to exactly one (document, page) by binary search.
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def file_header(name: str, num_pages: int) -> str:
    return f"[FILE: {name} | TOTAL PAGES: {num_pages}]\n"


def file_footer(name: str) -> str:
    return f"[END FILE: {name}]\n"


def render_documents(names: Sequence[str], page_counts: Sequence[int], texts: Sequence[str]) -> str:
    """Render documents whose pages are `texts` in corpus order, with one join."""
    parts: list[str] = []
    g = 0
    for d, (name, n) in enumerate(zip(names, page_counts, strict=True)):
        if d:
            parts.append("\n")
        parts.append(file_header(name, n))
        for p in range(1, n + 1):
            parts.append(f"[PAGE {p}]\n")
            parts.append(texts[g])
            parts.append(f"\n[END PAGE {p}]\n")
            g += 1
        parts.append(file_footer(name))
    if g != len(texts):
        raise ValueError(f"page counts sum to {g} but {len(texts)} page texts were given")
    return "".join(parts)


def page_starts(
    names: Sequence[str], page_counts: npt.ArrayLike, page_chars: npt.ArrayLike
) -> tuple[np.ndarray, int]:
    """Start offset of every page's block in the rendered string, and the string's length
    (vectorised: one cumulative sum over per-page block lengths)."""
    counts = np.asarray(page_counts, dtype=np.int64)
    chars = np.asarray(page_chars, dtype=np.int64)
    if len(counts) == 0:
        return np.zeros(0, dtype=np.int64), 0
    doc_of_page = np.repeat(np.arange(len(counts)), counts)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    page_no = np.arange(len(chars)) - first[doc_of_page] + 1
    digits = np.floor(np.log10(page_no)).astype(np.int64) + 1
    block = 21 + 2 * digits + chars  # "[PAGE p]\n" + text + "\n[END PAGE p]\n"
    head = np.array([len(file_header(n, int(c))) for n, c in zip(names, counts, strict=True)])
    foot = np.array([len(file_footer(n)) for n in names]) + 1  # + the blank separator line
    extra = np.zeros(len(chars), dtype=np.int64)
    extra[first] += head  # a document's header comes before its first page's marker
    extra[first[1:]] += foot[:-1]  # the previous document's footer and separator
    ends = np.cumsum(block + extra)
    starts = ends - block
    starts[first] -= head  # page 1 owns its document's header
    return starts, int(ends[-1] + foot[-1] - 1)
