"""Scoring the sub-model's readings of pages and stating the chosen value (sandbox code).

A reading is the extractive reader's reply (`rlm_docs.offline.reader`): the best-matching lines
of a page, best first, a table row carrying the question year's cell as `[YEAR: value]`.
"""

from __future__ import annotations

import re

NOT_FOUND = "NO RELEVANT TEXT"
READ_PAGES = 4  # pages (or paragraphs of `context`) read per question
# An amount as filings print it: "$1,234", "(1,234)", "12.5%", "3 billion".
NUMBER = (
    r"(?<![\w.])\(?\$?\s?-?\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s?(?:%|percent|billion|million|thousand))?"
    r"\)?(?![\w])"
)
SCALE = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
READY = "OFFLINE_ANSWER" + "_READY"  # built, so the code echoed back to the root never holds it


def score_reading(text: str, rank: int, plan: dict, doc: str = "") -> float:
    """How well a reading's first line answers: question terms it covers (not counting words of
    the document's name, on every page of it), a number or a year cell when an amount is asked,
    minus a little per rank; -1 when the reader found nothing."""
    if text.startswith(NOT_FOUND):
        return -1.0
    first = text.splitlines()[0].lower()
    own = set(re.split(r"[^a-z0-9]+", doc.lower())) - set(plan["years"])
    covered = sum(1 for t in plan["terms"] if t[:6] in first and t not in own)
    has_number = re.search(r"\d", first) is not None
    has_cell = re.search(r"\[(?:19|20)\d\d: ", first) is not None
    return covered + (1.0 if plan["quantitative"] and has_number else 0.0) + has_cell - 0.1 * rank


def pick_value(text: str, plan: dict) -> str:
    """The value a reading states: its year cell, else (for an amount) the first number that is
    not a question year, preferring one with `$ % , .` or a scale word, else its first line."""
    first = text.splitlines()[0]
    cell = re.search(r"\[(?:19|20)\d\d: ([^\]]+)\]", first)
    if cell:
        return cell.group(1)
    if plan["quantitative"]:
        found = []
        for m in re.finditer(NUMBER, first):
            value = m.group(0).strip().strip("()").strip()
            digits = re.sub(r"[^0-9]", "", value)
            if digits and not (len(digits) == 4 and digits in plan["years"]):
                found.append(value)
        rich = [v for v in found if re.search(r"[$%,.]|illion", v)]
        if rich or found:
            return (rich or found)[0]
    return first.strip()


def page_scale(text: str) -> float | None:
    """The multiplier a table's "(in thousands / millions / billions)" note gives, else None."""
    found = re.search(
        r"\bin (thousands|millions|billions)\b|\((thousands|millions|billions)\)",
        text,
        re.IGNORECASE,
    )
    return SCALE[(found.group(1) or found.group(2)).lower()] if found else None


def formatted(value: str, text: str, line: str, plan: dict) -> str:
    """An amount read from a table, in the unit and rounding the question asks for: the page's
    scale applied, "(1,234)" negative, `$` kept (and added when a USD unit is asked). Per-share
    amounts are never scaled ("in millions, except per share amounts")."""
    m = re.fullmatch(r"\(?\s*(\$?)\s*(-?[\d,]*\.?\d+)\s*\)?", value.strip())
    per_share = re.search(r"per (?:diluted |basic )?share", line, re.IGNORECASE)
    if not m or not plan["unit"] or per_share:
        return value
    number = float(m.group(2).replace(",", ""))
    if value.strip().startswith("("):
        number = -number
    scale = page_scale(text)
    if scale:
        number = number * scale / SCALE[plan["unit"]]
    decimals = plan["decimals"]
    places = decimals if decimals is not None else (2 if abs(number) < 100 else 0)
    sign, dollar = "-" if number < 0 else "", "$" if "$" in value or plan["usd"] else ""
    return f"{sign}{dollar}{abs(number):.{places}f}"


def announce(final_answer: dict) -> None:
    """Print the answer and the marker the offline root waits for before it writes FINAL_VAR."""
    print("ANSWER:", final_answer["values"], final_answer["citations"])
    print(READY)


def read_locally(prompt: str, terms: list[str]) -> str:
    """The no-sub-calls reader: a page's (at most 3) lines naming the most question terms."""
    body = prompt.split("\n\n", 1)[-1]
    scored = []
    for i, line in enumerate(body.splitlines()):
        low = line.lower()
        hits = sum(1 for t in terms if t[:6] in low)
        if hits and line.strip():
            scored.append((-hits, i, " ".join(line.split())))
    return "\n".join(s[2] for s in sorted(scored)[:3]) or NOT_FOUND


def read_all(prompts: list[str], terms: list[str]) -> list[str]:
    """`read_locally` over a batch: stands in for the batched sub-call when there is no sub-model."""
    return [read_locally(p, terms) for p in prompts]
