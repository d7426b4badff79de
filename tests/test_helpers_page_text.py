"""What the page helpers return: compact text by default and raw on request, citable `pages()`
output, grep context, hit titles, empty-page markers, and document filters (name, pattern,
list) for files/search/grep. Host-side `make_helpers`, the same functions the sandbox binds."""

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.compact import NO_TEXT, compact
from rlm_docs.corpus.document import Document
from rlm_docs.errors import CorpusError
from rlm_docs.repl.helpers import ReadLog, make_helpers

LAYOUT = (
    "                              ACME CORP\n"
    "                    CONSOLIDATED BALANCE SHEETS\n"
    "\n\n\n"
    "                                        2023            2022\n"
    "   Total assets                      $ 1,020         $   980\n"
    "   Total liabilities                     600             590\n"
)
DOCS = {
    "ACME_2023_10K": ["Cover page of the annual report.", LAYOUT, ""],
    "ACME_2022_10K": ["Cover.", "Total assets were $980 million."],
    "GLOBEX_2023_10K": ["Globex makes gadgets.", "Total assets were $55 million."],
}


@pytest.fixture(scope="module")
def helpers():
    return make_helpers(Corpus.from_documents(DOCS))


def test_compact_keeps_columns_apart_and_drops_padding():
    assert compact(LAYOUT) == (
        "ACME CORP\nCONSOLIDATED BALANCE SHEETS\n\n2023  2022\n"
        "Total assets  $ 1,020  $  980\nTotal liabilities  600  590"
    )
    assert compact("  \n \t\n") == NO_TEXT and compact("one space stays") == "one space stays"


def test_page_is_compact_by_default_and_raw_on_request(helpers):
    assert helpers["page"]("ACME_2023_10K", 2) == compact(LAYOUT)
    assert helpers["page"]("ACME_2023_10K", 2, raw=True) == LAYOUT
    assert len(helpers["page"]("ACME_2023_10K", 2)) < len(LAYOUT) / 2


def test_an_empty_page_says_so_unless_raw(helpers):
    assert helpers["page"]("ACME_2023_10K", 3) == NO_TEXT
    assert "no text on this page" in NO_TEXT
    assert helpers["page"]("ACME_2023_10K", 3, raw=True) == ""


def test_pages_is_one_string_with_a_citable_header_per_page():
    log = ReadLog()
    h = make_helpers(Corpus.from_documents(DOCS), log)
    text = h["pages"]("acme_2023_10k", 1, 3)
    assert text.split("\n")[0] == "=== ACME_2023_10K page 1 ==="
    assert "\n\n=== ACME_2023_10K page 2 ===\nACME CORP\n" in text
    assert text.endswith("=== ACME_2023_10K page 3 ===\n" + NO_TEXT)
    assert log == [["ACME_2023_10K", 1], ["ACME_2023_10K", 2], ["ACME_2023_10K", 3]]


def test_grep_context_shows_the_lines_around_each_hit(helpers):
    hits = helpers["grep"](r"Total liabilities", doc="ACME_2023_10K", context=2)
    assert len(hits) == 1
    hit = hits[0]
    lines = helpers["page"]("ACME_2023_10K", 2).splitlines()
    assert lines[hit["line"] - 1] == hit["text"] == "Total liabilities  600  590"
    assert (
        hit["context"]
        == "  2023  2022\n  Total assets  $ 1,020  $  980\n> Total liabilities  600  590"
    )
    assert "context" not in helpers["grep"](r"Total liabilities")[0]


def test_search_hits_carry_the_page_title(helpers):
    hit = helpers["search"]("total liabilities balance sheet", k=1)[0]
    assert (hit["file"], hit["page"]) == ("ACME_2023_10K", 2)
    assert set(hit) == {"file", "page", "score", "title", "snippet"}
    assert "BALANCE SHEETS" in hit["title"].upper()
    assert "   " not in hit["snippet"]  # compact, like page text


def test_doc_filters_take_a_name_a_pattern_or_a_list(helpers):
    search, grep, files = helpers["search"], helpers["grep"], helpers["files"]
    docs = lambda hits: sorted({h["file"] for h in hits})  # noqa: E731
    assert docs(grep("Total assets")) == ["ACME_2022_10K", "ACME_2023_10K", "GLOBEX_2023_10K"]
    assert docs(grep("Total assets", doc="ACME")) == ["ACME_2022_10K", "ACME_2023_10K"]
    assert docs(grep("Total assets", doc="*_2023_10K")) == ["ACME_2023_10K", "GLOBEX_2023_10K"]
    both = ["acme_2022_10k", "GLOBEX*"]
    assert docs(search("total assets", k=10, doc=both)) == ["ACME_2022_10K", "GLOBEX_2023_10K"]
    assert docs(search("total assets", k=10, doc="globex_2023_10k")) == ["GLOBEX_2023_10K"]
    with pytest.raises(CorpusError, match="INITECH"):
        grep("x", doc="INITECH")
    with pytest.raises(TypeError, match="doc must be"):
        search("x", doc=3)
    assert [f["name"] for f in files("2023")] == ["ACME_2023_10K", "GLOBEX_2023_10K"]
    assert [f["name"] for f in files()] == list(DOCS)
    assert files("INITECH") == []


def test_files_shows_metadata_when_the_store_has_it(tmp_path):
    from rlm_docs.corpus.document import Document

    docs = [
        Document(
            "3M_2018_10K", ["a"], meta={"company": "3M", "doc_type": "10k", "doc_period": 2018}
        ),
        Document("plain", ["b"]),
    ]
    corpus = Corpus.from_documents(docs)
    rows = make_helpers(corpus)["files"]()
    assert rows[0]["company"] == "3M" and rows[0]["kind"].lower().replace("-", "") == "10k"
    assert str(rows[0]["period"]) == "2018"
    assert set(rows[1]) == {"name", "pages", "tokens"}


def test_files_passes_on_the_metadata_period_end_and_never_invents_one():
    kg = {"company": "NVIDIA", "period": "2023 Q3", "period_end": "October 29, 2023"}
    corpus = Corpus.from_documents(
        [Document("2023 Q3 NVDA", ["x"], meta=kg), Document("ACME_2023_10K", ["y"])]
    )
    nvda, acme = make_helpers(corpus)["files"]()
    assert nvda["period"] == "2023 Q3" and nvda["period_end"] == "October 29, 2023"
    assert "period_end" not in acme
