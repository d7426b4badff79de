"""Integration on real filings from ../shared/datasets/financebench (skipped when absent):
pdftotext and markdown page lists ingest with PDF page numbering intact, and the name boost
finds the filing a question names."""

from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.ingest import ingest

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"
DOCS = ["3M_2017_10K", "3M_2018_10K", "3M_2019_10K", "AMAZON_2019_10K"]

pytestmark = [
    pytest.mark.financebench,
    pytest.mark.skipif(not (DATA / "text").is_dir(), reason="FinanceBench data not present"),
]


@pytest.fixture(scope="module")
def text_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    out = tmp_path_factory.mktemp("fb") / "store"
    ingest([DATA / "text" / f"{d}.txt" for d in DOCS], out)
    return Corpus.load(out)


def test_pdftotext_page_numbering(text_corpus: Corpus) -> None:
    for name in DOCS:
        raw = (DATA / "text" / f"{name}.txt").read_text(encoding="utf-8", errors="replace")
        chunks = raw.split("\f")
        expected = len(chunks) - (1 if chunks[-1].strip() == "" else 0)
        assert text_corpus.num_pages(name) == expected
        assert text_corpus.page(name, 5) == chunks[4]


def test_markdown_page_lists_match_text_page_counts(tmp_path: Path, text_corpus: Corpus) -> None:
    sources = [DATA / "markdown" / f"{d}.pages.json" for d in ("3M_2018_10K", "AMAZON_2019_10K")]
    ingest(sources, tmp_path / "md")
    md = Corpus.load(tmp_path / "md")
    for name in md.names:
        assert md.num_pages(name) == text_corpus.num_pages(name)


def test_name_boost_finds_the_named_year(text_corpus: Corpus) -> None:
    query = "What was 3M's capital expenditure (purchases of PP&E) in FY2018?"
    plain = [h.document for h in text_corpus.search(query, k=5, boost_names=False)]
    boosted = [h.document for h in text_corpus.search(query, k=5)]
    assert boosted[0] == "3M_2018_10K" and boosted.count("3M_2018_10K") >= 3
    assert boosted.count("3M_2018_10K") >= plain.count("3M_2018_10K")
    hits = text_corpus.search(
        "Purchases of property, plant and equipment", k=3, document="3M_2018_10K"
    )
    assert any("1,577" in text_corpus.page(h.document, h.page) for h in hits)


def test_metadata_and_statement_search_on_real_filings(tmp_path: Path) -> None:
    out = tmp_path / "meta"
    ingest([DATA / "text" / f"{d}.txt" for d in DOCS], out, metadata=DATA / "documents.jsonl")
    corpus = Corpus.load(out)
    info = {d.name: d for d in corpus.documents}["3M_2018_10K"]
    assert (info.company, info.doc_type, info.period) == ("3M", "10-K", "2018")
    hits = corpus.search("3M property, plant and equipment on the FY2018 balance sheet", k=5)
    assert (hits[0].document, hits[0].page) == ("3M_2018_10K", 58)
    assert "balance shee" in hits[0].title.lower()
    assert [h.document for h in hits].count("3M_2018_10K") >= 3
    cash = corpus.search("Amazon FY2019 cash flow statement capex", k=1)[0]
    assert cash.document == "AMAZON_2019_10K" and "cash flows" in cash.title.lower()
