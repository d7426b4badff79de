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
KINDS = ("balance", "income", "cashflow", "equity", "form")
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
_CUES = ("statement", "balance", "sheet", "financial", "profit")  # in every statement name
_LETTERS = re.compile(r"[^a-z]+")
_LETTERS_DIGITS = re.compile(r"[^a-z0-9]+")
_NUMBER = re.compile(r"\(?\$?\d[\d,]*(?:\.\d+)?\)?")
_GAP = re.compile(r"\S {3,}\S")
_SPLIT = re.compile(r" {3,}")
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


def _cells(lines: list[str]) -> list[str]:
    """Lines split at runs of 3+ spaces: a title may share its line with the company name
    ("Consolidated Balance Sheets        Corning Incorporated")."""
    return [cell for line in lines for cell in _SPLIT.split(line) if cell]


def _clean(line: str) -> str:
    return " ".join(line.replace("*", "").replace("|", " ").split()).rstrip(":")[:TITLE_CHARS]


def _statement(line: str) -> str | None:
    """The statement a line is the title of: its name covers most of the line's letters, so
    "off-balance-sheet exposures" or "Balance Sheet that are Subject" do not count."""
    low = line.lower()
    if not any(word in low for word in _CUES):
        return None
    flat = _LETTERS.sub("", low)
    for kind, pattern in _KIND:
        m = pattern.search(flat)
        if m and m.end() - m.start() >= TITLE_SHARE * len(flat):
            return kind
    return None


def _heading_like(line: str) -> bool:
    """Short, starts upper-case, no sentence punctuation at the end, mostly letters, not a
    table row (aligned columns) or a company-name line (cheap tests first: this runs on
    every top line of every hit)."""
    if len(line) > 80 or line[-1] in ".,;" or not line[0].isupper() or len(line.split()) > 12:
        return False
    letters = sum(map(str.isalpha, line))
    if letters < 3 or letters < 0.6 * (len(line) - line.count(" ")):
        return False
    return not (_GAP.search(line) or _CORPORATE.search(line))


def page_title(text: str) -> str:
    """The page's heading or statement title ('' when its top shows none)."""
    return _title(_head_lines(text))


def _title(lines: list[str]) -> str:
    for line in lines:
        m = _MD_HEADING.match(line)
        if m:
            return _clean(m.group(1))
    for cell in _cells(lines):
        if _heading_like(cell) and _statement(cell):
            return _clean(cell)
    for line in lines:
        if _heading_like(line):
            return _clean(line)
    return ""


_FORM_PAGE = re.compile(
    r"^(?:signatures?|exhibitindex|indextoexhibits|exhibits?3[12]\w*|certifications?\w*"
    r"|powerofattorney)$"
)
_COVER = re.compile(r"securitiesandexchangecommission.*form(?:10k|10q|8k|20f)")


def _form_page(lines: list[str]) -> bool:
    """An SEC form's boilerplate page: the cover ("SECURITIES AND EXCHANGE COMMISSION ...
    FORM 8-K"), signatures, the exhibit index, officer certifications. They repeat the
    company name and dates a question gives, and never hold the answer."""
    flats = [_LETTERS_DIGITS.sub("", line.lower()) for line in lines[:HEAD_LINES]]
    return bool(_COVER.search("".join(flats))) or any(_FORM_PAGE.match(f) for f in flats[:4])


def page_kind(text: str) -> str | None:
    """What the page is: a financial statement ('balance', 'income', 'cashflow', 'equity'),
    i.e. a statement heading among the top lines of a page that is mostly figures; 'form' for
    an SEC form's boilerplate page; else None."""
    return _kind(_head_lines(text), text)


def title_and_kind(text: str) -> tuple[str, str | None]:
    """`(page_title(text), page_kind(text))`, reading the page's top lines once (ingest
    stores both for every page)."""
    lines = _head_lines(text)
    return _title(lines), _kind(lines, text)


def _kind(lines: list[str], text: str) -> str | None:
    if _form_page(lines):
        return "form"
    cells = [cell for cell in _cells(lines) if _heading_like(cell)]
    kind = next((k for k in map(_statement, cells) if k), None)
    if kind is None or len(_NUMBER.findall(text)) < MIN_FIGURES:
        return None
    return kind


_ASKED = (
    (
        "balance",
        r"balance\s+sheets?|statements?\s+of\s+(?:consolidated\s+)?financial\s+(?:position|condition)",
    ),
    (
        "income",
        r"income\s+statements?|statements?\s+of\s+(?:consolidated\s+)?(?:income|operations|earnings)"
        r"|\bp\s*&\s*l\b|profit\s+and\s+loss",
    ),
    ("cashflow", r"cash\s*flows?\s+statements?|statements?\s+of\s+cash\s*flows?"),
    ("equity", r"statements?\s+of\s+(?:changes\s+in\s+)?(?:share|stock)holders['’]?\s+equity"),
)
_IMPLIED = (
    (
        "balance",
        r"total\s+assets|current\s+assets|current\s+liabilities|total\s+liabilities|inventor(?:y|ies)"
        r"|pp\s*&\s*e|ppne|property,?\s+plant|accounts\s+(?:payable|receivable)|working\s+capital"
        r"|quick\s+ratio|current\s+ratio|debt|shareholders['’]?\s+equity|cash\s+and\s+cash",
    ),
    (
        "income",
        r"revenues?|net\s+sales|cogs|cost\s+of\s+(?:goods|sales|revenue)|gross\s+(?:margin|profit)"
        r"|operating\s+(?:income|margin|profit)|net\s+(?:income|earnings)|ebitda|\beps\b"
        r"|earnings\s+per\s+share|sg\s*&\s*a|interest\s+expense|effective\s+tax\s+rate",
    ),
    (
        "cashflow",
        r"capex|capital\s+expenditures?|cash\s+(?:from|provided\s+by)\s+operat|operating\s+cash\s+flow"
        r"|free\s+cash\s*flow|depreciation\s+and\s+amortization|dividends?\s+paid|repurchases?",
    ),
)
_ASKED_RE = [(k, re.compile(p)) for k, p in _ASKED]
_IMPLIED_RE = [(k, re.compile(p)) for k, p in _IMPLIED]


def asked_kinds(query: str) -> tuple[frozenset[str], frozenset[str]]:
    """The statements a question names ("based on the balance sheet", "P&L") and those its
    line items live in ("inventories" → balance sheet, "capex" → cash flow statement)."""
    low = query.lower()
    named = frozenset(k for k, r in _ASKED_RE if r.search(low))
    implied = frozenset(k for k, r in _IMPLIED_RE if r.search(low))
    return named, implied
