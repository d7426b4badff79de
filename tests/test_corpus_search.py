"""BM25 page search: ranking, the document filter, the name boost, snippets, and the stored
index giving the same results as an in-memory one."""

import re
import string
import sys
from pathlib import Path

import numpy as np
import pytest
import Stemmer

from rlm_docs.corpus import Corpus, Hit
from rlm_docs.corpus.filings import (
    QueryFacts,
    company_match,
    describe,
    kind_match,
    parse_query,
    period_match,
)
from rlm_docs.corpus.search import (
    LOWER_TO_ASCII,
    Ranking,
    _term_positions,
    _term_prefixes,
    cutoff,
    snippet,
    word_bytes,
)
from rlm_docs.errors import CorpusError

FILLER = "The company discussed general business matters and other items. " * 3
DOCS = {
    "ACME_2017_10K": [
        FILLER,
        "Capital expenditures were $1,577 million in 2017. " + FILLER,
        "Net sales increased to $31,657 million in 2017. " + FILLER,
    ],
    "ACME_2018_10K": [
        FILLER,
        "Capital expenditures were $1,577 million in 2018 and $1,373 million in 2017. " + FILLER,
        "Net sales increased to $32,765 million in 2018. " + FILLER,
        "Dividends paid to shareholders rose. " + FILLER,
    ],
    "GLOBEX_2018_10K": [
        "Globex capital expenditures totalled $900 million. Capital projects included plants. "
        + FILLER,
        "Globex net sales. " + FILLER,
    ],
}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus.from_documents(DOCS)


def test_ranking_prefers_term_dense_pages(corpus: Corpus) -> None:
    hits = corpus.search("capital expenditures", k=3, boost_names=False)
    assert all(isinstance(h, Hit) for h in hits)
    assert hits[0] == Hit("GLOBEX_2018_10K", 1, hits[0].score, hits[0].snippet)
    assert {(h.document, h.page) for h in hits[1:]} == {("ACME_2017_10K", 2), ("ACME_2018_10K", 2)}
    assert hits[0].score >= hits[1].score >= hits[2].score > 0


def test_only_pages_with_a_query_term_are_returned(corpus: Corpus) -> None:
    hits = corpus.search("dividends", k=5)
    assert [(h.document, h.page) for h in hits] == [("ACME_2018_10K", 4)]
    assert corpus.search("the and of", k=5) == []  # stopwords only
    assert corpus.search("zebra", k=5) == []
    assert corpus.search("net sales", k=0) == []


def test_stemming_matches_word_forms(corpus: Corpus) -> None:
    hits = corpus.search("dividend paying", k=1)
    assert (hits[0].document, hits[0].page) == ("ACME_2018_10K", 4)


def test_document_filter_returns_k_hits_from_that_document(corpus: Corpus) -> None:
    hits = corpus.search("net sales company", k=4, document="acme_2018_10k")
    assert len(hits) == 4 and {h.document for h in hits} == {"ACME_2018_10K"}
    assert hits[0].page == 3
    with pytest.raises(CorpusError, match="unknown document 'ACME_2019_10K'"):
        corpus.search("net sales", document="ACME_2019_10K")


def test_name_boost_picks_the_filing_of_the_named_year(corpus: Corpus) -> None:
    query = "What were ACME's FY2018 net sales?"
    boosted = corpus.search(query, k=3)
    assert (boosted[0].document, boosted[0].page) == ("ACME_2018_10K", 3)
    same_words = Ranking(strip=False)  # keep the words that named the filing, as plain BM25 does
    plain = corpus.search(query, k=6, boost_names=False, ranking=same_words)
    assert ("GLOBEX_2018_10K", 2) in {(h.document, h.page) for h in plain}
    # Boosted scores exceed plain BM25 only for the named company's pages.
    plain_scores = {(h.document, h.page): h.score for h in plain}
    for h in corpus.search(query, k=6, ranking=same_words):
        key = (h.document, h.page)
        assert (h.score > plain_scores[key]) == h.document.startswith("ACME")


def test_filing_match_scores_company_year_and_kind() -> None:
    q = parse_query("What is American Express's FY22 revenue vs fiscal year 2021 in the 10-K?")
    assert q.years == {2021, 2022}

    def fit(name: str, query: str | QueryFacts = q) -> float:
        facts = parse_query(query) if isinstance(query, str) else query
        f = describe(name)
        c = company_match(f, facts)
        return c * (0.6 + 0.3 * period_match(f, facts) + 0.1 * kind_match(f, facts))

    assert fit("AMERICANEXPRESS_2022_10K") == pytest.approx(1.0)
    assert fit("AMERICANEXPRESS_2021_10K") == pytest.approx(0.6 + 0.3 * 0.5 + 0.1)
    assert fit("AMEX_2022_10K") == 0.0
    assert fit("3M_2018_10K", "3M's capex in FY2018") == pytest.approx(1.0)


def test_snippet_centres_on_matching_terms() -> None:
    text = (
        ("lorem ipsum " * 60) + "Capital   expenditures\n\nwere $1,577 million." + (" dolor" * 80)
    )
    s = snippet(text, {"capit", "expenditur"})
    assert "Capital expenditures were $1,577 million." in s
    assert s.startswith("…") and s.endswith("…") and len(s) <= 202
    assert snippet("short page", {"x"}) == "short page"


def test_snippet_is_the_same_when_its_words_are_cached() -> None:
    text = ("filler words here " * 40) + "Companies reported company revenues." + (" tail" * 60)
    first = snippet(text, {"compani", "revenu"})
    assert "Companies reported company revenues." in first
    assert snippet(text, {"compani", "revenu"}) == first  # the words' stems now cached


def test_term_positions_count_each_word_once_under_its_own_stem() -> None:
    # "in" and "incom" share the prefix " in": "income" is found by both prefixes' scans and
    # must count once, for "incom"; "inch" starts like "in" but stems to "inch".
    text = "Income in 2022 rose; inches and INCOMES, within income."
    terms = {"in", "incom", "2022"}
    expected = []
    words = word_bytes(text)
    for m in re.finditer(rb"[a-z0-9]+", words):
        stem = Stemmer.Stemmer("english").stemWord(m.group().decode())
        if stem in terms and m.group().startswith(stem[: max(2, len(stem) - 1)].encode()):
            expected.append((m.start(), stem))
    assert _term_positions(text, _term_prefixes(terms)) == expected
    assert [stem for _, stem in expected] == ["incom", "in", "2022", "incom", "incom"]


def test_word_bytes_lowers_like_str_lower() -> None:
    # Lowering after encoding is only right for the characters that do not lower into ASCII
    # or into two characters: exactly LOWER_TO_ASCII, over every code point.
    changed = "".join(
        c
        for c in map(chr, range(128, sys.maxunicode + 1))
        if (low := c.lower()) != c and (len(low) != 1 or low.isascii())
    )
    assert changed == LOWER_TO_ASCII
    keep = string.ascii_lowercase + string.digits
    for text in (
        "Net SALES (2018): $1,234.5 million",
        "Café Ünïcode — “quoted” 10-K’s\u00a0figures",
        "İSTANBUL 5 \u212aELVIN Kelvin",
        "",
    ):
        assert word_bytes(text) == bytes(ord(c) if c in keep else 32 for c in text.lower())


def test_cutoff_is_the_depth_th_largest_score() -> None:
    rng = np.random.default_rng(0)
    for n, depth in ((41, 40), (100, 40), (639, 40), (640, 40), (5000, 40), (43000, 4), (50, 1)):
        for scores in (
            rng.random(n),
            rng.integers(0, 3, n).astype(np.float64),  # many ties at the cut-off
            np.sort(rng.random(n)),  # the sample holds the smallest of each stride
        ):
            assert cutoff(scores, depth) == np.sort(scores)[-depth]


def test_stored_index_matches_in_memory(corpus: Corpus, tmp_path: Path) -> None:
    loaded = Corpus.load(corpus.save(tmp_path / "store"))
    for query in ("capital expenditures 2018", "ACME FY2017 net sales", "dividends"):
        assert loaded.search(query, k=5) == corpus.search(query, k=5)


def test_query_text_expands_fiscal_years_and_drops_instructions() -> None:
    from rlm_docs.corpus.sec_ranker import query_text

    text = query_text(
        "Assume you are an analyst. What is 3M's FY18 capex? Round to one decimal. FY 2019"
    )
    assert text.split() == [
        "are",
        "an",
        "what",
        "is",
        "3m",
        "fy18",
        "2018",
        "capex",
        "capital",
        "expenditures",
        "to",
        "one",
        "fy",
        "2019",
        "2019",
    ]


def test_heading_field_prefers_the_statement_over_prose() -> None:
    from rlm_docs.corpus.search import Ranking

    statement = "CONSOLIDATED BALANCE SHEETS\n" + "Cash 120 Inventories 340 Total assets 990\n" * 50
    prose = (
        "x " * 200
        + "The balance sheet remained strong; our balance sheet flexibility "
        + "y " * 100
    )
    docs = {
        "A": [statement],
        "B": [prose],
        "C": ["unrelated text " * 40],
        "D": ["more filler " * 40],
    }
    text_only = Ranking(named=0.0, implied=0.0)
    corpus = Corpus.from_documents(docs)
    assert corpus.search("balance sheet", k=1, ranking=text_only)[0].document == "A"
    no_head = Ranking(head=0.0, named=0.0, implied=0.0)
    assert corpus.search("balance sheet", k=1, ranking=no_head)[0].document == "B"


def test_store_without_heading_index_still_searches(corpus: Corpus, tmp_path: Path) -> None:
    import shutil

    path = corpus.save(tmp_path / "store")
    shutil.rmtree(path / "bm25" / "head")  # as written before the heading field existed
    assert Corpus.load(path).search("capital expenditures 2018", k=5) == corpus.search(
        "capital expenditures 2018", k=5
    )
