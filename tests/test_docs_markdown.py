"""The site's pages render as written: Python-Markdown, which MkDocs uses, starts a list only
after a blank line, so a list written right under a paragraph line is shown as one run-on
paragraph (the numbered layers of docs/guide/sandbox.md once were)."""

import re

from tests.doc_snippets import ROOT, pages

_ITEM = re.compile(r"(- |\* |\d+\. )")
_NOT_PROSE = re.compile(r"(- |\* |\d+\. |\s|\||#|<!--|```)")


def glued_lists(text: str) -> list[int]:
    """Line numbers of list items that directly follow a line of prose, outside code fences."""
    glued, fenced = [], False
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        before = lines[number - 2] if number > 1 else ""
        if not fenced and _ITEM.match(line) and before.strip() and not _NOT_PROSE.match(before):
            glued.append(number)
    return glued


def test_a_list_under_a_paragraph_line_is_found():
    assert glued_lists("Layers:\n1. one\n2. two\n\nText\n\n- item\n```\nx:\n- y\n```") == [2]


def test_every_list_starts_after_a_blank_line():
    found = {page: glued_lists((ROOT / page).read_text(encoding="utf-8")) for page in pages()}
    assert {page: lines for page, lines in found.items() if lines} == {}
