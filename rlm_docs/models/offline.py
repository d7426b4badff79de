"""The `offline` model: a deterministic, non-neural policy that needs no key and no weights.

It lets the quickstart, the demo and many tests run the whole RLM machinery for real (sandbox,
governor, trajectories) with no network. Its role is read from the request:

- **root**: the first message starts with `[rlm-docs:root NAME]` (the marker line of
  `prompts/docs.txt` and `prompts/madqa.txt`). Turn 1 writes genuine REPL code following a
  locate-then-read strategy: pick documents whose names share words or years with the
  question, `search()` for the question's terms (and company/year-aware variants) in them and
  in the whole corpus, read the best pages, ask the sub-model about each page with
  `llm_query_batched`, score the candidate answers (question terms covered, a number present
  when the question asks for an amount, agreement across pages, retrieval rank), `cite()` the
  supporting page and store the result in `final_answer`. Turn 2 replies
  `FINAL_VAR(final_answer)` once the code printed that the result is ready (also on a forced
  last turn), else `FINAL(No answer found in the documents.)`.
  With a plain-string `context` and no corpus (a child `rlm_query`), the code scores chunks of
  `context` instead of searching.
- **extract**: the first message starts with `[rlm-docs:extract]`; the reply is the JSON of a
  deterministic parse of the response (`rlm_docs.engine.extract.heuristic_answer`).
- **sub** (anything else): an extractive reader. The prompt's `Question:` line (else its first
  line) is the question, the rest the passage; the reply is the best-matching sentences or
  table rows, verbatim (numbers and units kept), best first.

Usage is counted with tiktoken; the cost is always 0. Accuracy is whatever it honestly scores:
it cannot do arithmetic, so it is weak on questions that need computation.
"""

import json
import re
import time
from typing import Any

from rlm_docs.models.base import Completion, Usage
from rlm_docs.tokens import count_message_tokens, count_tokens

ROOT_MARKER = "[rlm-docs:root"
EXTRACT_MARKER = "[rlm-docs:extract]"
READY_MARKER = "OFFLINE_ANSWER_READY"
NOT_FOUND = "NO RELEVANT TEXT"
READ_PAGES = 4

_STOP = set(
    [
        "a",
        "about",
        "above",
        "after",
        "all",
        "also",
        "an",
        "and",
        "any",
        "are",
        "as",
        "assume",
        "at",
        "based",
        "be",
        "been",
        "being",
        "below",
        "both",
        "but",
        "by",
        "can",
        "company",
        "company's",
        "could",
        "data",
        "did",
        "do",
        "does",
        "during",
        "each",
        "either",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "however",
        "i",
        "if",
        "in",
        "information",
        "into",
        "is",
        "it",
        "its",
        "latest",
        "more",
        "most",
        "no",
        "not",
        "of",
        "on",
        "or",
        "other",
        "our",
        "out",
        "over",
        "per",
        "please",
        "primarily",
        "question",
        "questions",
        "reported",
        "same",
        "shown",
        "should",
        "so",
        "statement",
        "statements",
        "than",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "under",
        "up",
        "us",
        "using",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "within",
        "would",
        "year",
        "years",
        "you",
        "your",
        "following",
        "answer",
        "analyst",
        "public",
        "equities",
        "round",
        "decimal",
        "places",
        "usd",
        "billions",
        "millions",
        "thousands",
        "percent",
        "percentage",
        "based",
        "provide",
        "give",
        "calculate",
        "compute",
        "state",
        "explain",
        "fiscal",
        "fy",
        "total",
        "amount",
        "value",
        "much",
        "many",
    ]
)
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


def years(text: str) -> list[str]:
    """Four-digit years mentioned (`FY2018` and `2018` alike)."""
    return list(dict.fromkeys(re.findall(r"(?<!\d)((?:19|20)\d{2})(?!\d)", text)))


def _stem(word: str) -> str:
    return word[:6] if len(word) > 6 else word


def _units(passage: str) -> list[str]:
    """Sentences of prose and rows of tables/layout text, as they appear."""
    units: list[str] = []
    for line in passage.splitlines():
        line = line.strip()
        if not line:
            continue
        if len(line) > 200 and "|" not in line:
            units.extend(s.strip() for s in _SENTENCE.split(line) if s.strip())
        else:
            units.append(line)
    return units


def read(prompt: str, limit: int = 3) -> str:
    """Extractive reader: the units of the passage that best match the question, verbatim."""
    match = re.search(r"^Question:\s*(.+)$", prompt, re.MULTILINE)
    if match:
        question = match.group(1)
        passage = prompt[: match.start()] + prompt[match.end() :]
    else:
        head, _, rest = prompt.partition("\n")
        question, passage = head, rest or head
    wanted = {_stem(t) for t in terms(question)}
    quantitative = bool(_QUANT.search(question))
    scored = []
    for i, unit in enumerate(_units(passage)):
        words = {_stem(w) for w in terms(unit)}
        hits = len(wanted & words)
        if not hits or unit.startswith(("Question:", "Document:")):
            continue
        score = hits + (0.75 if quantitative and re.search(r"\d", unit) else 0.0)
        scored.append((-score, len(unit) > 400, i, unit))
    if not scored:
        return NOT_FOUND
    best = sorted(scored)[:limit]
    return "\n".join(re.sub(r" {3,}", "  ", u) for *_, u in best)


def _root_code(question: str, has_corpus: bool) -> str:
    """Turn-1 REPL code of the locate-then-read policy (data literals first, then logic)."""
    header = (
        f"question = {question!r}\n"
        f"terms = {terms(question)!r}\n"
        f"years = {years(question)!r}\n"
        f"quantitative = {bool(_QUANT.search(question))!r}\n"
    )
    return header + (_CORPUS_CODE if has_corpus else _CONTEXT_CODE)


_SCORING_CODE = """
def score_reading(text, rank):
    if text.startswith("NO RELEVANT TEXT"):
        return -1.0
    low = text.lower()
    covered = sum(1 for t in terms if t[:6] in low)
    numbers = re.findall(r"\\d[\\d,]*(?:\\.\\d+)?", text)
    return covered + (1.0 if quantitative and numbers else 0.0) - 0.1 * rank

def pick_value(text):
    first = text.splitlines()[0]
    if quantitative:
        found = []
        for m in re.finditer(NUMBER, first):
            value = m.group(0).strip()
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
    + """
# 1. Locate: documents whose names share words or years with the question.
names = [f["name"] for f in files()]
def name_score(name):
    parts = set(re.split(r"[^a-z0-9]+", name.lower()))
    return len(parts & set(terms)) * 2 + len(parts & set(years))
ranked_docs = sorted(names, key=lambda n: -name_score(n))
likely = [n for n in ranked_docs[:3] if name_score(n) >= 2]
queries = [" ".join(terms)]
if years:
    queries.append(" ".join([t for t in terms if t not in years] + years[:1]))
pool = {}
def add(hits, weight):
    for rank, h in enumerate(hits):
        key = (h["file"], h["page"])
        pool[key] = pool.get(key, 0.0) + weight / (1 + rank)
for q in queries:
    add(search(q, k=8), 0.5 if likely else 1.0)
    for d in likely:
        add(search(q, k=4, doc=d), 0.5 * name_score(d))
best_pages = sorted(pool, key=lambda k: -pool[k])[:READ_PAGES]
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
    scores.append(score_reading(r, i) + 0.5 * agree)
for (d, p), s, r in zip(best_pages, scores, readings):
    print(f"{d} p.{p} score={s:.2f}: {r.splitlines()[0][:160]}")
if scores and max(scores) > 0:
    i = scores.index(max(scores))
    d, p = best_pages[i]
    cite(d, p)
    final_answer = {"answer": [values[i]], "citations": [{"file": d, "page": p}]}
else:
    final_answer = {"answer": [], "citations": []}
print("ANSWER:", final_answer["answer"], final_answer["citations"])
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""
)

_CONTEXT_CODE = (
    "import re\n"
    f"NUMBER = {_NUMBER.pattern!r}\n"
    + """
# No corpus: score paragraphs of `context` by question terms, read the best ones.
chunks = [c for c in context.split("\\n\\n") if c.strip()] or [context]
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
    final_answer = {"answer": [pick_value(readings[scores.index(max(scores))])], "citations": []}
else:
    final_answer = {"answer": [], "citations": []}
print("ANSWER:", final_answer["answer"])
print("OFFLINE_ANSWER" + "_READY")  # split so the echoed code does not match
"""
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
        has_corpus = "No document corpus" not in str(messages[0].get("content", ""))
        code = _root_code(question, has_corpus)
        return (
            "I will locate candidate pages with search, read them with the sub-model, "
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
    """`root`, `extract` or `sub`, from the marker line of the first message."""
    first = str(messages[0].get("content", "")) if messages else ""
    if first.startswith(ROOT_MARKER):
        return "root"
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
        elif role == "extract":
            text = extract_reply(messages)
        else:
            text = read("\n".join(str(m.get("content", "")) for m in messages))
        usage = Usage(count_message_tokens(messages), count_tokens(text), 0)
        return Completion(
            text=text,
            usage=usage,
            model=self.model,
            latency_s=time.perf_counter() - start,
            cost_usd=0.0,
            usage_source="tiktoken",
        )
