"""Reading a root-model reply: REPL code blocks and the FINAL(...) / FINAL_VAR(name) protocol.

Code runs from ```repl fences (the rlms/MADQA convention) and ```python / ```py fences (what
models write anyway), in the order they appear. A reply whose last such block lacks its closing
fence (the model ran out of tokens, or simply stopped) still runs that block: the code up to the
end of the reply is what the model meant to execute. FINAL markers count only outside code and at the
start of a line, so a model that writes `print("FINAL(...)")` in code or says "I will call
FINAL(...) later" mid-sentence does not end the run by accident.
"""

import re
from dataclasses import dataclass

_FENCE = re.compile(r"```[ \t]*(repl|python|py)[ \t]*\n(.*?)(?:\n[ \t]*)?```", re.DOTALL)
_OPEN = re.compile(r"```[ \t]*(?:repl|python|py)[ \t]*\n")
_ANY_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_FINAL_VAR = re.compile(r"^[ \t]*FINAL_VAR\(\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?\s*\)", re.M)
_FINAL = re.compile(r"^[ \t]*FINAL\(", re.M)


@dataclass(frozen=True)
class Final:
    """A final answer: literal text (`FINAL`) or the name of a REPL variable (`FINAL_VAR`)."""

    kind: str  # "text" | "var"
    value: str


def find_code_blocks(reply: str) -> list[str]:
    """Code of every ```repl / ```python block, in order (empty blocks dropped), plus a final
    block left open at the end of the reply."""
    blocks = []
    end = 0
    for m in _FENCE.finditer(reply):
        if m.group(2).strip():
            blocks.append(m.group(2).strip("\n"))
        end = m.end()
    tail = _OPEN.search(reply, end)
    if tail is not None and "```" not in reply[tail.end() :]:
        code = reply[tail.end() :].strip("\n")
        if code.strip():
            blocks.append(code)
    return blocks


def _outside_code(reply: str) -> str:
    """The reply with every fenced block blanked out (line structure kept)."""
    return _ANY_FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), reply)


def prose(reply: str) -> str:
    """The reply's text outside fenced blocks, stripped: what a forced final turn said in words
    (a reply that is only a code block says nothing, so it has no answer)."""
    return _outside_code(reply).strip()


def _balanced(text: str, start: int) -> str | None:
    """Text from `start` up to the parenthesis closing the one just before it."""
    depth = 1
    quote = ""
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'" and (i == start or not text[i - 1].isalnum()):
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[start:i]
    return None


def find_final(reply: str) -> Final | None:
    """The FINAL_VAR or FINAL marker written outside code, if any (FINAL_VAR wins, as in rlms)."""
    text = _outside_code(reply)
    var = _FINAL_VAR.search(text)
    if var:
        return Final("var", var.group(1))
    final = _FINAL.search(text)
    if not final:
        return None
    inner = _balanced(text, final.end())
    if inner is None:  # unclosed: take the rest of the reply, as rlms does
        inner = text[final.end() :]
    inner = inner.strip()
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "\"'":
        inner = inner[1:-1]
    return Final("text", inner)
