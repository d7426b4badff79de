"""Reading a baseline model's reply: a tool request (`SEARCH: query`, or whichever tool names
the agent offers, one `NAME: arguments` line) or a final JSON answer.

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
_TOOL = re.compile(r"^[ \t]*([A-Z][A-Z_]{0,30}):[ \t]*(\S.*)$", re.MULTILINE)
SEARCH = ("SEARCH",)


@dataclass(frozen=True)
class Reply:
    """`query` is set for a tool request (the arguments of tool `tool`); otherwise `answer`
    (with its citations) is final."""

    query: str | None = None
    tool: str | None = None
    answer: Answer = field(default_factory=Answer)
    structured: bool = False


def read_reply(text: str, tools: tuple[str, ...] = SEARCH, allow_tools: bool = True) -> Reply:
    """Classify and parse one reply: its last request of one of `tools`, else its answer (on a
    forced last turn, `allow_tools=False`, a request is ignored and its line dropped)."""
    parsed = parse_answer(text)
    if parsed is not None:
        return Reply(answer=parsed, structured=True)
    requests = [(name, args) for name, args in _TOOL.findall(text) if name in tools]
    if requests and allow_tools:
        name, args = requests[-1]
        return Reply(query=args.strip().strip("\"'"), tool=name)
    free = _TOOL.sub(lambda m: "" if m.group(1) in tools else m.group(0), text)
    return Reply(answer=heuristic_answer(free))


def answer_format(label: str) -> str:
    """The reply format every baseline prompt ends with (`prompts/answer_format.txt`): the
    answer record as JSON, which wins over a format the question asks for (its values go in
    `values`); `label` names where the model reads a page's file name."""
    return render("answer_format", label=label)
