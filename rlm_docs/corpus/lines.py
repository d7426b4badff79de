"""Record-per-line text across page boundaries: what `lines()` in the REPL returns.

Many corpora hold one record per line (a log, a generated window of dated entries, a CSV
export), and a page boundary is only where the text was cut. A model that splits `pages()` text
into lines itself must strip the page headers and notice a record cut in two; `page_lines` does
both: every non-blank line of the pages asked for, with its page and its line number within that
page's text as `page()` shows it (the number `grep` gives, so a line can be found again).

A line cut by a page boundary is re-joined: a page whose text does not end with a line break
stops in the middle of a line, which goes on in the first line of the next page (unless that
page starts with a line break). The joined line belongs to the page where it starts (cite that
one) and has `continued`: the page it ends on.
"""

from collections.abc import Callable, Iterable
from typing import Any


def page_lines(
    name: str, texts: Iterable[tuple[int, str]], shown: Callable[[str], str]
) -> list[dict[str, Any]]:
    """`[{file, page, line, text}]` of the non-blank lines of `texts` (`(page, raw text)` in
    page order), each as `shown` renders its page (compact or raw); a line cut by a page
    boundary is joined (see the module docstring)."""
    out: list[dict[str, Any]] = []
    cut: tuple[dict[str, Any], str] | None = None  # an open line and the raw text it ended on
    for number, raw in texts:
        split = shown(raw).split("\n") if raw.strip() else []
        tail = None  # the line holding this page's last line
        for i, text in enumerate(split):
            if i == 0 and cut is not None and not raw.startswith(("\n", "\r")):
                line, before = cut
                space = " " if before[-1:].isspace() or raw[:1].isspace() else ""
                line["text"] = line["text"].rstrip() + space + text.lstrip()
                line["continued"] = number
                tail = line
            elif text.strip():
                tail = {"file": name, "page": number, "line": i + 1, "text": text}
                out.append(tail)
            else:
                tail = None
        ends_open = tail is not None and not raw.endswith(("\n", "\r"))
        cut = (tail, raw) if tail is not None and ends_open else None
    return out
