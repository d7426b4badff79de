"""Corpus helpers offered to model code: plain functions over a `Corpus`, returning JSON-able data.

The sandbox worker binds them in its namespace (and as methods of the `corpus` facade); the host
can call `make_helpers` too, so non-sandboxed systems (the baselines) offer the same tools.
Unknown documents raise `CorpusError` listing close names (from `Corpus`).
"""

import bisect
import functools
import itertools
import json
import re
import types
from collections.abc import Callable
from typing import Any

from rlm_docs.corpus import Corpus, sections, tables
from rlm_docs.corpus.compact import compact
from rlm_docs.corpus.lines import page_lines
from rlm_docs.corpus.select import select
from rlm_docs.errors import CorpusError
from rlm_docs.linear_regex import compile_linear

GREP_LINE_CHARS = 300

# Caps of helpers run on the host (`make_helpers(host=True)`: the MCP server), where no cell's
# memory limit bounds what a call builds: hits per grep/search, context lines each side of a
# grep hit, and characters of any one result (as JSON).
HOST_MAX_HITS = 200
HOST_MAX_CONTEXT = 5
HOST_MAX_RESULT_CHARS = 1_000_000
HOST_MAX_WRAP_MATCHES = 20_000  # matches one grep walks looking for hits across line breaks


def _check_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return value


class ReadLog(list[list[Any]]):
    """`[[doc, page], ...]` of the pages read with `page`/`pages`/`lines`/`read_section`, in first-read
    order without repeats: the evidence a run falls back on when the model cites nothing. The
    helpers record into it themselves and the worker holds it outside the namespace
    (`Sandbox.pages_read()`; model code gets copies from `pages_read()`), so model code can
    neither rebind, delete nor edit what the host reads."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[tuple[str, int]] = set()

    def add(self, doc: str, number: int) -> None:
        if (doc, number) not in self._seen:
            self._seen.add((doc, number))
            self.append([doc, number])


WRAP_LINES = 3  # a hit across line breaks spans at most this many lines


def flowed(text: str) -> tuple[str, list[int]]:
    """`text` with each line break (and the spaces around it) read as one space, and the offset
    where each line starts in it: how a label wrapped over table lines reads as one phrase."""
    lines = [line.strip() for line in text.split("\n")]
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    return " ".join(lines), starts


def screened(regex: re.Pattern[str], text: str, raw: bool) -> bool:
    """Whether page `text` (raw) can hold a grep hit, checked without compacting it (the costly
    step, done only for pages that pass): per line, on the raw lines or (for compact text) with
    their layout indentation stripped, then across line breaks as `flowed` joins them."""
    lines = [line.strip() for line in text.split("\n")]
    return bool(regex.search(text if raw else "\n".join(lines)) or regex.search(" ".join(lines)))


def wrapped_hits(
    regex: re.Pattern[str], lines: list[str], budget: list[int] | None = None
) -> list[tuple[int, str, int]]:
    """`(first line index, its lines, column)` of each match that crosses a line break (at most
    WRAP_LINES lines, never a blank line): the hits a per-line search cannot see. Why: table
    labels wrap (lines "Research and", "development", "expenses  $ 2,294") and a model greps
    the phrase. The lines are given as the page has them (joined by line breaks, so the text is
    found in the page) and `column` is where the match starts in the first one. `budget`
    (`[matches left]`, spent here): on the host, the matches one grep call may walk through,
    since a pattern such as `.` matches millions of times."""
    if len(lines) < 2:
        return []
    text, starts = flowed("\n".join(lines))
    out = []
    for m in regex.finditer(text):
        if budget is not None:
            budget[0] -= 1
            if budget[0] < 0:
                break
        first = bisect.bisect_right(starts, m.start()) - 1
        last = bisect.bisect_right(starts, max(m.end() - 1, m.start())) - 1
        spanned = lines[first : last + 1]
        if first < last < first + WRAP_LINES and all(line.strip() for line in spanned):
            indent = len(lines[first]) - len(lines[first].lstrip())
            out.append((first, "\n".join(spanned), indent + m.start() - starts[first]))
    return out


def page_block(doc: str, number: int, text: str) -> str:
    """One page of `pages()` output: a header naming what to cite, then the text."""
    return f"=== {doc} page {number} ===\n{text}"


def make_helpers(
    corpus: Corpus, reads: ReadLog | None = None, seen: ReadLog | None = None, *, host: bool = False
) -> dict[str, Callable[..., Any]]:
    """`files page pages lines search grep locate toc read_section` bound to `corpus`; pages read are
    recorded in `reads` and pages named by `search`/`grep`/`locate` results in `seen`, when
    given (what a run looked at, for its decomposition record).

    `host=True`: for callers outside a sandbox cell (the MCP server), whose time and memory
    limits do not apply there: grep matches with RE2 (`rlm_docs.linear_regex`: linear time),
    `max_hits`/`k` and `context` are capped (HOST_MAX_HITS, HOST_MAX_CONTEXT) and a result over
    HOST_MAX_RESULT_CHARS is refused with a CorpusError saying to narrow the call.

    Text comes back compact (`rlm_docs.corpus.compact`: layout padding removed, empty pages
    marked) unless `raw=True`. `doc` arguments take a name, a name pattern or a list
    (`rlm_docs.corpus.select`).
    """
    log = reads if reads is not None else ReadLog()
    looked = seen if seen is not None else ReadLog()

    def shown(text: str, raw: bool) -> str:
        return text if raw else compact(text)

    def files(pattern: str | list[str] | None = None) -> list[dict[str, Any]]:
        """Documents `[{name, pages, tokens}]` in corpus order (plus `company`, `kind`,
        `period` and `period_end` when the store's metadata has them), all or those whose name
        matches `pattern`. `period` is the data set's label, which need not be the fiscal
        period (KG-RAG's `2023 Q3 NVDA` is NVIDIA's fiscal Q3 2024): `period_end`, the date the
        filing covers up to, is passed on as the metadata gives it, never inferred."""
        names = select(corpus, pattern, strict=False)
        wanted = None if names is None else set(names)
        out = []
        for d in corpus.documents:
            if wanted is not None and d.name not in wanted:
                continue
            row: dict[str, Any] = {"name": d.name, "pages": d.num_pages, "tokens": d.tokens}
            for key, field in (("company", "company"), ("kind", "doc_type"), ("period", "period")):
                value = getattr(d, field, "")
                if value:
                    row[key] = value
            end = (getattr(d, "meta", None) or {}).get("period_end")
            if end:
                row["period_end"] = str(end)
            out.append(row)
        return out

    def continued(name: str, number: int, text: str) -> str:
        """`text` (page `number`, shown) plus the hint that its table goes on to the next page,
        when it does (`rlm_docs.corpus.tables`)."""
        if number >= corpus.num_pages(name):
            return text
        if not tables.continues(corpus.page(name, number), corpus.page(name, number + 1)):
            return text
        return f"{text}\n{tables.hint(number + 1)}"

    def page(doc: str, n: int, raw: bool = False) -> str:
        """Text of page `n` (1-based) of `doc`, with a last line `[table continues on page
        N+1]` when a table at its end goes on to the next page."""
        text = corpus.page(doc, _check_int(n, "page number"))
        name = _resolve(doc)
        log.add(name, n)
        return continued(name, n, shown(text, raw))

    def pages(doc: str, start: int, end: int, raw: bool = False) -> str:
        """Pages `start`..`end` (inclusive, 1-based) of `doc` as one string, each page under a
        `=== DOC page N ===` line (the page to cite); the last page says when its table goes
        on past `end`, as `page` does."""
        texts = corpus.pages(doc, _check_int(start, "start"), _check_int(end, "end"))
        name = _resolve(doc)
        blocks = []
        for number, text in enumerate(texts, start):
            log.add(name, number)
            body = shown(text, raw)
            blocks.append(
                page_block(name, number, continued(name, number, body) if number == end else body)
            )
        return "\n\n".join(blocks)

    def lines(
        doc: str | list[str] | None = None,
        start: int = 1,
        end: int | None = None,
        raw: bool = False,
    ) -> list[dict[str, Any]]:
        """The non-blank lines of pages `start`..`end` (1-based, inclusive; `end=None`: the
        last page) of each document `doc` selects (None: all): `[{file, page, line, text}]`,
        `line` as `grep` numbers it. A line cut by a page boundary comes back whole, on the page
        it starts on, with `continued`: the page it ends on (`rlm_docs.corpus.lines`). Every
        page returned counts as read."""
        first = _check_int(start, "start")
        out: list[dict[str, Any]] = []
        for name in select(corpus, doc) or corpus.names:
            count = corpus.num_pages(name)
            last = count if end is None else min(_check_int(end, "end"), count)
            if first > last:
                continue
            texts = corpus.pages(name, first, last)
            for number in range(first, last + 1):
                log.add(name, number)
            out += page_lines(name, enumerate(texts, first), lambda t: shown(t, raw))
        return out

    def search(
        query: str, k: int = 5, doc: str | list[str] | None = None, raw: bool = False
    ) -> list[dict[str, Any]]:
        """Top-`k` pages by BM25: `[{file, page, score, title, snippet}]`, optionally within
        the documents `doc` names; `title` is the page's heading or table title ('' if none)."""
        if not isinstance(query, str):
            raise TypeError("search() query must be a string")
        k = min(_check_int(k, "k"), HOST_MAX_HITS) if host else _check_int(k, "k")
        hits = corpus.search(query, k=k, document=select(corpus, doc))
        for h in hits:
            looked.add(h.document, h.page)
        return [
            {
                "file": h.document,
                "page": h.page,
                "score": round(float(h.score), 4),
                "title": getattr(h, "title", ""),
                "snippet": shown(h.snippet, raw),
            }
            for h in hits
        ]

    def grep(
        pattern: str,
        doc: str | list[str] | None = None,
        max_hits: int = 50,
        context: int = 0,
        raw: bool = False,
    ) -> list[dict[str, Any]]:
        """Regex search over pages: `[{file, page, line, text, offset}]`, one hit per matching
        line (`line` 1-based within the page text that `page(doc, n, raw)` returns, `offset`
        where the match starts in that text, and `text` the matching line as that text has it,
        so `page(doc, n).find(hit["text"])` finds it); a hit on a table row also has `header`, the
        row's column header line (years) above it (`tables.column_header`). With
        `context=N`, each hit also has `context`: the N lines before and after, the hit's line
        marked `>`. Case-sensitive Python regex (`(?i)` ignores case), matched per line of the
        text `raw` selects and also across line breaks, which read as one space: a table label
        wrapped over lines ("Research and" above "development") is found by "Research and
        development", and such a hit's `text` is its lines with their line breaks (see
        `wrapped_hits`). Pages
        are screened on their raw text first (`screened`), so do not rely on runs of spaces; a
        pathological pattern is stopped by the cell's time limit.
        """
        if host:
            regex = compile_linear(pattern)
        else:
            try:
                regex = re.compile(pattern, re.MULTILINE)
            except (re.error, TypeError) as exc:
                raise CorpusError(f"grep(): invalid pattern {pattern!r}: {exc}") from None
        limit = _check_int(max_hits, "max_hits")
        around = _check_int(context, "context")
        if host:
            limit, around = min(limit, HOST_MAX_HITS), min(around, HOST_MAX_CONTEXT)
        names = select(corpus, doc) or corpus.names
        hits: list[dict[str, Any]] = []
        budget = [HOST_MAX_WRAP_MATCHES] if host else None
        for name in names:
            for number, text in enumerate(corpus.pages(name, 1, corpus.num_pages(name)), 1):
                if not screened(regex, text, raw):
                    continue
                lines = shown(text, raw).splitlines(keepends=True)
                starts = [0, *itertools.accumulate(len(line) for line in lines)]
                lines = [line.rstrip("\r\n") for line in lines]
                matched: dict[int, tuple[str, int]] = {}
                for i, line in enumerate(lines):
                    found = regex.search(line)
                    if found:
                        matched[i] = (line, found.start())
                for i, joined, column in wrapped_hits(regex, lines, budget):
                    matched.setdefault(i, (joined, column))
                for i in sorted(matched):
                    hit: dict[str, Any] = {"file": name, "page": number, "line": i + 1}
                    hit["text"] = matched[i][0].strip()[:GREP_LINE_CHARS]
                    hit["offset"] = starts[i] + matched[i][1]
                    header = tables.column_header(lines, i)
                    if header is not None:
                        hit["header"] = header[:GREP_LINE_CHARS]
                    if around > 0:
                        window = range(max(0, i - around), min(len(lines), i + around + 1))
                        hit["context"] = "\n".join(
                            ("> " if j == i else "  ") + lines[j][:GREP_LINE_CHARS] for j in window
                        )
                    hits.append(hit)
                    looked.add(name, number)
                    if len(hits) >= limit:
                        return hits
        return hits

    def locate(offset: int) -> dict[str, Any]:
        """The `{file, page}` that character `offset` of `context` belongs to."""
        name, number = corpus.locate(_check_int(offset, "offset"))
        looked.add(name, number)
        return {"file": name, "page": number}

    def _resolve(doc: str) -> str:
        corpus.num_pages(doc)  # raises CorpusError with close names
        return corpus.resolve(doc) or doc

    def toc(doc: str) -> list[dict[str, Any]]:
        """Table of contents of `doc`: `[{section, title, level, page_start, page_end}]`."""
        return sections.toc(corpus, _resolve(doc))

    def read_section(
        doc: str, section: str | int, start: int = 0, end: int | None = None, raw: bool = False
    ) -> list[dict[str, Any]]:
        """Paragraphs `start:end` of a section (id from `toc(doc)` or part of its title)."""
        name = _resolve(doc)
        paras = sections.read_section(corpus, name, section, start, end)
        for para in paras:
            log.add(name, para["page"])
            para["text"] = shown(para["text"], raw)
        return paras

    helpers: dict[str, Callable[..., Any]] = {
        "files": files,
        "page": page,
        "pages": pages,
        "lines": lines,
        "search": search,
        "grep": grep,
        "locate": locate,
        "toc": toc,
        "read_section": read_section,
    }
    return {name: _capped(fn) for name, fn in helpers.items()} if host else helpers


def _capped(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` refusing a result of over HOST_MAX_RESULT_CHARS characters (as JSON)."""

    @functools.wraps(fn)
    def capped(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        size = len(result) if isinstance(result, str) else len(json.dumps(result))
        if size > HOST_MAX_RESULT_CHARS:
            raise CorpusError(
                f"{fn.__name__}(): the result is {size:,} characters, over this server's limit "
                f"of {HOST_MAX_RESULT_CHARS:,}; ask for fewer pages or hits"
            )
        return result

    return capped


class CorpusHelpers(types.SimpleNamespace):
    """The `corpus` object of the namespace: the helper functions as methods, nothing else."""

    def __repr__(self) -> str:
        return f"<corpus helpers: {', '.join(sorted(vars(self)))}>"


def facade(helpers: dict[str, Callable[..., Any]]) -> CorpusHelpers:
    """Wrap helper functions in a `corpus` facade (no access to the Corpus object itself)."""
    return CorpusHelpers(**helpers)
