"""When a finishing turn earns a confirmation turn: only when its output shows something new.

A cell that sets `answer["ready"] = True` and prints gets one more turn to look at what it
printed (`engine.loop`). That turn costs a whole root call (the conversation so far plus the
output), so it is spent only when the output holds something the model has not already seen:

- an error (that turn never finishes: see `loop`), or an engine warning such as a page cited
  without being read: always confirmed;
- otherwise each word and number the cells printed is looked up among what the model has seen:
  its own reply (code and prose: the labels of its `print` calls) and the answer's fields. A
  number that is not there (a computed 12.3456 when the answer says 12.3, an amount read from a
  page) or a word that is not there (page text) is new, and the turn is confirmed. Output made
  only of the answer and the model's own labels ends the run at once.

Numbers are compared as whole tokens (`12.3` is not `12.34`; thousands separators are kept, so
`1,234` matches only `1,234`), words case-insensitively.
"""

import re
from typing import Any

from rlm_docs.engine.feedback import warning
from rlm_docs.engine.records import CodeBlock

_TOKEN = re.compile(r"\d[\d,]*(?:\.\d+)?|[^\W\d_]+")


def tokens(text: str) -> set[str]:
    """The numbers and words of `text`, lower-cased (a trailing thousands comma dropped)."""
    return {t.rstrip(",").lower() for t in _TOKEN.findall(text)}


def _answer_text(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(_answer_text(v) for v in value.values())
    if isinstance(value, list | tuple):
        return " ".join(_answer_text(v) for v in value)
    return str(value)


def unseen(blocks: list[CodeBlock], reply: str, answer: Any) -> set[str]:
    """The printed tokens that are neither in the model's reply nor in the answer."""
    printed = set().union(*(tokens(b.result.stdout) for b in blocks))
    return printed - tokens(reply) - tokens(_answer_text(answer))


def needs_confirmation(blocks: list[CodeBlock], reply: str, answer: Any) -> bool:
    """Whether the finishing turn's output holds anything the model has not seen (see the
    module docstring): an error, a warning, or a printed word or number that is new."""
    if any(b.result.stderr or warning(b) or b.result.restarted for b in blocks):
        return True
    return bool(unseen(blocks, reply, answer))
