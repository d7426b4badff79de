"""The `offline` model's policy for the baseline systems (`bm25-agent`, `static-rag`,
`long-context`, `map-reduce`).

A baseline names its policy in each call's purpose (`Purpose(system=..., prompt=NAME)`, see
`rlm_docs.call_purpose`); the offline policy (`policy.py`) hands such requests here, so
baselines use `offline` like any model. A system declared elsewhere brings its own policy
(`add_policy`, called when it is registered: `rlm_docs.systems.registry`); a name with no policy
is an error, never another system's.
The policy is deliberately simple and deterministic, so baseline runs exercise the real search,
governor and scoring code without a model:

- **bm25-agent**: search for the question's content words; read the returned pages with the
  offline extractive reader; answer (JSON with the supporting page cited) once a page covers
  at least half of the question's terms, else search again with a narrower query (years and
  the first few terms, then the next few), and answer with the best reading on the fourth
  search or the forced last turn.
- **static-rag**: read the given pages once and answer from the best one.
- **long-context**: rank the pages of the (possibly truncated) corpus in the prompt by how many
  question terms they contain, read the best `LONG_CONTEXT_READS` and answer from the best
  reading; it sees only what the window kept, so truncation costs it answers honestly.
- **map-reduce**, map call: read the excerpt's pages; `NO RELEVANT TEXT` when no line shares a
  question term, else the JSON answer with the page cited and the supporting line as `quote`.
  Reduce call: the note whose quote covers most question terms (the earliest on a tie); an
  empty answer when no excerpt had relevant text.

An answer is the first amount in the best line when the question asks for a quantity,
otherwise the line itself.
"""

import json
import re
from collections.abc import Callable

from rlm_docs.corpus.render import page_blocks, rendered_pages
from rlm_docs.offline.question import QUANT, terms, years
from rlm_docs.offline.reader import NOT_FOUND, read, stem
from rlm_docs.offline.repl.readings import NUMBER

_NOTE = re.compile(r"^\[NOTE \d+ \| [^\n]*\]\n(.*?)\n\[END NOTE\]$", re.M | re.S)
NOT_RELEVANT = "NO RELEVANT TEXT"
LONG_CONTEXT_READS = 8
_YEAR = re.compile(r"^(?:19|20)\d{2}$")
MAX_SEARCHES = 4


def _coverage(question: str, text: str) -> float:
    """Share of the question's (stemmed) terms found among the words of `text`."""
    wanted = {stem(t) for t in terms(question)}
    got = {stem(w) for w in terms(text)}
    return len(wanted & got) / max(len(wanted), 1)


def _amounts(line: str) -> list[str]:
    """Numbers in `line` that are not years (the values a quantity question asks for)."""
    return [
        m.group(0).strip(" ()")
        for m in re.finditer(NUMBER, line)
        if re.search(r"\d", m.group(0)) and not _YEAR.match(m.group(0).strip(" ()"))
    ]


def _best_reading(
    question: str,
    text: str,
    blocks: list[tuple[str, str, str]] | None = None,
    prefer_amounts: bool = False,
) -> tuple[float, str, dict | None]:
    """(coverage of question terms, best line, cited page) over the page blocks in `text`
    (or the given `(document, page, body)` blocks), earlier blocks winning ties. With
    `prefer_amounts`, a line holding an amount outranks an equally covering one without, when
    the question asks for a quantity (pages not pre-ranked by a search engine need this)."""
    wanted = {stem(t) for t in terms(question)}
    bonus = 0.25 if prefer_amounts and QUANT.search(question) else 0.0
    best: tuple[float, str, dict | None] = (0.0, "", None)
    for rank, (doc, page, body) in enumerate(page_blocks(text) if blocks is None else blocks):
        line = read(f"Question: {question}\n{body}", limit=1)
        if line == NOT_FOUND:
            continue
        got = {stem(w) for w in terms(line)}
        coverage = len(wanted & got) / max(len(wanted), 1) - rank * 0.01
        coverage += bonus if _amounts(line) else 0.0
        if coverage > best[0]:
            best = (coverage, line, {"file": doc, "page": int(page)})
    return best


def _answer_json(question: str, line: str, cite: dict | None, quote: bool = False) -> str:
    value = line
    if QUANT.search(question):
        amounts = _amounts(line)
        value = amounts[0] if amounts else line
    answer = [value] if value else []
    reply = {"values": answer, "citations": [cite] if cite else []}
    return json.dumps(reply | ({"quote": line} if quote else {}))


def _queries(question: str) -> list[str]:
    words = terms(question)
    plain = [t for t in words if not _YEAR.match(t)]
    named = years(question)
    return [
        " ".join(words[:10]),
        " ".join(named + plain[:3]),
        " ".join(named + plain[3:6]) or " ".join(plain[:2]),
        " ".join(plain[:2] + named[:1]),
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
        return json.dumps({"values": [], "citations": []})
    return "SEARCH: " + _queries(question)[min(searches, MAX_SEARCHES - 1)]


def static_rag_reply(messages: list[dict]) -> str:
    prompt = str(messages[0].get("content", ""))
    found = re.findall(r"^Question:\s*(.+)$", prompt, re.M)
    question = found[-1] if found else ""
    _, line, cite = _best_reading(question, prompt)
    return _answer_json(question, line, cite)


def _questions(prompt: str) -> list[str]:
    return re.findall(r"^Question:\s*(.+)$", prompt, re.M)


def long_context_reply(messages: list[dict]) -> str:
    prompt = str(messages[0].get("content", ""))
    found = _questions(prompt)
    question = found[-1] if found else ""
    stems = [t[:6] for t in terms(question)]
    pages = rendered_pages(prompt)
    hits = [sum(1 for t in stems if t in body.lower()) for _, _, body in pages]
    order = sorted(range(len(pages)), key=lambda i: (-hits[i], i))[:LONG_CONTEXT_READS]
    chosen = [pages[i] for i in order if hits[i]]
    _, line, cite = _best_reading(question, "", chosen, prefer_amounts=True)
    return _answer_json(question, line, cite)


def map_reply(messages: list[dict]) -> str:
    prompt = str(messages[0].get("content", ""))
    found = _questions(prompt)
    question = found[0] if found else ""
    coverage, line, cite = _best_reading(question, prompt, prefer_amounts=True)
    if cite is None or coverage <= 0:
        return NOT_RELEVANT
    return _answer_json(question, line, cite, quote=True)


def reduce_reply(messages: list[dict]) -> str:
    prompt = str(messages[0].get("content", ""))
    found = _questions(prompt)
    question = found[-1] if found else ""
    best: tuple[float, dict] = (0.0, {"values": [], "citations": []})
    for note in _NOTE.findall(prompt):
        try:
            parsed = json.loads(note)
        except json.JSONDecodeError:
            continue
        if not isinstance(parsed, dict) or not parsed.get("values"):
            continue
        coverage = _coverage(question, str(parsed.get("quote") or parsed["values"]))
        if coverage > best[0]:
            best = (coverage, parsed)
    return json.dumps({"values": best[1]["values"], "citations": best[1].get("citations", [])})


# The policies by name; a system declared elsewhere adds its own (`add_policy`, called when the
# system is registered), so a name with no policy is an error, not another policy.
_POLICIES: dict[str, Callable[[list[dict]], str]] = {
    "bm25-agent": bm25_agent_reply,
    "static-rag": static_rag_reply,
    "long-context": long_context_reply,
    "map-reduce-map": map_reply,
    "map-reduce-reduce": reduce_reply,
}


def add_policy(name: str, reply: Callable[[list[dict]], str]) -> None:
    """Answer requests whose purpose names policy `name` with `reply` (ValueError when `name`
    already has another policy: two systems may not share one)."""
    known = _POLICIES.setdefault(name, reply)
    if known is not reply:
        raise ValueError(f"offline policy {name!r} is already taken by {known.__qualname__}")


def drop_policy(name: str) -> None:
    """Forget the policy of `name` (its system was unregistered)."""
    _POLICIES.pop(name, None)


def baseline_reply(messages: list[dict], name: str) -> str:
    """The reply of policy `name` (see module docstring); ValueError when none has that name."""
    policy = _POLICIES.get(name)
    if policy is None:
        raise ValueError(
            f"no offline policy named {name!r} (known: {', '.join(sorted(_POLICIES))})"
        )
    return policy(messages)
