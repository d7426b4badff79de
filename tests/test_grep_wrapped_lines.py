"""grep finds a phrase whose words a page wraps over lines (a table label such as "Research
and / development / expenses"), since a model greps the phrase it expects, not the layout; it
stays a case-sensitive per-line regex otherwise. Every hit's `text` is written as the page has
it and `offset` is where the match starts there, so a hit is found again in `page()` text."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.repl.helpers import make_helpers

OPEX = (
    "                     Three Months Ended\n"
    "                    Oct 29, 2023   Oct 30, 2022   Change\n"
    "   Research and\n"
    "   development\n"
    "   expenses                   $  2,294     $  1,945    18 %\n"
    "   Sales, general and\n"
    "   administrative expenses         689           631\n"
    "\n"
    "   The increases in research and development expenses reflect compensation.\n"
)
DOCS = {"2023 Q3 NVDA": ["Cover.", OPEX], "NOTES": ["Research\n\nand development"]}


@pytest.fixture(scope="module")
def grep():
    return make_helpers(Corpus.from_documents(DOCS))["grep"]


def test_a_label_wrapped_over_lines_is_found_with_its_figures(grep):
    (hit,) = grep("Research and development expenses")
    assert (hit["file"], hit["page"], hit["line"]) == ("2023 Q3 NVDA", 2, 3)
    assert hit["text"] == "Research and\ndevelopment\nexpenses  $  2,294  $  1,945  18 %"
    (hit,) = grep("Research and development", doc="2023 Q3 NVDA", context=1)
    assert hit["context"].split("\n")[1] == "> Research and"


def test_grep_is_case_sensitive_unless_the_pattern_says_otherwise(grep):
    assert [h["line"] for h in grep("(?i)research and development")] == [3, 9]
    assert [h["line"] for h in grep("research and development")] == [9]


def test_one_line_hits_are_unchanged_and_in_line_order(grep):
    lines = [(h["line"], h["text"]) for h in grep("general and|expenses", doc="2023 Q3 NVDA")]
    assert lines == [
        (5, "expenses  $  2,294  $  1,945  18 %"),
        (6, "Sales, general and"),
        (7, "administrative expenses  689  631"),
        (9, "The increases in research and development expenses reflect compensation."),
    ]
    assert [h["line"] for h in grep("^development$")] == [4]  # anchors still mean a line


def test_a_match_never_crosses_a_blank_line_nor_spans_more_than_three_lines(grep):
    assert grep(r"Research\s+and development", doc="NOTES") == []
    assert [h["line"] for h in grep("Ended.*Research and")] == [1]  # three lines: found
    assert grep("Three Months.*Research and development") == []  # four lines
    assert grep("Research.*compensation") == []


def test_raw_text_wraps_the_same_way(grep):
    (hit,) = grep("Research and development expenses", raw=True)
    assert hit["line"] == 3 and hit["text"].startswith(  # the layout spacing is kept
        "Research and\n   development\n   expenses" + " " * 10
    )


@pytest.mark.parametrize("raw", [False, True])
def test_a_hits_text_and_offset_are_found_in_the_page_text(raw):
    helpers = make_helpers(Corpus.from_documents(DOCS))
    hits = helpers["grep"]("(?i)research and development|general and|expenses", raw=raw)
    assert len(hits) == 5
    for hit in hits:
        text = helpers["page"](hit["file"], hit["page"], raw=raw)
        assert hit["text"] in text
        where = text.find(hit["text"])
        assert where <= hit["offset"] < where + len(hit["text"])
        assert text.splitlines()[hit["line"] - 1].strip() in hit["text"]
    wrapped = next(h for h in hits if h["line"] == 3)
    text = helpers["page"]("2023 Q3 NVDA", 2, raw=raw)
    assert text[wrapped["offset"] :].startswith("Research and")
