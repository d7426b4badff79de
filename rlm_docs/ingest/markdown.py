"""Markdown with explicit page separators.

Without `--separator`, pages are split at form feeds (\\f), exactly as for pdftotext output; a
file without any is read as one page, with a warning.

With `--separator LINE` (e.g. `---`, `<!-- page -->`), a page break is a line equal to LINE
(ignoring surrounding spaces). MADQA's corpus uses `---`, which markdown also uses for a
horizontal rule (`---` after a blank line), a setext heading underline (`Title` then `---`) and
table delimiter rows (`|---|---|`). The rule, when LINE is a thematic break (`---`, `***`,
`___`, ...):

- a delimiter row never matches (it is not exactly LINE);
- a separator line directly under a non-blank line is a setext heading underline, not a break;
- a separator line after a blank line (or at the start) is a page break.

So a horizontal rule inside a page must be written differently from the separator (`***` or
`___` when the separator is `---`). Blank lines around a break belong to neither page (each
page is stripped of leading/trailing blank lines), and a separator before the first text or
after the last text does not create an empty page. Page counts that look implausible (pages
far shorter than the median, which is what a misread horizontal rule produces) are reported.
"""

import re
from pathlib import Path
from statistics import median

from rlm_docs.corpus.document import Document
from rlm_docs.ingest.pdftotext import split_form_feeds
from rlm_docs.ingest.source import ReadResult, document_name, warn_empty_pages

_THEMATIC = re.compile(r"^ {0,3}([-*_])(?: *\1){2,} *$")
_SHORT_RATIO = 0.05


def split_separator(text: str, separator: str) -> list[str]:
    """Pages of `text` split at `separator` lines by the rule in the module docstring."""
    sep = separator.strip()
    thematic = bool(_THEMATIC.match(sep))
    pages: list[list[str]] = [[]]
    previous_blank = True
    for line in text.split("\n"):
        if line.strip() == sep and (previous_blank or not thematic):
            pages.append([])
            previous_blank = True
            continue
        pages[-1].append(line)
        previous_blank = not line.strip()
    out = ["\n".join(lines).strip("\n") for lines in pages]
    if len(out) > 1 and not out[0].strip():
        out.pop(0)
    if len(out) > 1 and not out[-1].strip():
        out.pop()
    return out


def short_pages(pages: list[str]) -> list[int]:
    """1-based numbers of non-empty pages under 5% of the median page length."""
    if len(pages) < 3:
        return []
    mid = median(len(p) for p in pages)
    return [i for i, p in enumerate(pages, 1) if p.strip() and len(p) < _SHORT_RATIO * mid]


def underlines(text: str, separator: str) -> int:
    """How many lines equal to `separator` sit directly under a text line (read as setext
    heading underlines, not page breaks, when the separator is a thematic break)."""
    sep = separator.strip()
    previous = ""
    count = 0
    for line in text.split("\n"):
        if line.strip() == sep and previous.strip() and _THEMATIC.match(sep):
            count += 1
        previous = line
    return count


def _not_found(path: Path, text: str, separator: str) -> str:
    """Why `separator` split nothing: absent, or every occurrence read as a heading underline."""
    sep = separator.strip()
    under = underlines(text, separator)
    if not under:
        return f"{path}: separator {sep!r} not found; read as one page"
    return (
        f"{path}: all {under} {sep!r} line(s) sit directly under a text line, so they were read "
        f"as markdown heading underlines, not page breaks; read as one page. Put a blank line "
        f"before each separator, or mark pages with a line that is not a markdown rule (e.g. "
        f"--separator '<!-- page -->')"
    )


def read_markdown(path: Path, text: str, separator: str | None, warnings: list[str]) -> ReadResult:
    if separator is None:
        pages = split_form_feeds(text)
        if len(pages) == 1:
            warnings.append(
                f"{path}: no form feed page breaks; read as one page "
                "(pass --separator LINE if pages are separated by a line such as ---)"
            )
    else:
        pages = split_separator(text, separator)
        if len(pages) == 1:
            warnings.append(_not_found(path, text, separator))
        short = short_pages(pages)
        if short:
            shown = ", ".join(map(str, short[:10]))
            warnings.append(
                f"{path}: page(s) {shown} are much shorter than the median page; a horizontal "
                f"rule may have been taken for a page break (write in-page rules unlike "
                f"{separator.strip()!r})"
            )
    warn_empty_pages(path, pages, warnings)
    return ReadResult([Document(document_name(path), pages, str(path))], "markdown", warnings)
