"""The corpus summary in the root prompt: every document within the token budget, grouped by
company when listing each one would not fit; and the madqa prompt's `context` length."""

import re

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.document import Document
from rlm_docs.engine.prompts import corpus_summary, root_prompt
from rlm_docs.engine.summary import (
    NAMES_NOTE,
    PERIODS_NOTE,
    SUMMARY_TOKENS,
    documents_summary,
    group_lines,
)
from rlm_docs.tokens import count_tokens

COMPANIES = [f"COMPANY{i:02d}" for i in range(43)]


def filings() -> list[Document]:
    """344 small filings named like FinanceBench's: 43 companies x 8 annual reports."""
    docs = []
    for c in COMPANIES:
        for year in range(2015, 2023):
            docs.append(Document(f"{c}_{year}_10K", ["text"] * (100 + year - 2015)))
    return docs


def test_a_large_corpus_is_summarised_by_company_within_the_budget():
    corpus = Corpus.from_documents(filings())
    text = corpus_summary(corpus)
    assert count_tokens(text) <= SUMMARY_TOKENS + 100
    for c in COMPANIES:  # every document's company is there, none is cut
        assert f"- {c}: 10-K 2015-2022 (8 docs, 100-107 p.)" in text
    assert "more companies" not in text and "344 documents" in text


def test_a_small_corpus_lists_every_document_by_name():
    docs = [Document("ACME_2020_10K", ["a", "b"]), Document("notes", ["c"])]
    text = corpus_summary(Corpus.from_documents(docs))
    assert "- ACME_2020_10K: 2 pages" in text and "- notes: 1 page," in text


def test_every_listing_says_names_are_doc_values_and_what_a_period_label_is():
    kg = {"period": "2023 Q3", "period_end": "October 29, 2023", "doc_type": "10-Q"}
    docs = [Document("2023 Q3 NVDA", ["a", "b"], meta=kg), Document("notes", ["c"])]
    lines = corpus_summary(Corpus.from_documents(docs)).split("\n")
    assert NAMES_NOTE in lines[1] and PERIODS_NOTE in lines[1]
    assert lines[2].startswith("- 2023 Q3 NVDA: 2 pages, ")
    assert lines[2].endswith(" tokens, period ended October 29, 2023")
    assert lines[3].startswith("- notes: 1 page,") and "period" not in lines[3]
    plain = corpus_summary(Corpus.from_documents({"memo": ["x"]}))
    assert NAMES_NOTE in plain and PERIODS_NOTE not in plain  # no period to explain
    grouped = documents_summary(Corpus.from_documents(filings()).documents)
    assert grouped[0].startswith("Documents by company") and NAMES_NOTE in grouped[0]


def test_metadata_kind_and_period_win_and_the_name_adds_the_quarter():
    docs = [
        Document("ACME_2023Q2_10Q", ["x"], meta={"doc_type": "10q", "doc_period": 2023}),
        Document("ACME_2022_10K", ["x"], meta={"doc_type": "10k", "doc_period": 2022}),
        Document("ACME_2022_8K_dated-2022-04-26", ["x"]),
    ]
    (acme,) = group_lines(Corpus.from_documents(docs).documents)
    assert "10-Q 2023Q2 (1 doc, 1 p.)" in acme and "10-K 2022" in acme
    assert "8-K 2022-04-26" in acme


def test_when_even_the_groups_do_not_fit_the_rest_is_counted():
    docs = Corpus.from_documents(filings()).documents
    lines = documents_summary(docs, budget=300)
    assert count_tokens("\n".join(lines)) <= 300
    left = int(re.search(r"and (\d+) more companies", lines[-1]).group(1))
    assert left + len(lines) - 2 == len(COMPANIES)


def test_madqa_states_the_length_of_context_exactly():
    corpus = Corpus.from_documents({"a": ["one", "two"], "b": ["three"]})
    prompt = root_prompt("madqa", "q?", corpus, 10)
    assert f"a str with {len(corpus.render())} total characters" in prompt
    assert corpus.rendered_chars == len(corpus.render()) != corpus.total_chars


def test_counts_of_one_are_singular():
    text = corpus_summary(Corpus.from_documents({"window": ["Only page."]}))
    assert text.startswith("1 document, 1 page, about ")


def test_the_summary_is_made_once_per_corpus():
    corpus = Corpus.from_documents(filings())
    text = corpus_summary(corpus)
    assert corpus_summary(corpus) is text  # every question's prompt reuses it
    other = Corpus.from_documents(filings()[:1])
    assert corpus_summary(other) != text


def test_when_the_detail_does_not_fit_kinds_and_periods_still_name_every_company():
    years = (2015, 2016, 2017, 2019, 2020)
    docs = Corpus.from_documents(
        [Document(f"{c}_{year}_10K", ["text"] * 3) for c in COMPANIES for year in years]
    ).documents
    detailed = count_tokens("\n".join(group_lines(docs)))
    lines = documents_summary(docs, budget=detailed)  # the head line no longer fits
    assert lines[0].startswith("Documents by company (name prefix): kind and periods.")
    assert lines[1:] == [f"- {c}: 10-K 2015-2017, 2019, 2020" for c in COMPANIES]
    assert count_tokens("\n".join(lines)) <= detailed


def test_the_financebench_sized_summary_fits_the_budget():
    """344 filings of 43 companies with FinanceBench's mix of kinds and dated 8-Ks: every
    company is named, within SUMMARY_TOKENS (the whole rendered listing cost 2.2k tokens)."""
    dated = [
        Document(f"{c}_2023_8K_dated-2023-0{m}-1{m}", ["x"]) for c in COMPANIES for m in (4, 5)
    ]
    lines = documents_summary(Corpus.from_documents(filings() + dated).documents)
    assert count_tokens("\n".join(lines)) <= SUMMARY_TOKENS
    assert all(any(line.startswith(f"- {c}: ") for line in lines) for c in COMPANIES)
