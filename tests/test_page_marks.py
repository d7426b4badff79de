"""The page marks a model reads are written and read back by one module (`corpus.render`)."""

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.render import page_block, page_blocks, rendered_pages

DOCS = {"acme_10k": ["Cover page.", "Revenue was $412 million.\n[PAGE 9] is not a marker here"]}


def test_a_page_block_reads_back_as_written_and_says_when_it_was_cut():
    blocks = [
        page_block("acme_10k", 2, DOCS["acme_10k"][1], 8000),
        page_block("b", 7, "x" * 50, 10),
    ]
    assert page_blocks("Results:\n\n" + "\n\n".join(blocks)) == [
        ("acme_10k", "2", DOCS["acme_10k"][1]),
        ("b", "7", "x" * 10 + "\n[... page truncated ...]"),
    ]


def test_every_page_of_a_rendered_corpus_reads_back():
    corpus = Corpus.from_documents(DOCS | {"globex": ["Only page."]})
    assert rendered_pages(corpus.render()) == [
        ("acme_10k", "1", "Cover page."),
        ("acme_10k", "2", DOCS["acme_10k"][1]),
        ("globex", "1", "Only page."),
    ]
