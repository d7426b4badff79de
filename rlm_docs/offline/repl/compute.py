"""Step 5 of the corpus policy: compute what the question defines (sandbox code).

A defined ratio "A / B" (with "average B between FY1 and FY2"), a year-over-year change, a
CAGR or an "X % margin" (or its N-year average), from the rows of the likely filing's
statements (`plan["compute"]`, parsed on the host by `rlm_docs.offline.computation`). Without
every value the caller keeps the extractive answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from rlm_docs.offline.repl.statements import ALL_TITLES, is_statement

YEAR = r"(?<!\d)((?:19|20)\d{2})(?!\d)"


def row_numbers(line: str) -> list[float]:
    """The amounts on a table row, "(1,234)" and "-1,234" negative, years left out."""
    values = []
    for m in re.finditer(r"\(?-?\$?\s?\d[\d,]*(?:\.\d+)?\)?", line):
        raw = m.group(0)
        digits = raw.strip("()$- ").replace(",", "")
        if re.fullmatch(r"(?:19|20)\d\d", digits) or not digits:
            continue
        values.append(-float(digits) if raw.startswith(("(", "-")) else float(digits))
    return values


def row_label(line: str) -> str:
    """A row's label: the text before its first amount, lowercased, "(loss)" dropped."""
    label = re.split(r"\$|\(?\d", line.replace("|", " ").replace("*", " "))[0]
    label = " ".join(label.lower().split()).strip(" .:-")
    return re.sub(r"\s*/?\s*\((?:loss|income|deficit)\)", "", label)


def year_cell(lines: list[str], index: int, year: str) -> float | None:
    """The `year` column's value of row `index`: the row needs one number per year of the
    nearest header of years above it."""
    line = lines[index]
    values = row_numbers(line[len(line) - len(line.lstrip()) :])
    for above in reversed(lines[max(0, index - 60) : index]):
        header = re.findall(YEAR, above)
        if len(header) >= 2:
            if len(header) == len(values) and year in header:
                return values[header.index(year)]
            return None
    return None


def statement_reader(
    plan: dict, doc: str, candidates: list, search: Callable, page: Callable
) -> Callable:
    """`item_value(item, used)` over the statements of filing `doc`: an item's value (averaged
    over its years), the pages it came from appended to `used`; None when a value is missing.
    `candidates` are the pooled pages, best first."""
    found_statements: list = []

    def statement_pages() -> list:
        """The filing's primary statements, found by their titles (looked up once)."""
        if not found_statements:
            found = []
            for title in ALL_TITLES:
                query = " ".join(re.findall(r"[a-z]{4,}", title.replace("(?:", " ")))
                for h in search("consolidated " + query, k=4, doc=doc):
                    if is_statement(page(h["file"], h["page"]), [title]):
                        found.append((h["file"], h["page"]))
            found_statements.append(found)
        return found_statements[0]

    def find_value(item: dict, year: str) -> tuple:
        title_words = re.findall(r"[a-z]{4,}", " ".join(plan["titles"]).replace("(?:", " "))
        hits = search(item["query"] + " " + " ".join(title_words), k=6, doc=doc)
        pages_seen = []
        for key in (
            [k for k in candidates if k[0] == doc]
            + [(h["file"], h["page"]) for h in hits]
            + statement_pages()
        ):
            if key not in pages_seen:
                pages_seen.append(key)
        # Only the item's own statement (inventories: the balance sheet, not the cash flows).
        if item["titles"]:
            pages_seen = [k for k in pages_seen if is_statement(page(*k), item["titles"])]
        pages_seen.sort(key=lambda k: not is_statement(page(*k), ALL_TITLES))
        for d, p in pages_seen:
            lines = page(d, p).splitlines()
            for i, line in enumerate(lines):
                if re.fullmatch(item["row"] + r"(?: \(.*\))?", row_label(line)):
                    value = year_cell(lines, i, year)
                    if value is not None:
                        return value, (d, p)
        return None, None

    def item_value(item: dict, used: list) -> float | None:
        found = [find_value(item, y) for y in (item["years"] or sorted(plan["years"])[-1:])]
        if not found or any(v is None for v, _ in found):
            return None
        used.extend(where for _, where in found if where not in used)
        value = sum(v for v, _ in found) / len(found)
        # Costs are often shown in parentheses; as a ratio's term they count by size.
        costly = re.search(r"cost|expen|purchase|payment|expenditure", item["row"])
        return abs(value) if costly else value

    return item_value


def computed(compute: dict, item_value: Callable, used: list) -> float | None:
    """The value of a parsed computation (see the module docstring), in percent except for a
    plain ratio; None when a value is missing."""
    if compute["kind"] in ("change", "cagr"):
        item = compute["item"]
        first = item_value(dict(item, years=item["years"][:1]), used)
        last = item_value(dict(item, years=item["years"][1:]), used)
        if first and last is not None and compute["kind"] == "change":
            return (last - first) / abs(first) * 100
        if first and last and last / first > 0 and item["years"][1] > item["years"][0]:
            span = int(item["years"][1]) - int(item["years"][0])
            return ((last / first) ** (1 / span) - 1) * 100
        return None
    if compute.get("each"):
        shares: list[float | None] = []
        for y in compute["each"]:
            num = item_value(dict(compute["num"], years=[y]), used)
            den = item_value(dict(compute["den"], years=[y]), used)
            shares.append(num / den * 100 if num is not None and den else None)
        known = [s for s in shares if s is not None]
        return sum(known) / len(shares) if len(known) == len(shares) else None
    num, den = item_value(compute["num"], used), item_value(compute["den"], used)
    scale = 100 if compute.get("percent", False) else 1
    return num / den * scale if num is not None and den else None


def computed_answer(
    plan: dict, doc: str, candidates: list, search: Callable, page: Callable, cite: Callable
) -> dict | None:
    """The answer computed from filing `doc`'s statements, every page used cited; None when
    a value is missing."""
    compute = plan["compute"]
    used: list = []
    item_value = statement_reader(plan, doc, candidates, search, page)
    result = computed(compute, item_value, used)
    print("computed:", compute["kind"], result, "from", used)
    if result is None:
        return None
    percent = compute["kind"] in ("change", "cagr") or bool(
        compute.get("each") or compute.get("percent")
    )
    decimals = plan["decimals"]
    places = decimals if decimals is not None else (1 if percent else 2)
    for d, p in used:
        cite(d, p)
    return {
        "values": [f"{result:.{places}f}" + ("%" if percent else "")],
        "explanation": f"{compute['kind']} computed from "
        + ", ".join(f"{d} p.{p}" for d, p in used),
        "citations": [{"file": d, "page": p} for d, p in used],
    }
