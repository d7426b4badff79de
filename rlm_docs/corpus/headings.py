"""What a page's top says: its title, and whether it is a financial statement.

A hit is only useful if the reader can tell which table a number comes from, so every hit
carries the page's `title`: the first markdown heading, else a statement title near the top
("Consolidated Balance Sheets"), else the first line that looks like a heading (short, no
sentence punctuation at the end, not a table row with aligned columns). pdftotext splits words
now and then ("Balance Shee t"), so statements are recognised on the squashed text (letters
only, lowercase) of the first lines.

`page_kind` names the primary financial statement a page *is* (its title is near the top and
the page is mostly figures), so a question that asks for "the balance sheet" or "the cash flow
statement" can be pointed at the statement itself rather than at prose or an index that
mentions it.
"""

import re

TITLE_CHARS = 100
HEAD_LINES = 8  # non-blank lines searched for a title or a statement heading
KINDS = ("balance", "income", "cashflow", "equity")
_STATEMENTS = (
    (
        "balance",
        r"balancesheets?|statements?of(?:consolidated)?financial(?:position|condition)"
        r"|statements?of(?:consolidated)?condition",
    ),
    (
        "income",
        r"statements?of(?:consolidated)?(?:operations|income|earnings)(?!and(?:comprehensive|retained))"
        r"|incomestatements?|statements?of(?:consolidated)?operationsandcomprehensive"
        r"|profitandloss",
    ),
    ("cashflow", r"statements?of(?:consolidated)?cashflows?|cashflowstatements?"),
    ("equity", r"statements?of(?:changesin)?(?:share|stock)?(?:holders|owners)?equity"),
)
_PREFIX = "(?:condensed)?(?:consolidated)?(?:combined)?"
_KIND = [(kind, re.compile(_PREFIX + f"(?:{pattern})")) for kind, pattern in _STATEMENTS]
TITLE_SHARE = 0.7  # of a line's letters the statement name must cover to be its title
_LETTERS = re.compile(r"[^a-z]+")
_NUMBER = re.compile(r"\(?\$?\d[\d,]*(?:\.\d+)?\)?")
_GAP = re.compile(r"\S {3,}\S")
_BOILERPLATE = re.compile(r"^(?:table of contents|index|contents|page \d+|\d+)$", re.IGNORECASE)
_CORPORATE = re.compile(
    r"\b(?:inc|incorporated|corporation|corp|company|co|ltd|plc|llc|subsidiaries|group)\.?$"
    r"|^quicklinks\b",
    re.IGNORECASE,
)
_MD_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
MIN_FIGURES = 24  # numbers on a page for it to count as a statement rather than prose


def _head_lines(text: str) -> list[str]:
    lines = []
    for raw in text[:4000].splitlines():
        line = raw.strip()
        if line and not _BOILERPLATE.match(line):
            lines.append(line)
            if len(lines) == HEAD_LINES:
                break
    return lines


def _clean(line: str) -> str:
    return " ".join(line.replace("*", "").replace("|", " ").split()).rstrip(":")[:TITLE_CHARS]


def _statement(line: str) -> str | None:
    """The statement a line is the title of: its name covers most of the line's letters, so
    "off-balance-sheet exposures" or "Balance Sheet that are Subject" do not count."""
    flat = _LETTERS.sub("", line.lower())
    for kind, pattern in _KIND:
        m = pattern.search(flat)
        if m and m.end() - m.start() >= TITLE_SHARE * len(flat):
            return kind
    return None


def _heading_like(line: str) -> bool:
    if (
        _GAP.search(line)
        or _CORPORATE.search(line)
        or len(line) > 80
        or line[-1] in ".,;"
        or not line[0].isupper()
    ):
        return False
    letters = sum(c.isalpha() for c in line)
    return letters >= 3 and letters >= 0.6 * len(line.replace(" ", "")) and len(line.split()) <= 12


def page_title(text: str) -> str:
    """The page's heading or statement title ('' when its top shows none)."""
    lines = _head_lines(text)
    for line in lines:
        m = _MD_HEADING.match(line)
        if m:
            return _clean(m.group(1))
    for line in lines:
        if _statement(line) and _heading_like(line):
            return _clean(line)
    for line in lines:
        if _heading_like(line):
            return _clean(line)
    return ""


def page_kind(text: str) -> str | None:
    """The financial statement this page is ('balance', 'income', 'cashflow', 'equity'), or
    None: a statement heading among the top lines of a page that is mostly figures."""
    lines = [line for line in _head_lines(text) if _heading_like(line)]
    kind = next((k for k in map(_statement, lines) if k), None)
    if kind is None or len(_NUMBER.findall(text)) < MIN_FIGURES:
        return None
    return kind
