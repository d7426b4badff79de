"""Ranking beyond BM25 on small filings written here: the filing a query names (company from
metadata or name, year, quarter, date, kind), the statement it asks for, and the words that
named the filing kept out of page ranking; plus the query and name parsing behind it."""

import datetime as dt

import pytest

from rlm_docs.corpus import Corpus, Document
from rlm_docs.corpus.filings import (
    company_match,
    describe,
    kind_match,
    naming_words,
    parse_query,
    period_match,
)
from rlm_docs.corpus.headings import asked_kinds
from rlm_docs.corpus.search import Ranking

ROWS = "".join(
    f"    Item {i:<30} $ {1000 + 37 * i:>8,}   $ {900 + 29 * i:>8,}\n" for i in range(20)
)
PROSE = "Management discussed results, demand and pricing across regions in detail. " * 6


def _filing(name: str, pages: list[str], **meta: object) -> Document:
    return Document(name, pages, meta=dict(meta))


def _year_pages(company: str, year: int) -> list[str]:
    return [
        f"{company} annual report for fiscal {year}. " + PROSE,
        f"Capital expenditures rose in {year} as we invested in plants. " + PROSE,
        f"CONSOLIDATED STATEMENTS OF CASH FLOWS\n(In millions) {year} {year - 1}\n"
        "Capital expenditures\n" + ROWS,
        f"Exhibit 21. Subsidiaries of {company}. {company} {company} {company} {year}. " * 5,
    ]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    docs = [
        _filing(f"ACME_{y}_10K", _year_pages("Acme", y), company="Acme Corp", doc_period=y)
        for y in (2019, 2020, 2021)
    ]
    docs += [
        _filing(
            f"2023 Q{q} GLX",
            [f"Quarterly report. Net sales were {q}00 million. " + PROSE],
            company="Globex Incorporated",
            ticker="GLX",
            period=f"2023 Q{q}",
        )
        for q in (1, 2, 3)
    ]
    docs += [
        _filing("ACME_2021_8K_dated-2021-05-30", ["Acme amended its revolving credit agreement."]),
        _filing("ACME_2021_8K_dated-2021-03-02", ["Acme announced a new revolving credit chief."]),
    ]
    return Corpus.from_documents(docs)


def _top(corpus: Corpus, query: str, **kw: object) -> tuple[str, int]:
    hit = corpus.search(query, k=1, **kw)[0]
    return hit.document, hit.page


def test_named_company_and_year_pick_the_filing(corpus: Corpus) -> None:
    # "Acme Corp" comes from the metadata; the year picks one of three near-identical reports.
    assert (
        _top(corpus, "What were Acme Corp's capital expenditures in FY2020?")[0] == "ACME_2020_10K"
    )
    # A range is about its last year.
    assert _top(corpus, "Acme capex from FY2019 to FY2021 average")[0] == "ACME_2021_10K"
    # Without a period: the newest annual report.
    assert _top(corpus, "How much did Acme invest in plants?")[0] == "ACME_2021_10K"


def test_statement_named_or_implied_outranks_prose(corpus: Corpus) -> None:
    q = "Using the cash flow statement, what were Acme's FY2020 capital expenditures?"
    assert _top(corpus, q) == ("ACME_2020_10K", 3)
    assert _top(corpus, "What was Acme's FY2020 capex?") == ("ACME_2020_10K", 3)
    plain = Ranking(named=0.0, implied=0.0)
    boost = corpus.search(q, k=1)[0].score - corpus.search(q, k=1, ranking=plain)[0].score
    assert boost == pytest.approx(Ranking().named)  # named wins over implied, not both


def test_words_that_named_the_filing_do_not_rank_pages(corpus: Corpus) -> None:
    q = "Acme FY2020 capital expenditures"
    assert _top(corpus, q, ranking=Ranking(named=0.0, implied=0.0, strip=False)) == (
        "ACME_2020_10K",
        4,  # the exhibit repeats "Acme"
    )
    assert _top(corpus, q, ranking=Ranking(named=0.0, implied=0.0)) == ("ACME_2020_10K", 2)


def test_quarter_ticker_and_date(corpus: Corpus) -> None:
    assert _top(corpus, "What were GLX net sales in Q2 2023?")[0] == "2023 Q2 GLX"
    assert _top(corpus, "Globex net sales in the third quarter of 2023")[0] == "2023 Q3 GLX"
    assert _top(corpus, "Globex's latest net sales")[0] == "2023 Q3 GLX"
    q = "What did Acme change in its revolving credit agreement on May 26, 2021?"
    assert _top(corpus, q)[0] == "ACME_2021_8K_dated-2021-05-30"
    assert corpus.search(q, k=3, boost_names=False)[0].document.startswith("ACME_2021_8K")


def test_no_named_company_leaves_bm25_order(corpus: Corpus) -> None:
    q = "revolving credit agreement"
    assert corpus.search(q, k=3) == corpus.search(q, k=3, boost_names=False)


def test_parse_query_periods_kinds_dates() -> None:
    q = parse_query("What is 3M's FY2018 vs FY17 capex in the 10-K?")
    assert q.years == {2017, 2018} and q.year == 2018 and q.kinds == {"10k"}
    assert not q.quarterly and not q.quarters
    assert parse_query("As of Q2'2023, is Pfizer spinning off").quarters == {(2023, 2)}
    assert parse_query("stores between Q2 of FY2024 and FY2023").quarters == {(2024, 2)}
    assert parse_query("the second fiscal quarter of 2023").quarters == {(2023, 2)}
    assert parse_query("investments in H1 FY2023").quarters == {(2023, 2)}
    assert parse_query("NVIDIA 2023 Q1 results").quarters == {(2023, 1)}
    assert parse_query("8k filing dated 1st July 2022").dates == (dt.date(2022, 7, 1),)
    assert parse_query("As of May 26, 2023, what").dates == (dt.date(2023, 5, 26),)
    assert parse_query("on 2023-08-30").dates == (dt.date(2023, 8, 30),)
    assert parse_query("in the most recent 10-Q").latest
    assert parse_query("an earnings release").kinds == {"earnings"}


def test_describe_names_and_metadata() -> None:
    f = describe("AMERICANEXPRESS_2022Q4_EARNINGS")
    assert (f.companies, f.year, f.quarter, f.kind) == ({"americanexpress"}, 2022, 4, "earnings")
    f = describe("AMCOR_2022_8K_dated-2022-07-01")
    assert (f.kind, f.date) == ("8k", dt.date(2022, 7, 1))
    f = describe(
        "2023 Q3 NVDA",
        {
            "company": "NVIDIA Corporation",
            "ticker": "NVDA",
            "period": "2023 Q3",
            "doc_type": "10-Q",
        },
    )
    assert f.companies == {"nvda", "nvidiacorporation", "nvidia"}
    assert (f.year, f.quarter, f.kind) == (2023, 3, "10q")
    jnj = describe("JOHNSON_JOHNSON_2022_10K", {"company": "Johnson & Johnson", "doc_period": 2022})
    assert {"jnj", "johnsonjohnson", "jojo"} <= jnj.companies and jnj.short == {"johnson"}
    assert describe("JOHNSON_JOHNSON_2020_10K").companies == {"johnsonjohnson", "jnj"}
    amex = describe("AMERICANEXPRESS_2022_10K", {"company": "American Express"})
    assert "amex" in amex.companies
    assert describe("2303.08559v2", {"doc_type": "Academic paper"}).companies == frozenset()


def test_company_period_and_kind_scores() -> None:
    jpm = describe("JPMORGAN_2023Q2_10Q", {"company": "JPMorgan", "doc_period": 2023})
    assert company_match(jpm, parse_query("the risk that JPM faced")) == 0.5  # prefix, capitals
    assert company_match(jpm, parse_query("the risk that jpm faced")) == 0.0
    assert company_match(jpm, parse_query("JPMorgan's VaR")) == 1.0
    mgm = describe("MGMRESORTS_2022_10K", {"company": "MGM Resorts"})
    assert company_match(mgm, parse_query("Has MGM paid dividends?")) == 0.5
    boeing = describe("BOEING_2022_10K")
    q = parse_query("What production rate changes is Boeing forecasting for FY2023?")
    assert period_match(boeing, q) == pytest.approx(0.4)
    assert period_match(describe("BOEING_2019_10K"), q) == 0.0
    assert kind_match(boeing, q) == 1.0 and kind_match(describe("X_2022Q4_EARNINGS"), q) == 0.5
    q2 = parse_query("Boeing in Q2 2022")
    assert kind_match(describe("BOEING_2022Q2_10Q"), q2) == 1.0 and kind_match(boeing, q2) == 0.0


def test_naming_words_and_asked_kinds() -> None:
    f = describe("AMERICANEXPRESS_2022_10K", {"company": "American Express"})
    q = "How much did American Express's FY2022 effective tax rate change in the 10-K?"
    assert naming_words(q, [f]) == {"american", "express", "fy2022", "10", "k"}
    named, implied = asked_kinds("Based on the balance sheet and the P&L, what is ROA?")
    assert named == {"balance", "income"} and implied == set()
    assert asked_kinds("What is the FY2019 capex and inventory?") == (
        frozenset(),
        {"cashflow", "balance"},
    )


def test_document_evidence_when_no_filing_fits() -> None:
    # Twelve pages of a guide about the question's subject vs one stray page that matches a
    # little better: without a company to go by, the document as a whole decides.
    guide = [f"Step {i}: the solar panel inverter on the roof. " + PROSE for i in range(12)]
    stray = ["The solar panel inverter on the roof; solar inverter. " + PROSE]
    corpus = Corpus.from_documents({"guide": guide, "news": stray, "other": [PROSE, PROSE]})
    q = "Where does the solar panel inverter go on the roof?"
    assert _top(corpus, q, ranking=Ranking(doc=0.0))[0] == "news"
    assert _top(corpus, q)[0] == "guide"


def test_form_boilerplate_ranks_below_content() -> None:
    cover = (
        "UNITED STATES\nSECURITIES AND EXCHANGE COMMISSION\nFORM 8-K\nCURRENT REPORT\n"
        "Report of July 1, 2022. Acme Corp.\n"
        "Investor day agenda attached as Exhibit 99.1.\n"
    )
    body = (
        "Item 7.01. The agenda of the investor day held on July 1, 2022: strategy, products, "
        "the outlook for customers and investors, and questions from analysts and press."
    )
    corpus = Corpus.from_documents(
        {"ACME_2022_8K_dated-2022-07-01": [cover, body, "SIGNATURES\nAcme Corp agenda\n"]}
    )
    q = "What was the agenda of Acme's 8-K dated 1st July 2022?"
    assert _top(corpus, q)[1] == 2
    plain = {h.page: h.score for h in corpus.search(q, k=3, ranking=Ranking(form=0.0))}
    ranked = {h.page: h.score for h in corpus.search(q, k=3)}
    assert plain[2] == ranked[2]
    assert plain[1] - ranked[1] == pytest.approx(Ranking().form) == plain[3] - ranked[3]


def test_top_k_keeps_a_place_for_another_document(corpus: Corpus) -> None:
    q = "How did Acme's capital expenditures and plants develop in FY2020?"
    one_doc = corpus.search(q, k=2, ranking=Ranking(diverse=False))
    assert {h.document for h in one_doc} == {"ACME_2020_10K"}
    hits = corpus.search(q, k=2)
    assert hits[0] == one_doc[0]
    assert hits[1].document != "ACME_2020_10K" and hits[1].document.startswith("ACME_")
    assert corpus.search(q, k=3)[:2] == corpus.search(q, k=3, ranking=Ranking(diverse=False))[:2]
    only = corpus.search(q, k=3, document="ACME_2020_10K")
    assert {h.document for h in only} == {"ACME_2020_10K"} and len(only) == 3
