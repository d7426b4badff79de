"""The `offline` model's policy for the baseline systems (`bm25-agent`, `static-rag`).

Baseline prompts start with `[rlm-docs:baseline NAME]`; the offline client (`offline.py`)
recognises that marker and hands such requests here, so baselines use `offline` like any model.
The policy is deliberately simple and deterministic, so baseline runs exercise the real search,
governor and scoring code without a model:

- **bm25-agent**: search for the question's content words; read the returned pages with the
  offline extractive reader; answer (JSON with the supporting page cited) once a page covers
  at least half of the question's terms, else search again with a narrower query (years and
  the first few terms, then the next few), and answer with the best reading on the fourth
  search or the forced last turn.
- **static-rag**: read the given pages once and answer from the best one.

An answer is the first amount in the best line when the question asks for a quantity,
otherwise the line itself.
"""

import json
import re

from rlm_docs.models import offline
from rlm_docs.models.offline import BASELINE_MARKER

_PAGE = re.compile(r"^\[FILE: (.+?) \| PAGE: (\d+)\]\n(.*?)\n\[END PAGE\]", re.M | re.S)
_YEAR = re.compile(r"^(?:19|20)\d{2}$")
MAX_SEARCHES = 4


def is_baseline(messages: list[dict]) -> bool:
    """True when the request comes from a baseline system prompt."""
    return bool(messages) and str(messages[0].get("content", "")).startswith(BASELINE_MARKER)


def _best_reading(question: str, text: str) -> tuple[float, str, dict | None]:
    """(coverage of question terms, best line, cited page) over the page blocks in `text`."""
    wanted = {offline._stem(t) for t in offline.terms(question)}
    best: tuple[float, str, dict | None] = (0.0, "", None)
    for rank, (doc, page, body) in enumerate(_PAGE.findall(text)):
        line = offline.read(f"Question: {question}\n{body}", limit=1)
        if line == offline.NOT_FOUND:
            continue
        got = {offline._stem(w) for w in offline.terms(line)}
        coverage = len(wanted & got) / max(len(wanted), 1) - rank * 0.01
        if coverage > best[0]:
            best = (coverage, line, {"file": doc, "page": int(page)})
    return best


def _answer_json(question: str, line: str, cite: dict | None) -> str:
    value = line
    if offline._QUANT.search(question):
        amounts = [
            m.group(0).strip(" ()")
            for m in offline._NUMBER.finditer(line)
            if re.search(r"\d", m.group(0)) and not _YEAR.match(m.group(0).strip(" ()"))
        ]
        value = amounts[0] if amounts else line
    answer = [value] if value else []
    return json.dumps({"answer": answer, "citations": [cite] if cite else []})


def _queries(question: str) -> list[str]:
    terms = offline.terms(question)
    plain = [t for t in terms if not _YEAR.match(t)]
    years = offline.years(question)
    return [
        " ".join(terms[:10]),
        " ".join(years + plain[:3]),
        " ".join(years + plain[3:6]) or " ".join(plain[:2]),
        " ".join(plain[:2] + years[:1]),
    ]


def bm25_agent_reply(messages: list[dict]) -> str:
    question = str(messages[1].get("content", "")) if len(messages) > 1 else ""
    searches = sum(1 for m in messages if m.get("role") == "assistant")
    results = [str(m.get("content")) for m in messages[2:] if m.get("role") == "user"]
    forced = "last turn" in str(messages[-1].get("content", ""))
    readings = [_best_reading(question, r) for r in results if r.startswith("Search results")]
    if readings:
        latest = readings[-1]
        if latest[0] >= 0.5:
            return _answer_json(question, latest[1], latest[2])
        if forced or searches >= MAX_SEARCHES:
            _, line, cite = max(readings, key=lambda r: r[0])
            return _answer_json(question, line, cite)
    elif forced:
        return json.dumps({"answer": [], "citations": []})
    return "SEARCH: " + _queries(question)[min(searches, MAX_SEARCHES - 1)]


def static_rag_reply(messages: list[dict]) -> str:
    prompt = str(messages[0].get("content", ""))
    found = re.findall(r"^Question:\s*(.+)$", prompt, re.M)
    question = found[-1] if found else ""
    _, line, cite = _best_reading(question, prompt)
    return _answer_json(question, line, cite)


def baseline_reply(messages: list[dict]) -> str:
    """The reply for a baseline request (see module docstring)."""
    first = str(messages[0].get("content", ""))
    if first.startswith(BASELINE_MARKER + " bm25-agent]"):
        return bm25_agent_reply(messages)
    return static_rag_reply(messages)
