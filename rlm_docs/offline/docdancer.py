"""The `offline` model in `docdancer`'s seats: the agent and its summarising reader.

Agent: `SEARCH` the question's content words as keywords; once hits came back, `READ` the
sections of the first two hits with the question as the goal, once; then answer from the
reader's evidence line (its value, citing the page it names). A search with no hit is retried
with narrower keywords (as `bm25-agent` retries its queries); on the forced last turn, or when
the reader found no evidence, it answers with what it has.

Reader: the extractive reader over the sections' pages for the goal; "Evidence in document:"
the best line with its file and page, "Summary:" the same line (it does not paraphrase), or
"none" when no line shares a word with the goal.
"""

import json
import re

from rlm_docs.offline.baselines import MAX_SEARCHES, _answer_json, _best_reading, _queries

_HIT = re.compile(r"^- section (\S+) \| page \d+ \|", re.M)
_EVIDENCE = re.compile(r"^Evidence in document: (.*) \((.+?), page (\d+)\)$", re.M)
_GOAL = re.compile(r"^Goal: (.*)$", re.M)
NO_ANSWER = json.dumps({"values": [], "citations": []})


def docdancer_reply(messages: list[dict]) -> str:
    question = str(messages[1].get("content", "")) if len(messages) > 1 else ""
    results = [str(m.get("content")) for m in messages[2:] if m.get("role") == "user"]
    forced = "last turn" in str(messages[-1].get("content", ""))
    searches = [r for r in results if " hits for " in r.split("\n", 1)[0]]
    reports = [r for r in results if r.startswith("Reader's report")]
    evidence = [m for r in reports for m in _EVIDENCE.findall(r)]
    if evidence:
        line, doc, page = evidence[0]
        return _answer_json(question, line, {"file": doc, "page": int(page)})
    hits = [h for r in searches for h in _HIT.findall(r)]
    if reports or forced or (not hits and len(searches) >= MAX_SEARCHES):
        return NO_ANSWER
    if hits:
        first = list(dict.fromkeys(hits))[:2]
        return f"READ: {', '.join(first)} | {question}"
    words = _queries(question)[min(len(searches), MAX_SEARCHES - 1)].split()
    return "SEARCH: " + " | ".join(words)


def summariser_reply(messages: list[dict]) -> str:
    prompt = str(messages[0].get("content", ""))
    found = _GOAL.findall(prompt)
    goal = found[0] if found else ""
    coverage, line, cite = _best_reading(goal, prompt, prefer_amounts=True)
    if cite is None or coverage <= 0:
        return "Evidence in document: none\nSummary: the sections say nothing about the goal."
    where = f"({cite['file']}, page {cite['page']})"
    return f"Evidence in document: {line} {where}\nSummary: {line}"
