"""Document structure for DeepRead-style reading: a table of contents and sections by paragraph.

Long filings are easier to navigate by section than by page, so the REPL offers `toc(doc)` and
`read_section(doc, section)`. Sections come from markdown headings (`#`..`######`) across pages.
Plain pdftotext text has no markdown, so headings are then taken from SEC-style lines
(`PART II` level 1, `Item 7.` level 2) and short ALL-CAPS lines (level 3). Plain-text cues are noisy, so two kinds of capital lines are not
headings: SEC cover-page boilerplate (`UNITED STATES`, `SECURITIES AND EXCHANGE COMMISSION`,
`FORM 10-K`, ...) and running page headers (a line such as `ADOBE INC.` near the top of three or
more pages), which would otherwise cut every section at the next page break. A heading that
repeats the one before it on a later page (a slide deck titles every slide of a part alike) does
not start a new section: the section goes on. A document with no heading at all (many slide
decks) gets one pseudo-section per page, titled by the page's first line (`(no text)` for a
page without a text layer); consecutive pages with the same title are one section.

A section runs from its heading to the next heading of the same or a higher level, so it
includes its subsections and continues across page breaks. A *group* heading (one followed
directly by a heading of its own level, with no text between, like `Risks Related to Our
Business` over its risk factors) runs to the next group heading of its level or a higher
heading, so it holds its group instead of only its own line. Paragraphs are blank-line-separated
blocks, each with the 1-based page it starts on.

The outline of a document is cached (per corpus path and document); page text is not.
"""

import re
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, Protocol

from rlm_docs.errors import CorpusError

_MD_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_PART_HEADING = re.compile(r"^\s*PART\s+[IVX]+\b.*$", re.IGNORECASE)
_ITEM_HEADING = re.compile(r"^\s*ITEM\s+\d+[A-Z]?\s*[.:].*$", re.IGNORECASE)
_MARKUP = re.compile(r"</?[a-z][^>]*>|[*_`]+")
_BOILERPLATE = re.compile(
    r"^(?:UNITED STATES|SECURITIES AND EXCHANGE COMMISSION|WASHINGTON,? D\.? ?C\.?.*|"
    r"FORM \d+-?[A-Z]+.*|(?:ANNUAL|QUARTERLY|TRANSITION|CURRENT) REPORT.*|"
    r"COMMISSION FILE NUMBER.*|SECURITIES REGISTERED PURSUANT.*|\(?MARK ONE\)?|"
    r"DOCUMENTS INCORPORATED BY REFERENCE|TABLE OF CONTENTS|INDEX)$",
    re.IGNORECASE,
)
# A plain heading seen within this many lines of the top of at least RUNNING_PAGES pages is a
# running page header.
RUNNING_LINES = 8
RUNNING_PAGES = 3
_CACHE_SIZE = 64
TITLE_CHARS = 80  # of a page's first line, as the title of a document without headings


class PageSource(Protocol):
    """What sections need from a corpus (satisfied by `rlm_docs.corpus.Corpus`)."""

    def num_pages(self, doc: str) -> int: ...

    def pages(self, doc: str, start: int, end: int) -> list[str]: ...


@dataclass(frozen=True)
class Heading:
    """A heading at line `line` of page `page` (1-based page, 0-based line); `top` when only
    blank lines precede it on its page, so the previous section ends on the page before."""

    title: str
    level: int
    page: int
    line: int
    top: bool
    group: bool = False

    @property
    def rank(self) -> float:
        """Nesting rank: a group heading sits half a level above its own level's headings."""
        return self.level - 0.5 if self.group else self.level


def _clean(title: str) -> str:
    return " ".join(_MARKUP.sub("", title).split())


def _caps_heading(line: str) -> bool:
    """A short line of capital words (e.g. `RISK FACTORS`), not a table row or a number."""
    text = line.strip()
    if not 4 <= len(text) <= 80 or "  " in text:
        return False
    letters = [c for c in text if c.isalpha()]
    digits = sum(c.isdigit() for c in text)
    return len(letters) >= 4 and all(c.isupper() for c in letters) and digits <= 2


def _running_titles(plain: list[Heading]) -> set[str]:
    """Titles of plain headings that recur near the top of many pages (page headers)."""
    pages: dict[str, set[int]] = {}
    for h in plain:
        if h.line < RUNNING_LINES:
            pages.setdefault(h.title.upper(), set()).add(h.page)
    return {title for title, seen in pages.items() if len(seen) >= RUNNING_PAGES}


def _mark_groups(heads: list[Heading], body_after: list[bool]) -> list[Heading]:
    """Flag group headings: directly followed (no body text between) by one of their level."""
    out = []
    for i, head in enumerate(heads):
        nxt = heads[i + 1] if i + 1 < len(heads) else None
        group = nxt is not None and nxt.level == head.level and not body_after[i]
        out.append(replace(head, group=group) if group else head)
    return out


def _lines(pages: list[str], markdown: bool) -> Iterator[tuple[Heading | None, bool]]:
    """Per line: the heading it is (markdown, or plain-text cues) or None, and whether it has
    text."""
    for pno, text in enumerate(pages, start=1):
        top = True
        for lno, line in enumerate(text.splitlines()):
            head = None
            md = _MD_HEADING.match(line) if markdown else None
            if md and _clean(md.group(2)):
                head = Heading(_clean(md.group(2)), len(md.group(1)), pno, lno, top)
            elif markdown:
                pass
            elif _PART_HEADING.match(line) and len(line.strip()) <= 100:
                head = Heading(_clean(line), 1, pno, lno, top)
            elif _ITEM_HEADING.match(line) and len(line.strip()) <= 100:
                head = Heading(_clean(line), 2, pno, lno, top)
            elif _caps_heading(line):
                head = Heading(_clean(line), 3, pno, lno, top)
            yield head, bool(line.strip())
            top = top and not line.strip()


def _scan(pages: list[str], markdown: bool) -> list[Heading]:
    """Headings in order (plain-text ones without boilerplate and running headers), with group
    headings flagged."""
    lines = list(_lines(pages, markdown))
    skip = set() if markdown else _running_titles([h for h, _ in lines if h is not None])
    heads: list[Heading] = []
    body: list[bool] = []  # whether text follows each heading before the next one
    for head, has_text in lines:
        if head is None:
            if has_text and body:
                body[-1] = True
        elif heads and _repeats(heads[-1], head):
            body[-1] = True  # the section goes on over this page
        elif markdown or not (head.title.upper() in skip or _BOILERPLATE.match(head.title)):
            heads.append(head)
            body.append(False)
    return _mark_groups(heads, body)


def _repeats(previous: Heading, head: Heading) -> bool:
    """`head` repeats the heading before it on a later page (a slide deck's title on every
    slide of a part): the section goes on, no new entry."""
    same = previous.title.upper() == head.title.upper() and previous.level == head.level
    return same and head.page > previous.page


def find_headings(pages: list[str]) -> list[Heading]:
    """Headings of a document given as page strings (markdown first, else plain-text cues)."""
    has_markdown = any(
        (found := _MD_HEADING.match(line)) and _clean(found.group(2))
        for text in pages
        for line in text.splitlines()
    )
    return _scan(pages, markdown=has_markdown)


def outline(pages: list[str], heads: list[Heading] | None = None) -> list[dict[str, Any]]:
    """Table of contents of page strings: `[{section, title, level, page_start, page_end}]`."""
    heads = find_headings(pages) if heads is None else heads
    if not heads:
        return page_entries(pages)
    entries = []
    for i, head in enumerate(heads):
        end_page = len(pages)
        for nxt in heads[i + 1 :]:
            if nxt.rank <= head.rank:
                end_page = max(head.page, nxt.page - 1) if nxt.top else nxt.page
                break
        entries.append(
            {
                "section": f"s{i + 1}",
                "title": head.title,
                "level": head.level,
                "page_start": head.page,
                "page_end": end_page,
            }
        )
    return entries


NO_TEXT_TITLE = "(no text)"


def _page_title(text: str) -> str:
    """A page's first non-blank line (a slide's title), else NO_TEXT_TITLE (a scanned page)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    title = _clean(first)
    return title[:TITLE_CHARS] if title else NO_TEXT_TITLE


def page_entries(pages: list[str]) -> list[dict[str, Any]]:
    """The toc of a document without headings: one pseudo-section per page titled by its first
    line, consecutive pages with the same title (a slide deck's part, or pages without text) as
    one section."""
    entries: list[dict[str, Any]] = []
    for n, text in enumerate(pages, start=1):
        title = _page_title(text)
        if entries and entries[-1]["title"] == title:
            entries[-1]["page_end"] = n
            continue
        entries.append(
            {"section": f"p{n}", "title": title, "level": 1, "page_start": n, "page_end": n}
        )
    return entries


def _span(
    heads: list[Heading], index: int, num_pages: int, page_lines: Callable[[int], list[str]]
) -> list[tuple[int, str]]:
    """(page, line) pairs from heading `index` up to the next heading of its level or above."""
    head = heads[index]
    stop = next((h for h in heads[index + 1 :] if h.rank <= head.rank), None)
    lines: list[tuple[int, str]] = []
    last_page = num_pages
    if stop is not None:
        last_page = stop.page - 1 if stop.top else stop.page
    for pno in range(head.page, last_page + 1):
        text = page_lines(pno)
        first = head.line if pno == head.page else 0
        last = stop.line if stop and pno == stop.page else len(text)
        lines.extend((pno, line) for line in text[first:last])
    return lines


def paragraphs(lines: list[tuple[int, str]]) -> list[dict[str, Any]]:
    """Blank-line-separated paragraphs of (page, line) pairs, each with its starting page."""
    out: list[dict[str, Any]] = []
    block: list[str] = []
    start_page = 0

    def flush() -> None:
        if block:
            out.append({"paragraph": len(out), "text": "\n".join(block), "page": start_page})
            block.clear()

    prev_page = None
    for pno, line in lines:
        if not line.strip() or (prev_page is not None and pno != prev_page):
            flush()
        if line.strip():
            if not block:
                start_page = pno
            block.append(line.rstrip())
        prev_page = pno
    flush()
    return out


def match_section(entries: list[dict[str, Any]], section: str | int, doc: str) -> int:
    """Index of a section given by id (`s3`, `p2`, or 3) or by a case-insensitive title part."""
    key = str(section).strip()
    if key.isdigit():
        key = f"{entries[0]['section'][0]}{key}" if entries else key
    for i, entry in enumerate(entries):
        if entry["section"].lower() == key.lower():
            return i
    wanted = key.lower()
    for i, entry in enumerate(entries):
        if wanted and wanted in entry["title"].lower():
            return i
    raise CorpusError(f"document {doc!r} has no section {section!r} (see toc({doc!r}))")


def _section_lines(
    heads: list[Heading],
    entries: list[dict[str, Any]],
    index: int,
    num_pages: int,
    page_lines: Callable[[int], list[str]],
) -> list[tuple[int, str]]:
    if not heads:
        entry = entries[index]
        pages = range(entry["page_start"], entry["page_end"] + 1)
        return [(n, line) for n in pages for line in page_lines(n)]
    return _span(heads, index, num_pages, page_lines)


def section_paragraphs(
    pages: list[str], section: str | int, doc: str = "document"
) -> list[dict[str, Any]]:
    """All paragraphs of one section of page strings (pseudo-sections are whole pages)."""
    heads = find_headings(pages)
    entries = outline(pages, heads)
    index = match_section(entries, section, doc)
    lines = _section_lines(heads, entries, index, len(pages), lambda n: pages[n - 1].splitlines())
    return paragraphs(lines)


@dataclass(frozen=True)
class _Outline:
    heads: list[Heading]
    entries: list[dict[str, Any]]


class _OutlineCache:
    """Bounded LRU of per-document outlines, so repeated toc() calls do not re-scan pages."""

    def __init__(self) -> None:
        self._items: OrderedDict[tuple[str, str], _Outline] = OrderedDict()

    def get(self, corpus: PageSource, doc: str) -> _Outline:
        path = getattr(corpus, "path", None)
        key = (str(path) if path is not None else f"mem:{id(corpus)}", doc)
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        pages = corpus.pages(doc, 1, corpus.num_pages(doc))
        heads = find_headings(pages)
        value = _Outline(heads, outline(pages, heads))
        self._items[key] = value
        if len(self._items) > _CACHE_SIZE:
            self._items.popitem(last=False)
        return value


_cache = _OutlineCache()


def toc(corpus: PageSource, doc: str) -> list[dict[str, Any]]:
    """Table of contents of `doc`: `[{section, title, level, page_start, page_end}]`."""
    return [dict(entry) for entry in _cache.get(corpus, doc).entries]


def read_section(
    corpus: PageSource, doc: str, section: str | int, start: int = 0, end: int | None = None
) -> list[dict[str, Any]]:
    """Paragraphs `start:end` of a section of `doc`: `[{paragraph, text, page}]`.

    `section` is an id from `toc(doc)` or a case-insensitive part of a title. Paragraph numbers
    are positions within the section, so a long section can be read in slices.
    """
    cached = _cache.get(corpus, doc)
    index = match_section(cached.entries, section, doc)
    entry = cached.entries[index]
    first = entry["page_start"]
    texts = corpus.pages(doc, first, entry["page_end"])
    lines = _section_lines(
        cached.heads,
        cached.entries,
        index,
        entry["page_end"],
        lambda n: texts[n - first].splitlines(),
    )
    return paragraphs(lines)[start:end]
