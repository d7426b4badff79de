"""The `offline` model in `sleuth`'s four seats (clue discovery, page screening, difficulty
assessment, decision), deterministic like the other baselines' policies:

- clue: the page's best line for the question (the extractive reader), as one `CLUE:` line
  with the share of question terms it holds as its insight; `CLUE: none` when no line shares a
  term;
- screen: `CR` when that line holds at least half of the question's terms, `R` when it holds
  some, `IR` when none;
- difficulty: `hard` when the question joins several asks ("and", "compare", "difference",
  "ratio", "change"), `medium` when it asks for a quantity, else `easy`, with a fixed strategy
  sentence for each;
- decide: the best line among the kept pages (amounts first for quantity questions) or, with
  clues only, the clue content that holds most question terms; the JSON answer with its
  evidence row.
"""

import json
import re

from rlm_docs.offline.baselines import _amounts, _best_reading, _coverage
from rlm_docs.offline.question import QUANT

_QUESTION = re.compile(r"^Question:\s*(.+)$", re.M)
_CLUE = re.compile(r"^- (?:location: .*? \| )?content: (.*?)(?: \| insight: .*)?$", re.M)
_CLUE_PAGE = re.compile(r"^\[FILE: (.+?) \| PAGE: (\d+)\] clues:$", re.M)
_HARD = re.compile(r"\b(?:and|compare|difference|ratio|change|between)\b", re.I)


def _question(messages: list[dict]) -> tuple[str, str]:
    prompt = str(messages[0].get("content", ""))
    found = _QUESTION.findall(prompt)
    return prompt, (found[-1] if found else "")


def clue_reply(messages: list[dict]) -> str:
    prompt, question = _question(messages)
    coverage, line, cite = _best_reading(question, prompt, prefer_amounts=True)
    if cite is None or coverage <= 0:
        return "CLUE: none"
    share = round(min(_coverage(question, line), 1.0), 2)
    return f"CLUE: location: page {cite['page']} | content: {line} | insight: holds {share} of the question's terms"


def screen_reply(messages: list[dict]) -> str:
    prompt, question = _question(messages)
    _, line, cite = _best_reading(question, prompt)
    share = _coverage(question, line) if cite is not None else 0.0
    label = "CR" if share >= 0.5 else "R" if share > 0 else "IR"
    return f"LABEL: {label}\nREASON: its best line holds {share:.0%} of the question's terms."


def difficulty_reply(messages: list[dict]) -> str:
    _, question = _question(messages)
    if _HARD.search(question):
        return (
            "DIFFICULTY: hard\nSTRATEGY: find each part on the critical pages, then combine them."
        )
    if QUANT.search(question):
        return "DIFFICULTY: medium\nSTRATEGY: take the figure from the critical page's line."
    return "DIFFICULTY: easy\nSTRATEGY: read the answer off the critical page."


def decide_reply(messages: list[dict]) -> str:
    prompt, question = _question(messages)
    coverage, line, cite = _best_reading(question, prompt, prefer_amounts=True)
    source = "text"
    if cite is None:  # clues only: the clue holding most question terms
        best: tuple[float, str, dict | None] = (0.0, "", None)
        for m in _CLUE_PAGE.finditer(prompt):
            end = prompt.find("\n\n", m.end())
            for content in _CLUE.findall(prompt[m.end() : end if end >= 0 else len(prompt)]):
                share = _coverage(question, content)
                if share > best[0]:
                    best = (share, content, {"file": m.group(1), "page": int(m.group(2))})
        _, line, cite = best
        source = "clue"
    value = line
    if QUANT.search(question):
        amounts = _amounts(line)
        value = amounts[0] if amounts else line
    rows = []
    if cite is not None:
        rows = [
            {"page": f"{cite['file']}, page {cite['page']}", "evidence": line, "source": source}
        ]
    reply = {
        "values": [value] if value else [],
        "citations": [cite] if cite else [],
        "evidence": rows,
    }
    return json.dumps(reply)
