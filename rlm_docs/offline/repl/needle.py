"""Needle lookups: grep for each key the question names and read the value (sandbox code)."""

from __future__ import annotations

import re
from collections.abc import Callable

from rlm_docs.offline.repl.readings import announce


def needle_answer(task: dict, grep: Callable, cite: Callable) -> dict:
    """Each key by exact match; the first long number after it on its line is the value."""
    values, citations = [], []
    for key in task["keys"]:
        hits = grep(re.escape(key))
        print(key, "->", [(h["file"], h["page"], h["text"][:120]) for h in hits[:3]])
        for h in hits[:1]:
            found = re.findall(r"\d[\d,]{3,}\d", h["text"].split(key, 1)[-1])
            if found:
                values.append(found[0].replace(",", ""))
                cite(h["file"], h["page"])
                citations.append({"file": h["file"], "page": h["page"]})
    final_answer = {"values": values, "citations": citations}
    announce(final_answer)
    return final_answer
