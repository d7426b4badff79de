"""`lines()`: the records of record-per-line text with their pages, whole across page
boundaries, numbered as `grep` numbers them; and the hint `page()` gives when a table goes on
to the next page."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.tables import continues, is_row
from rlm_docs.repl.helpers import make_helpers

# Page 1 ends in the middle of a record ("Instance: Wha" + "t is ..."), page 2 at a line end.
LOG = [
    "Records, one per line.\n\nDate: Jan 01, 2023 || User: 1 || Instance: Who is it ?\n"
    "Date: Jan 02, 2023 || User: 2 || Instance: Wha",
    "t is a dentist ?\nDate: Jan 03, 2023 || User: 3 || Instance: Where is Rome ?\n",
    "Date: Jan 04, 2023 || User:   4 || Instance: How far ?\n",
]
TABLE_1 = (
    "Watch functions\nFunction      Button    Hold (s)\nAlarm      A    2\nTimer      B    3\n"
)
TABLE_2 = "4\nStopwatch      C    1\nLight      D    0\n\nNotes follow.\n"
PROSE = "Some text.\nMore text about the watch.\n"


@pytest.fixture(scope="module")
def helpers():
    docs = {"log": LOG, "manual": [TABLE_1, TABLE_2, PROSE, TABLE_1]}
    return make_helpers(Corpus.from_documents(docs))


def test_lines_rejoin_a_record_cut_by_a_page_boundary(helpers):
    out = helpers["lines"]("log")
    assert [(r["page"], r["line"], r["text"]) for r in out] == [
        (1, 1, "Records, one per line."),
        (1, 3, "Date: Jan 01, 2023 || User: 1 || Instance: Who is it ?"),
        (1, 4, "Date: Jan 02, 2023 || User: 2 || Instance: What is a dentist ?"),
        (2, 2, "Date: Jan 03, 2023 || User: 3 || Instance: Where is Rome ?"),
        (3, 1, "Date: Jan 04, 2023 || User:  4 || Instance: How far ?"),  # compact text
    ]
    assert out[2]["continued"] == 2 and all("continued" not in r for r in out[:2] + out[3:])
    assert helpers["lines"]("log", raw=True)[-1]["text"].count("User:   4") == 1


def test_lines_are_numbered_as_grep_numbers_them_and_limited_to_pages(helpers):
    by_place = {(r["page"], r["line"]): r for r in helpers["lines"]("log")}
    for hit in helpers["grep"]("Instance: Wh", doc="log"):
        assert hit["text"] in by_place[(hit["page"], hit["line"])]["text"]
    alone = helpers["lines"]("log", start=2, end=2)  # without page 1: the cut record's tail
    assert [(r["page"], r["text"][:16]) for r in alone] == [
        (2, "t is a dentist ?"),
        (2, "Date: Jan 03, 20"),
    ]
    assert [r["page"] for r in helpers["lines"]("log", start=3)] == [3]
    assert helpers["lines"]("log", start=5) == []


def test_lines_without_doc_read_every_document_and_count_as_reads():
    from rlm_docs.repl.helpers import ReadLog

    reads = ReadLog()
    helpers = make_helpers(Corpus.from_documents({"a": ["x\n", "y\n"], "b": ["z"]}), reads)
    assert [(r["file"], r["text"]) for r in helpers["lines"]()] == [
        ("a", "x"),
        ("a", "y"),
        ("b", "z"),
    ]
    assert reads == [["a", 1], ["a", 2], ["b", 1]]
    with pytest.raises(TypeError):
        helpers["lines"]("a", start="1")


def test_a_table_running_onto_the_next_page_is_signalled(helpers):
    assert is_row("Alarm      A    2") and not is_row("More text about the watch.")
    assert helpers["page"]("manual", 1).endswith("\n[table continues on page 2]")
    assert "[table continues" not in helpers["page"]("manual", 2)  # prose follows
    assert "[table continues" not in helpers["page"]("manual", 4)  # the last page
    assert helpers["pages"]("manual", 1, 2).count("[table continues") == 0  # page 2 is there
    assert helpers["pages"]("manual", 2, 3).count("[table continues") == 0
    assert helpers["pages"]("manual", 1, 1).endswith("[table continues on page 2]")
    assert not continues(TABLE_1, PROSE) and not continues(PROSE, TABLE_1)
    assert continues(TABLE_1, TABLE_2)  # the page number "4" above the rows is skipped
    assert not is_row("1.8.     Nonqualified Plan I means the plan.")  # a paragraph
    assert not continues(TABLE_1 + "Total      4    5\n", TABLE_2)  # a table ends on its total
    captioned = "Components of deferred tax assets and liabilities\n" + TABLE_2
    assert not continues(TABLE_1, captioned)  # a new table under its caption
