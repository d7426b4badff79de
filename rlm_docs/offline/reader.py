"""The offline sub-model: an extractive reader, and the baselines' reader too.

The prompt's `Question:` line (else its first line) is the question, the rest the passage; the
reply is the best-matching sentences or table rows, verbatim (numbers and units kept), best
first. Words of the `Document:` name (the company) do not count as matches, since they are on
every page of it. A table row under a header of years gets the question year's cell appended
as `[YEAR: value]`, so the answer does not depend on the column order of the filing.
"""

import re

from rlm_docs.offline.question import QUANT, terms, years
from rlm_docs.offline.repl.readings import NOT_FOUND, NUMBER

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"])")
_NUMBER = re.compile(NUMBER)


def stem(word: str) -> str:
    """The first six letters: enough to match "revenue" with "revenues", "statements"..."""
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
    wanted = {stem(t) for t in terms(question) if t not in own}
    quantitative = bool(QUANT.search(question))
    lines = passage.splitlines()
    scored = []
    for i, (index, unit) in enumerate(_units(passage)):
        hits = len(wanted & {stem(w) for w in terms(unit)})
        if not hits or unit.startswith(("Question:", "Document:")):
            continue
        cell = _year_column(lines, index, years(question)) if quantitative else None
        score = hits + (0.75 if quantitative and re.search(r"\d", unit) else 0.0) + bool(cell)
        text = re.sub(r" {3,}", "  ", unit) + (f" [{cell}]" if cell else "")
        scored.append((-score, len(unit) > 400, i, text))
    if not scored:
        return NOT_FOUND
    return "\n".join(text for *_, text in sorted(scored)[:limit])
