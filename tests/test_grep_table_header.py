"""A grep hit on a table row carries the row's column header (the line of years above it): a
row's cells do not say which column is which period, and without the header a model reads the
whole page only to learn the column order."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.tables import column_header
from rlm_docs.repl.helpers import make_helpers

BALANCE = (
    "CONSOLIDATED BALANCE SHEET\n"
    "(Dollars in millions)           December 31, 2018     2017\n"
    "\n"
    "Cash and cash equivalents            $ 2,853        $ 3,053\n"
    "Total current assets                   13,709         14,277\n"
    "\n"
    "See the notes, of which note 12 describes the 2017 reorganisation.\n"
)
PROSE = "Revenue grew in 2018 and in 2017, as described on pages 12 and 14.\n"


@pytest.fixture(scope="module")
def grep():
    return make_helpers(Corpus.from_documents({"ACME_2018_10K": [BALANCE, PROSE]}))["grep"]


def test_a_hit_on_a_row_carries_the_line_of_years_above_it(grep):
    (hit,) = grep("Total current assets")
    assert hit["header"] == "(Dollars in millions)  December 31, 2018  2017"  # as page() shows it
    assert hit["text"].startswith("Total current assets")


def test_prose_and_header_lines_get_no_header(grep):
    (prose,) = grep("reorganisation")
    assert "header" not in prose  # not a row: no cells apart by runs of spaces
    (other_page,) = grep("Revenue grew")
    assert "header" not in other_page
    (header_hit,) = grep("Dollars in millions")
    assert "header" not in header_hit  # the header itself: nothing above it names two years


def test_a_line_with_other_numbers_is_not_a_header():
    lines = ["Pages 112 and 140 of the 2018   2017 reports", "Total   1,000   2,000"]
    assert column_header(lines, 1) is None
    lines = ["Income was $25 million in 2018 and in 2017.", "Total   1,000   2,000"]
    assert column_header(lines, 1) is None  # a sentence, not cells
    lines = ["Year       2019      2018", "x", "Revenue    1,000     900"]
    assert column_header(lines, 2) == "Year       2019      2018"
