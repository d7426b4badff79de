"""How pages are marked in text a model reads, declared once with the patterns that read them
back: the marked context string a root model sees (and where each page sits inside it), and the
block of one retrieved page in a baseline's prompt (`page_block`).

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

A retrieved page in a prompt (`page_block`, MADQA's baselines show file name and page with
each) is `[FILE: {name} | PAGE: {n}]\n{text}\n[END PAGE]`; `page_blocks` and `rendered_pages`
read either form back, for whoever must find the pages in a prompt (the offline model).
(The sandbox's `pages()` output has its own `=== DOC page N ===` lines: the sandbox knows nothing
of rlm-docs.)
"""

import re
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

FILE_HEADER = re.compile(r"\[FILE: (.+?) \| TOTAL PAGES: (\d+)\]\n")
_RENDERED_PAGE = re.compile(r"^\[PAGE (\d+)\]\n(.*?)\n\[END PAGE \1\]$", re.M | re.S)
_PAGE_BLOCK = re.compile(r"^\[FILE: (.+?) \| PAGE: (\d+)\]\n(.*?)\n\[END PAGE\]", re.M | re.S)
TRUNCATED = "\n[... page truncated ...]"


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


def rendered_pages(text: str) -> list[tuple[str, str, str]]:
    """(document, page, body) of every page of a rendered corpus (or a prefix of one)."""
    heads = [m for m in FILE_HEADER.finditer(text) if m.start() == 0 or text[m.start() - 1] == "\n"]
    out = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        for m in _RENDERED_PAGE.finditer(text, head.end(), end):
            out.append((head.group(1), m.group(1), m.group(2)))
    return out


def page_block(document: str, page: int, text: str, max_chars: int) -> str:
    """One retrieved page as shown to a model, its text cut to `max_chars` (and said so)."""
    body = text if len(text) <= max_chars else text[:max_chars] + TRUNCATED
    return f"[FILE: {document} | PAGE: {page}]\n{body}\n[END PAGE]"


def page_blocks(text: str) -> list[tuple[str, str, str]]:
    """(document, page, body) of every `page_block` in `text`, in order."""
    return _PAGE_BLOCK.findall(text)


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
