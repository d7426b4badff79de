"""Tables in layout text: whether one runs on to the next page (the hint `page()` adds at a
page's end), and the column header above a row (what `grep` shows with a hit on a row).

A model that reads the page a table starts on does not know the table goes on: a table split
over two pages cost real-model runs an answer. Layout text shows a table as rows of cells set
apart by runs of spaces, so a page *continues a table* when its last lines are such rows and the
next page's first lines are too (a page number or a short running header may sit between). The
test is cheap and conservative: it looks at a few lines at each side of the boundary only, and a
table that ends on its total row, or a next page whose rows sit under a caption, is a table that
ends (in FinanceBench filings, most tables at a page's end are followed by another table).
"""

import re

ROWS_AT_EDGE = 2  # table rows needed at the end of one page and the start of the next
EDGE_LINES = 6  # non-blank lines looked at, at each side of the boundary
CAPTION_CHARS = 30  # a shorter line above the rows is a running header, a longer one a caption
_GAP = re.compile(r"\s{2,}|\t")
_NUMBER = re.compile(r"\d")
_TOTAL = re.compile(r"^\s*total\b", re.I)
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
_OTHER_NUMBER = re.compile(r"\d+")
HEADER_LOOKBACK = 40  # lines above a row searched for its column header
_FOOTER = re.compile(r"^(?:page\s*)?[-\s]*\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?[-\s]*$", re.I)


def is_row(line: str) -> bool:
    """A table row: two or more cells apart by runs of spaces (or a tab), a cell after the
    first holding a digit (not a numbered paragraph: `1.8.    Plan I means ...`)."""
    cells = _GAP.split(line.strip())
    return len(cells) >= 2 and any(_NUMBER.search(cell) for cell in cells[1:])


def _edge(lines: list[str]) -> list[str]:
    """The first EDGE_LINES non-blank lines, page numbers left out."""
    kept = [line for line in lines if line.strip() and not _FOOTER.match(line.strip())]
    return kept[:EDGE_LINES]


def continues(page_text: str, next_text: str) -> bool:
    """Whether a table at the end of `page_text` goes on at the top of `next_text`: rows at
    both edges, the page's last row not a total (a table ends on its total), and no title line
    (a non-row line of CAPTION_CHARS or more: a new table's caption) above the next page's
    first row."""
    tail = _edge(page_text.splitlines()[::-1])
    head = _edge(next_text.splitlines())
    if len(tail) < ROWS_AT_EDGE or not all(is_row(line) for line in tail[:ROWS_AT_EDGE]):
        return False
    if _TOTAL.match(tail[0]):
        return False
    first = next((i for i, line in enumerate(head) if is_row(line)), len(head))
    if any(len(line.strip()) >= CAPTION_CHARS for line in head[:first]):
        return False
    return sum(is_row(line) for line in head) >= ROWS_AT_EDGE


def hint(next_page: int) -> str:
    """The line `page()` adds to a page whose table continues."""
    return f"[table continues on page {next_page}]"


def column_header(lines: list[str], index: int) -> str | None:
    """The column header of the table row `lines[index]`: the nearest line above it (within
    HEADER_LOOKBACK lines) whose cells (apart by runs of spaces) name years in two or more of
    them and no other numbers but short ones (`2018   2017`, `December 31, 2018   2017`; not a
    sentence that mentions two years). A row's cells say nothing of which column is
    which period; without the header a model reads the whole page to learn the column order.
    None when the line is not a row, or no such header is near."""
    if not is_row(lines[index]):
        return None
    for line in reversed(lines[max(0, index - HEADER_LOOKBACK) : index]):
        cells = _GAP.split(line.strip())
        if sum(bool(_YEAR.search(cell)) for cell in cells) < 2:  # years in two cells
            continue
        others = _OTHER_NUMBER.findall(_YEAR.sub(" ", line))
        if all(len(number) <= 2 for number in others):
            return line.strip()
    return None
