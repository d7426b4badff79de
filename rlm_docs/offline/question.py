"""The host's reading of a question: its content words, years, quarter, unit and rounding,
and the financial statements it needs.

These run on the host when the offline root writes its REPL code; their results go into the
cell as the `plan` (`rlm_docs.offline.root.plan`), so the sandbox code works from data.
"""

import re

from rlm_docs.offline.repl.statements import STATEMENT_TITLES

_STOP_WORDS = """
a about above after all also an and any are as assume at based be been being below both but
by can company company's could data did do does during each either for from had has have how
however i if in information into is it its latest more most no not of on or other our out
over per please primarily question questions reported same shown should so statement
statements than that the their them then there these they this those through to under up us
using was we were what when where which while who whom why will with within would year years
you your following answer analyst public equities round decimal places usd billions millions
thousands percent percentage based provide give calculate compute state explain fiscal fy
value much many
"""
_STOP = set(_STOP_WORDS.split())
QUANT = re.compile(
    r"\b(how much|how many|what (?:is|was|were|are) the (?:amount|value|total|number)|amount|"
    r"ratio|margin|rate|percent|percentage|usd|\$|revenue|income|expense|cost|cash|capex|"
    r"assets|liabilit|eps|earnings|sales|dividend|debt|price|billion|million)",
    re.IGNORECASE,
)
# Finance abbreviations a reader must expand to find the line items that spell them out.
EXPANSIONS = {
    "ppne": "property plant equipment net",
    "pp&e": "property plant equipment",
    "capex": "capital expenditures purchases property plant equipment",
    "eps": "earnings per share",
    "cogs": "cost of goods sold",
    "sg&a": "selling general administrative",
    "d&a": "depreciation amortization",
    "ebitda": "operating income depreciation amortization",
    "opex": "operating expenses",
    "fcf": "free cash flow operating activities capital expenditures",
    "roa": "return on assets net income total assets",
    "dpo": "days payable accounts payable cost of goods sold",
    "dso": "days sales outstanding accounts receivable revenue",
    "margin": "margin revenue",
    "liquidity": "current assets current liabilities",
    "leverage": "debt equity",
}
STATEMENT_CUES = {
    "balance": r"balance sheet|financial position|inventor|total assets|current (?:assets|"
    r"liabilities)|ppne|pp&e|working capital|accounts payable|receivable|quick ratio",
    "income": r"income statement|statement of income|p&l|statement of operations|revenue|"
    r"net sales|cogs|cost of (?:goods|sales|revenue)|operating income|gross (?:margin|profit)|"
    r"net income|net earnings|\beps\b|earnings per share",
    "cash": r"cash flow|operating activities|capex|capital expenditure|depreciation|free cash|"
    r"dividends paid|cash from operations",
}
_ORDINAL_QUARTER = {"first": "1", "second": "2", "third": "3", "fourth": "4"}


def terms(text: str) -> list[str]:
    """Content words of a question, in order, without duplicates or boilerplate.

    `FY2018` becomes `2018`; other pure numbers are dropped (they rarely name the topic).
    """
    seen: dict[str, None] = {}
    for word in re.findall(r"[a-z0-9][a-z0-9&'\-]*", text.lower()):
        word = re.sub(r"^fy(?=\d{4}$)", "", word.strip("'-"))
        is_year = re.fullmatch(r"(?:19|20)\d{2}", word) is not None
        if len(word) > 1 and word not in _STOP and (is_year or re.search(r"[a-z]", word)):
            seen.setdefault(word, None)
    for word in list(seen):
        for extra in EXPANSIONS.get(word, "").split():
            seen.setdefault(extra, None)
    return list(seen)


def years(text: str) -> list[str]:
    """Four-digit years mentioned (`FY2018` and `2018` alike)."""
    return list(dict.fromkeys(re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", text)))


def quarter_of(text: str) -> str:
    """The fiscal quarter named ("Q2", "second quarter"; a first half "H1" ends with Q2), or ""."""
    low = text.lower()
    found = re.search(r"\bq([1-4])\b", low)
    if found:
        return found.group(1)
    found = re.search(r"\b(first|second|third|fourth) (?:fiscal )?quarter", low)
    if found:
        return _ORDINAL_QUARTER[found.group(1)]
    return "2" if re.search(r"\bh1\b|first half", low) else ""


def asked_unit(text: str) -> str:
    """The scale an amount is asked in ("Answer in USD billions" -> "billions"), or ""."""
    found = re.search(r"\b(?:usd|us\$|\$|dollars?)\s*(thousands|millions|billions)\b", text, re.I)
    found = found or re.search(r"\bin (?:units of )?(thousands|millions|billions)\b", text, re.I)
    return found.group(1).lower() if found else ""


def asked_decimals(text: str) -> int | None:
    """Decimal places asked for ("round to two decimal places" -> 2), else None."""
    # `\b`: a match starts only where a word does, so a long word is scanned once (without it,
    # every position inside a 20,000-letter word retried the whole word: quadratic)
    found = re.search(r"\b(\w+) decimal places?", text, re.I)
    if not found:
        return None
    word = found.group(1).lower()
    digits = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}
    return int(word) if word.isdigit() else digits.get(word)


def statement_titles(text: str) -> list[str]:
    """Heading patterns of the financial statements a question names or whose line items it
    asks about (see STATEMENT_CUES)."""
    low = text.lower()
    return [STATEMENT_TITLES[k] for k, cue in STATEMENT_CUES.items() if re.search(cue, low)]
