"""Whether a table runs on from one page to the next: the hint `page()` adds at a page's end.

A model that reads the page a table starts on does not know the table goes on: a table split
over two pages cost real-model runs an answer. Layout text shows a table as rows of cells set
apart by runs of spaces, so a page *continues a table* when its last lines are such rows and the
next page's first lines are too (a page number or a short running footer may sit between). The
test is cheap and conservative: it looks at a few lines at each side of the boundary only.
"""

import re

ROWS_AT_EDGE = 2  # table rows needed at the end of one page and the start of the next
EDGE_LINES = 6  # non-blank lines looked at, at each side of the boundary
_CELLS = re.compile(r"\S(?:\s{2,}|\t)\S")
_NUMBER = re.compile(r"\d")
_FOOTER = re.compile(r"^(?:page\s*)?[-\s]*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?[-\s]*$", re.I)


def is_row(line: str) -> bool:
    """A table row: two or more cells apart by runs of spaces (or a tab), one holding a digit."""
    text = line.strip()
    return bool(_CELLS.search(text)) and bool(_NUMBER.search(text))


def _edge(lines: list[str]) -> list[str]:
    """The first EDGE_LINES non-blank lines, page numbers left out."""
    kept = [line for line in lines if line.strip() and not _FOOTER.match(line.strip())]
    return kept[:EDGE_LINES]


def continues(page_text: str, next_text: str) -> bool:
    """Whether a table at the end of `page_text` goes on at the top of `next_text`."""
    tail = _edge(page_text.splitlines()[::-1])
    head = _edge(next_text.splitlines())
    if len(tail) < ROWS_AT_EDGE or not all(is_row(line) for line in tail[:ROWS_AT_EDGE]):
        return False
    return sum(is_row(line) for line in head) >= ROWS_AT_EDGE


def hint(next_page: int) -> str:
    """The line `page()` adds to a page whose table continues."""
    return f"[table continues on page {next_page}]"
