"""The `offline` model: a deterministic, non-neural policy that needs no key and no weights.

It lets the quickstart, the demo and many tests run the whole RLM machinery for real (sandbox,
governor, trajectories) with no network. Its role is read from the request:

- **root**: the first message starts with `[rlm-docs:root NAME]` (the marker line of
  `prompts/docs.txt` and `prompts/madqa.txt`). Turn 1 writes genuine REPL code following a
  locate-then-read strategy:
  1. *locate the filing*: documents named `COMPANY_YEAR[Qn]_KIND` whose company the question
     names (words run together, a capitalised prefix such as "JPM", or initials such as
     "JnJ"), preferring the kind asked for (annual report unless a quarter, 8-K or earnings
     release is named), the latest year named (else the nearest earlier one; the latest
     filing when none is named), then the votes of a corpus-wide `search(question)`;
  2. *find pages*: `search(..., doc=...)` in the two likeliest filings for the question's
     terms and the title of the financial statement it names or whose line items it asks
     about; pages that look like that statement (title heading, many rows of numbers) rank
     first;
  3. *read*: one extractive sub-call per page with `llm_query_batched`;
  4. *decide*: score the readings (question terms covered, a number or year-column cell when
     an amount is asked, agreement across pages, statement page, likeliest filing), `cite()`
     the page, and state an amount in the unit and rounding the question asks for (the
     table's "in millions/thousands" applied, `$` kept, "(1,234)" negative);
  5. *compute* only what the question names: a defined ratio "A / B" (with "average B
     between FY1 and FY2"), a year-over-year change, a CAGR, an "X % margin" (or an N-year
     average of it), from the statement rows of the filing, citing every page used. Without
     every value the extractive answer stands.
  Under the no-sub-calls ablation (marker `[rlm-docs:root NAME no-sub-calls]`, a prompt that
  offers no `llm_query`), step 3 reads the pages in the REPL instead: each page's lines naming
  the most question terms; a generated-workload plan that needs sub-calls is not used then.
  The result goes in `final_answer` and in `answer["content"]` with `answer["ready"] = True`
  (the docs prompt's way to finish). The code prints, so the engine's confirmation turn shows
  the output, and turn 2 keeps the answer with `FINAL_VAR(final_answer)` (also on a forced last
  turn; `FINAL(No answer found in the documents.)` when nothing was printed as ready); with
  `confirm_final=False` the run ends after turn 1.
  With a plain-string `context` and no corpus (a child `rlm_query`), the code scores chunks of
  `context` instead of searching. Questions of the generated workloads (OOLONG aggregation and
  pairs, needle lookups) get the map-reduce or grep code of `offline_workloads` instead.
- **extract**: the first message starts with `[rlm-docs:extract]`; the reply is the JSON of a
  deterministic parse of the response (`rlm_docs.engine.extract.heuristic_answer`).
- **baseline**: the first message starts with `[rlm-docs:baseline NAME]` (the `bm25-agent` and
  `static-rag` prompts); the reply comes from `offline_baselines.baseline_reply`.
- **sub** (anything else): a classification prompt of `offline_workloads` is answered with
  the TREC rule set of `offline_trec`; any other prompt goes to an extractive reader. The
  prompt's `Question:` line (else its first line) is the question, the rest the passage; the reply is the best-matching sentences or
  table rows, verbatim (numbers and units kept), best first; words of the `Document:` name
  (the company) do not count as matches, since they are on every page.

Usage is counted with tiktoken; the cost is always 0. Nothing in the policy is keyed to a data
set's questions; accuracy is whatever it honestly scores (weak on open-ended questions, which
need judgement rather than extraction).
"""

import json
import re
import time
from typing import Any

from rlm_docs.models.base import Completion, Usage
from rlm_docs.models.offline_workloads import classification_reply, parse_task, task_code
from rlm_docs.tokens import count_message_tokens, count_tokens

ROOT_MARKER = "[rlm-docs:root"
BASELINE_MARKER = "[rlm-docs:baseline"
EXTRACT_MARKER = "[rlm-docs:extract]"
READY_MARKER = "OFFLINE_ANSWER_READY"
NOT_FOUND = "NO RELEVANT TEXT"
READ_PAGES = 4

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
_QUANT = re.compile(
    r"\b(how much|how many|what (?:is|was|were|are) the (?:amount|value|total|number)|amount|"
    r"ratio|margin|rate|percent|percentage|usd|\$|revenue|income|expense|cost|cash|capex|"
    r"assets|liabilit|eps|earnings|sales|dividend|debt|price|billion|million)",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.])\(?\$?\s?-?\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s?(?:%|percent|billion|million|thousand))?\)?"
    r"(?![\w])"
)
# Financial statements named in a question, and the words on their pages.
STATEMENTS = {
    "balance sheet": "consolidated balance sheets total assets total liabilities equity",
    "income statement": "consolidated statements of income operations revenue net income",
    "statement of income": "consolidated statements of income operations revenue net income",
    "p&l": "consolidated statements of income operations revenue net income",
    "cash flow": "consolidated statements of cash flows operating activities investing activities",
    "net sales": "consolidated statements of income operations net sales cost of sales",
    "revenue": "consolidated statements of income operations revenue cost of revenue",
    "net income": "consolidated statements of income operations net income per share",
}
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
# Page-heading patterns of the three primary statements, and the words (statement names or
# line items) in a question that say which statement holds its answer.
STATEMENT_TITLES = {
    "balance": r"balance sheets?|financial position|financial condition",
    "income": r"statements? of (?:consolidated )?(?:income|operations|earnings)|income statements?",
    "cash": r"statements? of (?:consolidated )?cash flows?",
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
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"])")


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


def words(text: str) -> list[str]:
    """Lowercase alphanumeric words in order, possessives dropped (for matching doc names)."""
    return [re.sub(r"'s$", "", w) for w in re.findall(r"[a-z0-9][a-z0-9']*", text.lower())]


def years(text: str) -> list[str]:
    """Four-digit years mentioned (`FY2018` and `2018` alike)."""
    return list(dict.fromkeys(re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", text)))


def proper_words(text: str) -> list[str]:
    """Capitalised words (lowercased) that are not boilerplate: candidate company names or
    abbreviations ("JPM", "MGM") whose prefix may start a document name."""
    found = re.findall(r"\b[A-Z][A-Za-z0-9&]*", text)
    return list(dict.fromkeys(w.lower() for w in found if w.lower() not in _STOP))


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
    found = re.search(r"(\w+) decimal places?", text, re.I)
    if not found:
        return None
    word = found.group(1).lower()
    digits = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4}
    return int(word) if word.isdigit() else digits.get(word)


# Line items a computation may need, as the row labels filings use for them.
LINE_ITEMS = {
    "revenue": r"(?:total )?(?:net )?(?:revenues?|sales)(?: and other income)?",
    "cogs": r"(?:total )?cost of (?:goods sold|sales|revenues?|products sold)",
    "capex": r"(?:purchases? of|payments for|additions to) property|capital expenditures",
    "cash from operations": r"net cash (?:provided by|from|generated by) (?:\(used in\) )?"
    r"operating activities",
    "operating income": r"(?:total )?operating (?:income|profit)|income from operations",
    "net income": r"(?:consolidated )?net (?:income|earnings)"
    r"(?: attributable to (?!noncontrolling)[a-z .&'-]+)?",
    "inventory": r"(?:total )?(?:merchandise )?inventor(?:y|ies)(?:,? net)?",
    "ppne": r"(?:net )?property,? (?:plant,? )?(?:and|&) equipment(?:,? (?:net|- net|—\s*net))?",
}
_ITEM_ALIASES = {
    "sales": "revenue",
    "net sales": "revenue",
    "total revenue": "revenue",
    "revenues": "revenue",
    "cost of goods sold": "cogs",
    "cost of sales": "cogs",
    "capital expenditures": "capex",
    "cash from operating activities": "cash from operations",
    "operating cash flow": "cash from operations",
    "pp&e": "ppne",
    "net ppne": "ppne",
    "inventories": "inventory",
}
_ITEM_NOISE = r"\b(?:fy\s?\d{2,4}|(?:19|20)\d\d|unadjusted|the|year end|of|for|[a-z]+'s)\b"


def line_item(text: str, years: list[str] | None = None) -> dict:
    """A line-item phrase as `{row: label regex, query: search words, years, titles: its
    statement's heading patterns}` (known items by the labels filings use for them)."""
    phrase = re.sub(_ITEM_NOISE, " ", text.lower().replace("(", " ").replace(")", " "))
    phrase = " ".join(re.findall(r"[a-z&]+", phrase))
    phrase = _ITEM_ALIASES.get(phrase, phrase)
    words = phrase.split() or [""]
    last = words[-1]
    tail = re.escape(last[:-1]) + ("(?:y|ies)" if last.endswith("y") else last[-1:] + "s?")
    generic = r",?\s+".join([re.escape(w) for w in words[:-1]] + [tail])
    row = LINE_ITEMS.get(phrase) or ("" if words[0] == "total" else r"(?:total )?") + generic
    label_words = (
        re.findall(r"[a-z]{3,}", row.replace("(?:", " ")) if phrase in LINE_ITEMS else words
    )
    return {
        "row": row,
        "query": " ".join(dict.fromkeys(label_words)),
        "years": years or [],
        "titles": statement_titles(phrase),
    }


def computation(question: str) -> dict | None:
    """The computation a question names explicitly, as data for the REPL code, else None:

    - `ratio`: "X is defined as: A / B" or "A divided by B" (A, B line items of the target
      year; "average B between FY1 and FY2" averages the two years' values);
    - `change`: "(year-over-year | percentage) change in X from FY1 to FY2" -> percent;
    - `margin`: "X % margin" or "X as a % of revenue" -> X / revenue in percent, and with
      "FY1 - FY2 N year average" the mean of each year's margin;
    - `cagr`: "N year X CAGR from FY1 to FY2" -> compound annual growth in percent.
    """
    q = question.lower()
    definitions = re.findall(r"defined as|define [a-z ]+? as", q)
    found = re.search(
        r"(?:defined as:?|define [a-z ]+? as)\s*([^.?;]+?)\s*(?:/|divided by)\s*([^.?;]+)", q
    )
    if found and len(definitions) == 1:
        parts = []
        for side in found.groups():
            if re.search(r"[+*]|\s-\s|\bdays?\b|\d{3}", re.sub(r"fy\s?\d{4}", "", side)):
                return None  # a compound formula: not attempted
            avg = re.search(r"average ([a-z&, ]+?) between fy\s?(\d{4}) and fy\s?(\d{4})", side)
            parts.append(
                line_item(avg.group(1), list(avg.groups()[1:])) if avg else line_item(side)
            )
        if not all(part["query"] for part in parts):
            return None
        return {"kind": "ratio", "num": parts[0], "den": parts[1]}
    found = re.search(
        r"(?:year-over-year|yoy|percent(?:age)?) change in ([a-z&, ]+?) from fy\s?(\d{4}) "
        r"to fy\s?(\d{4})",
        q,
    )
    if found and line_item(found.group(1))["query"]:
        return {"kind": "change", "item": line_item(found.group(1), list(found.groups()[1:]))}
    found = re.search(r"year ([a-z&, ]+?) cagr from fy\s?(\d{4}) to fy\s?(\d{4})", q)
    if found and line_item(found.group(1))["query"]:
        return {"kind": "cagr", "item": line_item(found.group(1), list(found.groups()[1:]))}
    found = re.search(
        r"([a-z&]+(?: [a-z&]+)?) (?:%|percent) margin|([a-z&]+(?: [a-z&]+)?) as a % of revenue", q
    )
    item = line_item(found.group(1) or found.group(2)) if found else None
    if not item or not item["query"]:
        return None
    margin = {"kind": "ratio", "num": item, "den": line_item("revenue"), "percent": True}
    span = re.search(r"fy\s?(\d{4})\s*-\s*fy\s?(\d{4}) \d year average", q)
    if span:
        first, last = int(span.group(1)), int(span.group(2))
        return margin | {"each": [str(y) for y in range(first, last + 1)]}
    return None if "average" in q else margin


def statement_titles(text: str) -> list[str]:
    """Heading patterns of the financial statements a question names or whose line items it
    asks about (see STATEMENT_CUES)."""
    low = text.lower()
    return [STATEMENT_TITLES[k] for k, cue in STATEMENT_CUES.items() if re.search(cue, low)]


def _stem(word: str) -> str:
    return word[:6] if len(word) > 6 else word


def _units(passage: str) -> list[tuple[int, str]]:
    """(line index, text) of prose sentences and table/layout rows, as they appear."""
    units: list[tuple[int, str]] = []
    for index, line in enumerate(passage.splitlines()):
        line = line.strip()
        if not line:
            continue
        if len(line) > 200 and "|" not in line:
            units.extend((index, s.strip()) for s in _SENTENCE.split(line) if s.strip())
        else:
            units.append((index, line))
    return units


def _year_column(lines: list[str], index: int, wanted: list[str]) -> str | None:
    """`YEAR: value` when row `index` is a table row under a header of years (nearest such line
    above) with one number per year, and a question year is among them."""
    row = [
        m.group(0).strip()
        for m in _NUMBER.finditer(lines[index])
        if not re.fullmatch(r"(?:19|20)\d{2}", m.group(0).strip())
    ]
    for above in reversed(lines[max(0, index - 40) : index]):
        header = re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", above)
        if len(header) >= 2:
            if len(header) != len(row):
                return None
            year = next((y for y in wanted if y in header), None)
            return f"{year}: {row[header.index(year)]}" if year else None
    return None


def read(prompt: str, limit: int = 3) -> str:
    """Extractive reader: the units of the passage that best match the question, verbatim.

    A table row under a header of years gets the question year's cell appended as
    `[YEAR: value]`, so the reader's answer does not depend on the column order of the filing.
    """
    match = re.search(r"^Question:\s*(.+)$", prompt, re.MULTILINE)
    if match:
        question = match.group(1)
        passage = prompt[: match.start()] + prompt[match.end() :]
    else:
        head, _, rest = prompt.partition("\n")
        question, passage = head, rest or head
    # The company's own name is on every page of its filing: it tells no row from another.
    doc = re.search(r"^Document:\s*(\S+)", prompt, re.MULTILINE)
    own = (
        set(re.split(r"[^a-z0-9]+", doc.group(1).lower())) - set(years(question)) if doc else set()
    )
    wanted = {_stem(t) for t in terms(question) if t not in own}
    quantitative = bool(_QUANT.search(question))
    lines = passage.splitlines()
    scored = []
    for i, (index, unit) in enumerate(_units(passage)):
        hits = len(wanted & {_stem(w) for w in terms(unit)})
        if not hits or unit.startswith(("Question:", "Document:")):
            continue
        cell = _year_column(lines, index, years(question)) if quantitative else None
        score = hits + (0.75 if quantitative and re.search(r"\d", unit) else 0.0) + bool(cell)
        text = re.sub(r" {3,}", "  ", unit) + (f" [{cell}]" if cell else "")
        scored.append((-score, len(unit) > 400, i, text))
    if not scored:
        return NOT_FOUND
    return "\n".join(text for *_, text in sorted(scored)[:limit])


def _root_code(question: str, has_corpus: bool, sub_calls: bool = True) -> str:
    """Turn-1 REPL code of the locate-then-read policy (data literals first, then logic);
    without `sub_calls` the pages are read by `_LOCAL_READ_CODE` in the REPL itself."""
    header = (
        f"question = {question!r}\n"
        f"terms = {terms(question)!r}\n"
        f"years = {years(question)!r}\n"
        f"words = {words(question)!r}\n"
        f"quantitative = {bool(_QUANT.search(question))!r}\n"
        f"proper = {proper_words(question)!r}\n"
        f"quarter = {quarter_of(question)!r}\n"
        f"titles = {statement_titles(question)!r}\n"
        f"unit = {asked_unit(question)!r}\n"
        f"decimals = {asked_decimals(question)!r}\n"
        f"usd = {bool(re.search(r'usd|dollar|[$]', question, re.I))!r}\n"
        f"compute = {computation(question)!r}\n"
    )
    body = _CORPUS_CODE if has_corpus else _CONTEXT_CODE
    if not sub_calls:
        body = _LOCAL_READ_CODE + body.replace("llm_query_batched(", "read_all(")
    return header + body


# The no-sub-calls ablation: the REPL has no model to call, so the code reads each page itself,
# keeping the (at most 3) lines that name the most question terms.
_LOCAL_READ_CODE = """
def read_locally(prompt):
    body = prompt.split("\\n\\n", 1)[-1]
    scored = []
    for i, line in enumerate(body.splitlines()):
        low = line.lower()
        hits = sum(1 for t in terms if t[:6] in low)
        if hits and line.strip():
            scored.append((-hits, i, " ".join(line.split())))
    return "\\n".join(s[2] for s in sorted(scored)[:3]) or "NO RELEVANT TEXT"

def read_all(prompts):
    return [read_locally(p) for p in prompts]
"""


_SCORING_CODE = """
def score_reading(text, rank, doc=""):
    if text.startswith("NO RELEVANT TEXT"):
        return -1.0
    first = text.splitlines()[0].lower()
    own = set(re.split(r"[^a-z0-9]+", doc.lower())) - set(years)
    covered = sum(1 for t in terms if t[:6] in first and t not in own)
    has_number = re.search(r"\\d", first) is not None
    has_cell = re.search(r"\\[(?:19|20)\\d\\d: ", first) is not None
    return covered + (1.0 if quantitative and has_number else 0.0) + has_cell - 0.1 * rank

def pick_value(text):
    first = text.splitlines()[0]
    cell = re.search(r"\\[(?:19|20)\\d\\d: ([^\\]]+)\\]", first)
    if cell:
        return cell.group(1)
    if quantitative:
        found = []
        for m in re.finditer(NUMBER, first):
            value = m.group(0).strip().strip("()").strip()
            digits = re.sub(r"[^0-9]", "", value)
            if digits and not (len(digits) == 4 and digits in years):
                found.append(value)
        rich = [v for v in found if re.search(r"[$%,.]|illion", v)]
        if rich or found:
            return (rich or found)[0]
    return first.strip()
"""

_CORPUS_CODE = (
    "import re\n"
    f"NUMBER = {_NUMBER.pattern!r}\n"
    f"STATEMENTS = {STATEMENTS!r}\n"
    f"ALL_TITLES = {list(STATEMENT_TITLES.values())!r}\n"
    + """
# 1. Locate the filing. Names look like COMPANY_YEAR[Qn]_KIND: keep the documents of the
#    company the question names (its words run together, or a capitalised prefix such as
#    "JPM" for JPMORGAN), then prefer the kind of filing asked for (annual report unless a
#    quarter, 8-K or earnings release is named), the latest year named (or the nearest
#    earlier one; the latest filing when no year is named) and the global search's votes.
def parse_name(name):
    parts = [p for p in re.split(r"[_\\s]+", name.lower()) if p]
    for i, part in enumerate(parts):
        m = re.match(r"^((?:19|20)\\d\\d)(q[1-4])?$", part)
        if m and i > 0:
            kind = re.sub(r"[^a-z0-9]", "", parts[i + 1]) if i + 1 < len(parts) else ""
            company = re.sub(r"[^a-z0-9]", "", "".join(parts[:i]))
            initials = "".join(p[0] for p in parts[:i]) if i > 1 else ""
            return company, int(m.group(1)), m.group(2) or "", kind, initials
    return re.sub(r"[^a-z0-9]", "", name.lower()), None, "", "", ""
joined = set(words)
for i in range(len(words)):
    for j in range(i + 2, min(i + 4, len(words)) + 1):
        joined.add("".join(words[i:j]))
def company_score(company, initials=""):
    # Full name, capitalised prefix ("JPM"), or initials joined by n/& ("JnJ", "J&J").
    if company in joined:
        return 2
    if any(len(w) >= 3 and company.startswith(w) for w in proper):
        return 1
    return 1 if initials and any(re.sub(r"(?<=.)[n&](?=.)", "", w) == initials
                                 for w in proper) else 0
low = question.lower()
if re.search(r"\\b8-?k\\b", low):
    kinds = {"8k"}
elif quarter:
    kinds = {"10q", "earnings"}
elif re.search(r"\\bearnings (?:release|report|call)|press release", low):
    kinds = {"earnings"}
else:
    kinds = {"10k", "annualreport"}
target = max(int(y) for y in years) if years else None
def year_fit(year):
    if year is None:
        return -100.0
    if target is None:
        return year / 10000
    return -abs(year - target) - (0.5 if year > target else 0.0)
votes = {}
for rank, h in enumerate(search(question, k=20)):
    votes[h["file"]] = votes.get(h["file"], 0.0) + 1 / (1 + rank)
info = {n: parse_name(n) for n in (f["name"] for f in files())}
best_company = max((company_score(i[0], i[4]) for i in info.values()), default=0)
def doc_key(n):
    company, year, q, kind, _ = info[n]
    return (kind in kinds, (q == "q" + quarter) if quarter else True, year_fit(year),
            votes.get(n, 0.0))
owned = [n for n, i in info.items() if best_company and company_score(i[0], i[4]) == best_company]
likely = sorted(owned, key=doc_key, reverse=True)[:2]
doc_weight = dict(zip(likely, (1.0, 0.3)))
print("likely filings:", likely)

# 2. Pages: search inside the likely filings for the question's terms and for the title of
#    the financial statement it names; pages that look like that statement get a bonus.
queries = [" ".join(terms)]
for key, title in STATEMENTS.items():
    if key in low:
        queries.append(title + " " + queries[0])
pool = {}
def add(hits, weight):
    for rank, h in enumerate(hits):
        key = (h["file"], h["page"])
        pool[key] = pool.get(key, 0.0) + weight / (1 + rank)
def local_query(q, doc):
    # Inside one filing its company and year are on every page: drop them from the query.
    own = set(re.split(r"[^a-z0-9]+", doc.lower()))
    kept = [t for t in q.split() if t not in years and t not in own
            and not any(o.startswith(t) for o in own if len(t) >= 3)]
    return " ".join(kept) or q
for d in likely:
    for q in queries:
        add(search(local_query(q, d), k=8, doc=d), doc_weight[d])
if not likely:
    add(search(question, k=8), 1.0)
def is_statement(d, p, wanted):
    # A statement page: a short heading line near the top holds the statement title (spaces
    # ignored: extraction splits words), and many short lines hold two or more numbers.
    # Subheadings inside a note ("Balance sheet:") end with a colon and do not count.
    lines = [line for line in page(d, p).splitlines() if len(line) < 200]
    heads = [h for h in lines if h.strip()][:10]
    head = re.sub(r"[\\s*#_]+", "", " ".join(h for h in heads if not h.strip().endswith(":")).lower())
    numeric = sum(1 for line in lines if len(re.findall(r"\\d[\\d,]*", line)) >= 2)
    return numeric >= 10 and any(re.search(re.sub(r"\\s+", "", t), head) for t in wanted)
def statement_bonus(d, p):
    if is_statement(d, p, titles):
        return 1.0
    numeric = sum(1 for line in page(d, p).splitlines() if len(re.findall(r"\\d[\\d,]*", line)) >= 2)
    return 0.3 if quantitative and numeric >= 15 else 0.0
bonus = {key: statement_bonus(*key) * doc_weight.get(key[0], 0.3) for key in pool}
best_pages = sorted(pool, key=lambda k: -pool[k] - bonus[k])[:READ_PAGES]
print("candidate pages:", best_pages)

# 2. Read: one extractive sub-call per page, concurrently.
prompts = [f"Question: {question}\\nDocument: {d} page {p}\\n\\n{page(d, p)}" for d, p in best_pages]
readings = llm_query_batched(prompts) if prompts else []
""".replace("READ_PAGES", str(READ_PAGES))
    + _SCORING_CODE
    + """
# 3. Decide: score each reading; values found on several pages get a bonus.
values = [pick_value(r) for r in readings]
scores = []
for i, r in enumerate(readings):
    agree = sum(1 for j, v in enumerate(values) if j != i and v and v == values[i])
    d = best_pages[i][0]
    primary = 3 * doc_weight.get(d, 0.3) if likely else 0.0
    base = score_reading(r, i, d)
    extra = 0.5 * agree + 2 * bonus.get(best_pages[i], 0.0) + primary
    scores.append(base + extra if base > 0 else base)
for (d, p), s, r in zip(best_pages, scores, readings):
    print(f"{d} p.{p} score={s:.2f}: {r.splitlines()[0][:160]}")
SCALE = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
def page_scale(text):
    found = re.search(r"\\bin (thousands|millions|billions)\\b|\\((thousands|millions|billions)\\)",
                      text, re.IGNORECASE)
    return SCALE[(found.group(1) or found.group(2)).lower()] if found else None
def formatted(value, text, line):
    # An amount read from a table goes into the unit and rounding the question asks for;
    # "(1,234)" is negative; the $ sign is kept (and added when a USD unit is asked).
    # Per-share amounts are never scaled ("in millions, except per share amounts").
    m = re.fullmatch(r"\\(?\\s*(\\$?)\\s*(-?[\\d,]*\\.?\\d+)\\s*\\)?", value.strip())
    if not m or not unit or re.search(r"per (?:diluted |basic )?share", line, re.IGNORECASE):
        return value
    number = float(m.group(2).replace(",", ""))
    if value.strip().startswith("("):
        number = -number
    scale = page_scale(text)
    if scale:
        number = number * scale / SCALE[unit]
    places = decimals if decimals is not None else (2 if abs(number) < 100 else 0)
    sign, dollar = "-" if number < 0 else "", "$" if "$" in value or usd else ""
    return f"{sign}{dollar}{abs(number):.{places}f}"
if scores and max(scores) > 0:
    i = scores.index(max(scores))
    d, p = best_pages[i]
    cite(d, p)
    value = formatted(values[i], page(d, p), readings[i].splitlines()[0])
    final_answer = {"answer": [value], "citations": [{"file": d, "page": p}]}
else:
    final_answer = {"answer": [], "citations": []}

# 4. Compute what the question defines (a ratio, a margin, a change between two years) from
#    the statement rows of the likely filing; without every value, the extractive answer stays.
def row_numbers(line):
    values = []
    for m in re.finditer(r"\\(?-?\\$?\\s?\\d[\\d,]*(?:\\.\\d+)?\\)?", line):
        raw = m.group(0)
        digits = raw.strip("()$- ").replace(",", "")
        if re.fullmatch(r"(?:19|20)\\d\\d", digits) or not digits:
            continue
        values.append(-float(digits) if raw.startswith(("(", "-")) else float(digits))
    return values
def statement_pages():
    # The filing's primary statements, found by their titles (looked up once).
    if "found" not in statement_cache:
        found = []
        for title in ALL_TITLES:
            query = " ".join(re.findall(r"[a-z]{4,}", title.replace("(?:", " ")))
            for h in search("consolidated " + query, k=4, doc=likely[0]):
                if is_statement(h["file"], h["page"], [title]):
                    found.append((h["file"], h["page"]))
        statement_cache["found"] = found
    return statement_cache["found"]
statement_cache = {}
def find_value(item, year):
    title_words = re.findall(r"[a-z]{4,}", " ".join(titles).replace("(?:", " "))
    hits = search(item["query"] + " " + " ".join(title_words), k=6, doc=likely[0])
    ranked = sorted(pool, key=lambda k: -pool[k] - bonus[k])
    pages_seen = []
    for key in ([k for k in ranked if k[0] == likely[0]] + [(h["file"], h["page"]) for h in hits]
                + statement_pages()):
        if key not in pages_seen:
            pages_seen.append(key)
    # Only the item's own statement (inventories: the balance sheet, not the cash flows).
    if item["titles"]:
        pages_seen = [k for k in pages_seen if is_statement(*k, item["titles"])]
    pages_seen.sort(key=lambda k: not is_statement(*k, ALL_TITLES))
    for d, p in pages_seen:
        lines = page(d, p).splitlines()
        for i, line in enumerate(lines):
            label = re.split(r"\\$|\\(?\\d", line.replace("|", " ").replace("*", " "))[0]
            label = " ".join(label.lower().split()).strip(" .:-")
            label = re.sub(r"\\s*/?\\s*\\((?:loss|income|deficit)\\)", "", label)
            if not re.fullmatch(item["row"] + r"(?: \\(.*\\))?", label):
                continue
            values = row_numbers(line[len(line) - len(line.lstrip()):])
            for above in reversed(lines[max(0, i - 60) : i]):
                header = re.findall(r"(?<!\\d)((?:19|20)\\d{2})(?!\\d)", above)
                if len(header) >= 2:
                    if len(header) == len(values) and year in header:
                        return values[header.index(year)], (d, p)
                    break
    return None, None
def item_value(item, used):
    found = [find_value(item, y) for y in (item["years"] or years[-1:] or ["none"])]
    if not found or any(v is None for v, _ in found):
        return None
    used.extend(where for _, where in found if where not in used)
    value = sum(v for v, _ in found) / len(found)
    # Costs are often shown in parentheses; as a ratio's term they count by size.
    return abs(value) if re.search(r"cost|expen|purchase|payment|expenditure", item["row"]) else value
if compute and likely and years:
    years = sorted(years)
    used = []
    percent = True
    if compute["kind"] in ("change", "cagr"):
        item = compute["item"]
        first = item_value(dict(item, years=item["years"][:1]), used)
        last = item_value(dict(item, years=item["years"][1:]), used)
        result = None
        if first and last is not None and compute["kind"] == "change":
            result = (last - first) / abs(first) * 100
        elif first and last and last / first > 0 and item["years"][1] > item["years"][0]:
            span = int(item["years"][1]) - int(item["years"][0])
            result = ((last / first) ** (1 / span) - 1) * 100
    elif compute.get("each"):
        shares = []
        for y in compute["each"]:
            num = item_value(dict(compute["num"], years=[y]), used)
            den = item_value(dict(compute["den"], years=[y]), used)
            shares.append(num / den * 100 if num is not None and den else None)
        result = sum(shares) / len(shares) if None not in shares else None
    else:
        num, den = item_value(compute["num"], used), item_value(compute["den"], used)
        percent = compute.get("percent", False)
        result = num / den * (100 if percent else 1) if num is not None and den else None
    print("computed:", compute["kind"], result, "from", used)
    if result is not None:
        places = decimals if decimals is not None else (1 if percent else 2)
        for d, p in used:
            cite(d, p)
        final_answer = {"answer": [f"{result:.{places}f}" + ("%" if percent else "")],
                        "citations": [{"file": d, "page": p} for d, p in used]}
print("ANSWER:", final_answer["answer"], final_answer["citations"])
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
answer["content"] = final_answer
answer["ready"] = True
"""
)

_CONTEXT_CODE = (
    "import re\n"
    f"NUMBER = {_NUMBER.pattern!r}\n"
    + """
# Only `context`: score its paragraphs by question terms, read the best ones, and cite the
# [FILE: ...] / [PAGE n] markers before the chosen paragraph (none in a plain string).
chunks, starts, pos = [], [], 0
for m in [*re.finditer(r"\\n\\s*\\n|\\n(?=\\[(?:END )?PAGE \\d+\\])", context), None]:
    end = m.start() if m else len(context)
    if context[pos:end].strip():
        chunks.append(context[pos:end])
        starts.append(pos)
    pos = m.end() if m else pos
chunks, starts = (chunks, starts) if chunks else ([context], [0])
def marker_citation(start):
    f, p = context.rfind("[FILE: ", 0, start + 7), context.rfind("[PAGE ", 0, start + 6)
    if f < 0 or p < f:
        return []
    name = context[f + 7 : context.find(" | ", f)]
    number = re.match(r"\\d+", context[p + 6 : p + 14])
    return [{"file": name, "page": int(number.group(0))}] if number else []
def chunk_score(c):
    low = c.lower()
    return sum(1 for t in terms if t[:6] in low)
order = sorted(range(len(chunks)), key=lambda i: -chunk_score(chunks[i]))[:READ_PAGES]
readings = llm_query_batched([f"Question: {question}\\n\\n{chunks[i]}" for i in order])
""".replace("READ_PAGES", str(READ_PAGES))
    + _SCORING_CODE
    + """
scores = [score_reading(r, i) for i, r in enumerate(readings)]
if scores and max(scores) > 0:
    best = scores.index(max(scores))
    final_answer = {"answer": [pick_value(readings[best])],
                    "citations": marker_citation(starts[order[best]])}
else:
    final_answer = {"answer": [], "citations": []}
print("ANSWER:", final_answer["answer"])
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""
)


_TASK_PLANS = (
    "Every entry must be classified before counting: I will classify the entries chunk by "
    "chunk with sub-calls, then aggregate in Python.",
    "The question names exact keys: I will grep for each and read the value on its line.",
)


def _question_of(messages: list[dict]) -> str:
    """The question, from the first user turn (`...original prompt: "Q".`) or the system text."""
    for m in messages[1:]:
        found = re.search(r'original prompt: "(.*)"\.\s*$', str(m.get("content")), re.S | re.M)
        if found:
            return found.group(1).strip()
    system = str(messages[0].get("content", ""))
    found = re.findall(r"^#?\s*Question:\s*(.+)$", system, re.MULTILINE)
    return found[-1].strip() if found else ""


def root_reply(messages: list[dict]) -> str:
    """The root policy: code on turn 1, then FINAL_VAR once the result is ready (also on a
    forced last turn, whose message carries the last output), else FINAL(no answer)."""
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    last = str(messages[-1].get("content", ""))
    if READY_MARKER in last:
        return "The result is stored in `final_answer`.\nFINAL_VAR(final_answer)"
    if turns == 0 and "No more code will be run" not in last:
        question = _question_of(messages)
        system = str(messages[0].get("content", ""))
        # The madqa prompt binds only `context` and sub-calls, so its code reads `context`.
        has_corpus = "No document corpus" not in system and not system.startswith(
            "[rlm-docs:root madqa"
        )
        sub_calls = "no-sub-calls" not in system.split("\n", 1)[0]
        task = parse_task(question) if has_corpus else None
        code = task_code(task) if task is not None else ""
        if task is not None and (sub_calls or "llm_query" not in code):
            return f"{_TASK_PLANS[task['kind'] == 'needle']}\n```repl\n{code}```"
        code = _root_code(question, has_corpus, sub_calls=sub_calls)
        reader = "with the sub-model" if sub_calls else "in the REPL"
        return (
            f"I will locate candidate pages with search, read them {reader}, "
            f"and keep the best-supported answer.\n```repl\n{code}```"
        )
    return "FINAL(No answer found in the documents.)"


def extract_reply(messages: list[dict]) -> str:
    """JSON {answer, citations} from the response embedded in an extract prompt."""
    from rlm_docs.engine.extract import heuristic_answer

    text = "\n".join(str(m.get("content", "")) for m in messages)
    response = text.split("RLM Analysis Response:", 1)[-1].strip()
    answer, citations = heuristic_answer(response)
    return json.dumps({"answer": answer, "citations": citations})


def detect_role(messages: list[dict]) -> str:
    """`root`, `baseline`, `extract` or `sub`, from the marker line of the first message."""
    first = str(messages[0].get("content", "")) if messages else ""
    if first.startswith(ROOT_MARKER):
        return "root"
    if first.startswith(BASELINE_MARKER):
        return "baseline"
    if EXTRACT_MARKER in first:
        return "extract"
    return "sub"


class OfflineClient:
    """Client-protocol implementation of the offline policy (`make_client("offline")`)."""

    backend = "offline"

    def __init__(self, model: str = "offline") -> None:
        self.model = model
        self.spec = "offline"

    def __repr__(self) -> str:
        return "OfflineClient()"

    def complete(
        self,
        messages: list[dict],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **params: Any,
    ) -> Completion:
        """Deterministic reply for the role the request is written for; cost 0."""
        start = time.perf_counter()
        role = detect_role(messages)
        if role == "root":
            text = root_reply(messages)
        elif role == "baseline":
            from rlm_docs.models.offline_baselines import baseline_reply

            text = baseline_reply(messages)
        elif role == "extract":
            text = extract_reply(messages)
        else:
            prompt = "\n".join(str(m.get("content", "")) for m in messages)
            text = classification_reply(prompt) or read(prompt)
        usage = Usage(count_message_tokens(messages), count_tokens(text), 0)
        return Completion(
            text=text,
            usage=usage,
            model=self.model,
            latency_s=time.perf_counter() - start,
            cost_usd=0.0,
            usage_source="tiktoken",
        )
