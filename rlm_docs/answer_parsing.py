"""Free-text final answer -> the answer record (`rlm_docs.answer_record.Answer`) + citations.

It sits below the engine, the systems and the models because all three parse answers with it
(the engine's extraction step, the baselines' replies, the `offline` model's extract role).

MADQA formats an RLM's free-text response with a separate extraction call. We first try a
deterministic parse and only call the `extract` role when that fails, so structured answers
cost nothing extra. Parsed without a call: the record as JSON `{"values": [...], "explanation":
"...", "caveat": "...", "citations": [...]}` (also fenced; MADQA's key `answer` is read as
`values`), a list of values, the earlier docs prompt's form `["$8.70 billion"] -- 3M_2018_10K
page 58` (a JSON list, then the pages it rests on), and a bare refusal ("Not answerable"), which
stays the answer (unanswerable questions are scored). Items of a values list that start
`Caveat:` are moved to the caveat (`answer_record.from_old_answer`), whichever form they came in.

Every parser here reads model text of any size, so each runs in linear time: fenced blocks are
found with `str.find`, and the citation pattern can only start at the beginning of a word and
has no two adjacent quantifiers that could share the same characters.
"""

import json
import re
from typing import Any

from rlm_docs.answer_record import REFUSAL, Answer, from_old_answer

_CITE = re.compile(
    r"(?<![\w.\-])(?P<file>[A-Za-z0-9][\w.\-]*?)(?:\.pdf|\.md|\.txt)?"
    r"\s*(?:[,;:]\s*)?(?:\(\s*)?(?:pages?|p\.|pp\.)\s*(?P<page>\d{1,5})",
    re.IGNORECASE,
)


def _as_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if str(v).strip()]
    text = str(value).strip()
    return [text] if text else []


def _citations(value: Any) -> list[dict[str, Any]]:
    out = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict) and ("file" in item or "document" in item) and "page" in item:
            out.append({"file": str(item.get("file", item.get("document"))), "page": item["page"]})
        elif isinstance(item, list | tuple) and len(item) == 2:
            out.append({"file": str(item[0]), "page": item[1]})
    return out


def _text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return " ".join(str(v).strip() for v in value if str(v).strip())
    return "" if value is None else str(value).strip()


def from_structured(value: Any) -> Answer | None:
    """A dict with `values` (or MADQA's `answer`) and maybe `explanation`, `caveat`,
    `citations`, or a list of strings; None otherwise."""
    if isinstance(value, dict) and ("values" in value or "answer" in value):
        items = _as_list(value["values"] if "values" in value else value["answer"])
        values, moved = from_old_answer(items)
        caveat = " ".join(c for c in (_text(value.get("caveat")), moved) if c)
        return Answer(
            values, _text(value.get("explanation")), caveat, _citations(value.get("citations"))
        )
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        values, caveat = from_old_answer(_as_list(value))
        return Answer(values, caveat=caveat)
    return None


def _json_blocks(text: str) -> list[str]:
    """Bodies of ``` and ```json fenced blocks, in order (one linear scan)."""
    found, pos = [], 0
    while (start := text.find("```", pos)) >= 0:
        eol = text.find("\n", start + 3)
        if eol < 0:
            break
        close = text.find("```", eol + 1)
        if close < 0:
            break
        if text[start + 3 : eol].strip().lower() in ("", "json"):
            found.append(text[eol + 1 : close])
        pos = close + 3
    return found


def _json_candidates(text: str) -> list[str]:
    stripped = text.strip()
    found = _json_blocks(text)
    if stripped[:1] in "[{":
        found.append(stripped)
    start, end = stripped.find("{"), stripped.rfind("}")
    if 0 <= start < end:
        found.append(stripped[start : end + 1])
    return found


_REFUSAL = re.compile(
    r"\W*(?:not answerable|unanswerable|cannot be answered(?: from the documents)?|"
    r"no answer(?: found)?(?: in the documents)?)\W*",
    re.IGNORECASE,
)
_MORE_PAGES = re.compile(r"\s*(?:,|and|&)\s*(?:pages?\s*|p\.\s*)?(\d{1,5})\b")


def bare_refusal(text: str) -> bool:
    """Whether `text` is nothing but the prompt's refusal form ("Not answerable", "cannot be
    answered", ...), which the parser turns into the REFUSAL answer. Stricter than the error
    taxonomy's `is_refusal`, which scores any answer that declines: a reply that merely
    mentions "not found" must still go to the extraction call."""
    return len(text) < 200 and _REFUSAL.fullmatch(text.strip()) is not None


def _listed(text: str) -> Answer | None:
    """`["value", ...] -- DOC page N` (the earlier docs prompt's FINAL form): the list, then
    citations."""
    stripped = text.strip()
    if not stripped.startswith("["):
        return None
    try:
        value, end = json.JSONDecoder().raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    parsed = from_structured(value)
    if parsed is None:
        return None
    parsed.citations = parsed.citations or cited_pages(stripped[end:])
    return parsed


def parse_answer(text: str) -> Answer | None:
    """Deterministic parse of a final answer (see module docstring); None when it needs the
    extraction call."""
    for candidate in _json_candidates(text):
        try:
            parsed = from_structured(json.loads(candidate))
        except (ValueError, TypeError, RecursionError):  # RecursionError: nested too deeply
            continue
        if parsed is not None:
            return parsed
    listed = _listed(text)
    if listed is not None:
        return listed
    if bare_refusal(text):
        return Answer([REFUSAL])
    return None


def cited_pages(text: str) -> list[dict[str, Any]]:
    """`file, page N` / `file p. N` mentions in free text, with page lists (`pages 58, 60 and
    61`) expanded (validated later against the corpus)."""
    out = []
    for m in _CITE.finditer(text):
        out.append({"file": m.group("file"), "page": int(m.group("page"))})
        pos = m.end()
        while more := _MORE_PAGES.match(text, pos):
            out.append({"file": m.group("file"), "page": int(more.group(1))})
            pos = more.end()
    return out


def heuristic_answer(text: str) -> Answer:
    """Best-effort split of free text: the first line without citation phrases is the value,
    with the text's citations.

    This is the `offline` model's extraction policy and the engine's last resort when the
    extraction call is refused by the budget.
    """
    parsed = parse_answer(text)
    if parsed is not None:
        return parsed
    citations = cited_pages(text)
    for line in text.splitlines():
        clean = re.sub(r"\(?\b(?:found in|source:?)\b.*$", "", line, flags=re.IGNORECASE)
        clean = _CITE.sub("", clean).strip(" -–—:;,.()[]\"'")
        if clean:
            return Answer([clean], citations=citations)
    return Answer(citations=citations)
