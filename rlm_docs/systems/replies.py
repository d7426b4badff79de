"""Reading a baseline model's reply: a `SEARCH: query` request or a final JSON answer.

The final answer is the answer record as JSON, `{"values": [...], "explanation": "...",
"caveat": "...", "citations": [{"file", "page"}]}` (MADQA's structured output, `{"answer": [...],
"citations": [...]}`, is read too); a reply in neither form is read as a free-text answer (first line + `file, page N`
mentions), which is what a model that ignores the format most likely meant.
"""

import re
from dataclasses import dataclass, field

from rlm_docs.answer_parsing import heuristic_answer, parse_answer
from rlm_docs.answer_record import Answer
from rlm_docs.templates import render

# Linear on any reply: anchored at a line start, no quantifier may cross a line.
_SEARCH = re.compile(r"^[ \t]*SEARCH:[ \t]*(\S.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Reply:
    """`query` is set for a search request; otherwise `answer` (with its citations) is final."""

    query: str | None = None
    answer: Answer = field(default_factory=Answer)
    structured: bool = False


def read_reply(text: str, allow_search: bool = True) -> Reply:
    """Classify and parse one reply (on a forced last turn, a search request is ignored)."""
    parsed = parse_answer(text)
    if parsed is not None:
        return Reply(answer=parsed, structured=True)
    search = _SEARCH.findall(text)
    if search and allow_search:
        return Reply(query=search[-1].strip().strip("\"'"))
    free = _SEARCH.sub("", text)
    return Reply(answer=heuristic_answer(free))


def answer_format(label: str) -> str:
    """The reply format every baseline prompt ends with (`prompts/answer_format.txt`): the
    answer record as JSON, which wins over a format the question asks for (its values go in
    `values`); `label` names where the model reads a page's file name."""
    return render("answer_format", label=label)


def page_block(document: str, page: int, text: str, max_chars: int) -> str:
    """One retrieved page as shown to the model (MADQA shows file name and page with each)."""
    body = text if len(text) <= max_chars else text[:max_chars] + "\n[... page truncated ...]"
    return f"[FILE: {document} | PAGE: {page}]\n{body}\n[END PAGE]"
