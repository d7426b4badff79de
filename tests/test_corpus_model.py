"""Corpus model: page access, errors, rendering offsets, the Parquet store round trip."""

import pytest

from rlm_docs.corpus import Corpus, DocInfo, Document
from rlm_docs.errors import CorpusError

DOCS = {
    "3M_2018_10K": ["Net sales were $32.8 billion.", "Capital spending\n\nrose.", ""],
    "APPLE_2019_10K": ["iPhone revenue", "[PAGE 9] looks like a marker\n[END PAGE 9]"],
    "Z": ["single page"],
}


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_documents(DOCS)


def test_documents_and_pages(corpus: Corpus) -> None:
    assert corpus.names == list(DOCS)
    assert corpus.num_pages("3M_2018_10K") == 3
    assert corpus.page("3M_2018_10K", 2) == "Capital spending\n\nrose."
    assert corpus.page("3M_2018_10K", 3) == ""
    assert corpus.pages("APPLE_2019_10K", 1, 2) == DOCS["APPLE_2019_10K"]
    assert corpus.total_pages == 6
    assert corpus.total_chars == sum(len(p) for v in DOCS.values() for p in v)
    info = corpus.documents[0]
    assert isinstance(info, DocInfo) and info.name == "3M_2018_10K" and info.num_pages == 3
    assert info.tokens > 5 and corpus.total_tokens == sum(d.tokens for d in corpus.documents)
    assert info.to_dict()["chars"] == len("".join(DOCS["3M_2018_10K"]))


def test_resolve_is_case_insensitive_and_accepts_file_names(corpus: Corpus) -> None:
    assert corpus.resolve("3m_2018_10k") == "3M_2018_10K"
    assert corpus.resolve("data/3M_2018_10K.pdf") == "3M_2018_10K"
    assert corpus.resolve("markdown/3M_2018_10K.pages.json") == "3M_2018_10K"
    assert corpus.resolve("3M_2017_10K") is None
    assert corpus.page("apple_2019_10k", 1) == "iPhone revenue"


def test_page_errors_name_document_and_range(corpus: Corpus) -> None:
    with pytest.raises(CorpusError, match=r"'3M_2018_10K' has no page 4 \(valid pages: 1-3\)"):
        corpus.page("3M_2018_10K", 4)
    with pytest.raises(CorpusError, match="no page 0"):
        corpus.page("3M_2018_10K", 0)
    with pytest.raises(CorpusError, match="did you mean '3M_2018_10K'"):
        corpus.num_pages("3M_2017_10K")
    with pytest.raises(CorpusError, match="empty"):
        corpus.pages("3M_2018_10K", 3, 2)


def test_from_documents_rejects_duplicates_and_empty_documents() -> None:
    with pytest.raises(CorpusError, match="duplicate document name 'a'.*x.txt.*y.txt"):
        Corpus.from_documents([Document("a", ["1"], "x.txt"), Document("a", ["2"], "y.txt")])
    with pytest.raises(CorpusError, match="'b'.*no pages"):
        Corpus.from_documents({"b": []})


def test_render_exact_form(corpus: Corpus) -> None:
    text = Corpus.from_documents({"A": ["x", ""], "B": ["y"]}).render()
    assert text == (
        "[FILE: A | TOTAL PAGES: 2]\n[PAGE 1]\nx\n[END PAGE 1]\n[PAGE 2]\n\n[END PAGE 2]\n"
        "[END FILE: A]\n\n[FILE: B | TOTAL PAGES: 1]\n[PAGE 1]\ny\n[END PAGE 1]\n[END FILE: B]\n"
    )


def _labelled_pieces(docs: dict[str, list[str]]) -> list[tuple[str, tuple[str, int]]]:
    """The rendered string as (piece, owning page) pairs, written out independently."""
    out: list[tuple[str, tuple[str, int]]] = []
    for i, (name, pages) in enumerate(docs.items()):
        if i:
            out.append(("\n", out[-1][1]))
        out.append((f"[FILE: {name} | TOTAL PAGES: {len(pages)}]\n", (name, 1)))
        for n, text in enumerate(pages, 1):
            out.append((f"[PAGE {n}]\n{text}\n[END PAGE {n}]\n", (name, n)))
        out.append((f"[END FILE: {name}]\n", (name, len(pages))))
    return out


def test_locate_every_offset(corpus: Corpus) -> None:
    pieces = _labelled_pieces(DOCS)
    text = corpus.render()
    assert text == "".join(p for p, _ in pieces)
    expected = [label for piece, label in pieces for _ in piece]
    assert [corpus.locate(i) for i in range(len(text))] == expected
    for name in corpus.names:
        for n in range(1, corpus.num_pages(name) + 1):
            offset = corpus.page_offset(name, n)
            assert corpus.locate(offset) == (name, n)
            assert text.startswith("[FILE:" if n == 1 else f"[PAGE {n}]", offset)
    with pytest.raises(CorpusError, match="outside"):
        corpus.locate(len(text))
    with pytest.raises(CorpusError, match="outside"):
        corpus.locate(-1)


def test_store_round_trip(tmp_path, corpus: Corpus) -> None:
    path = corpus.save(tmp_path / "store")
    loaded = Corpus.load(path)
    assert loaded.path == path
    assert loaded.names == corpus.names
    assert loaded.documents == corpus.documents
    assert loaded.render() == corpus.render()
    assert loaded.page("Z", 1) == "single page"
    assert loaded.page_tokens("3M_2018_10K", 1) == corpus.page_tokens("3M_2018_10K", 1)


def test_load_rejects_non_stores(tmp_path) -> None:
    with pytest.raises(CorpusError, match="no corpus store"):
        Corpus.load(tmp_path / "missing")
    with pytest.raises(CorpusError, match="manifest.json is missing"):
        Corpus.load(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "something else"}')
    with pytest.raises(CorpusError, match="not an rlm-docs corpus manifest"):
        Corpus.load(tmp_path)


def test_load_names_a_corrupt_table(tmp_path, corpus: Corpus) -> None:
    path = corpus.save(tmp_path / "store")
    (path / "pages.parquet").write_bytes(b"not parquet")
    with pytest.raises(CorpusError, match="pages.parquet"):
        Corpus.load(path)


def test_offsets_with_multi_digit_page_numbers() -> None:
    docs = {"long": [f"page {i} text" for i in range(1, 106)], "short": ["x"]}
    corpus = Corpus.from_documents(docs)
    text = corpus.render()
    for n in (2, 9, 10, 11, 99, 100, 105):
        offset = corpus.page_offset("long", n)
        assert offset == text.index(f"[PAGE {n}]\n")
        assert corpus.locate(offset) == ("long", n) and corpus.locate(offset - 1) == ("long", n - 1)
    assert corpus.locate(text.index("[FILE: short")) == ("short", 1)
    assert corpus.locate(len(text) - 1) == ("short", 1)


def test_empty_corpus() -> None:
    corpus = Corpus.from_documents({})
    assert corpus.render() == "" and corpus.total_pages == 0 and corpus.names == []
    assert corpus.search("anything") == []
    with pytest.raises(CorpusError, match="outside"):
        corpus.locate(0)


def test_documents_are_built_once_and_callers_get_their_own_list(corpus: Corpus) -> None:
    first = corpus.documents
    first.clear()  # a caller's list is its own
    again = corpus.documents
    assert [d.name for d in again] == corpus.names and again is not first
    assert all(a is b for a, b in zip(again, corpus.documents, strict=True))  # not rebuilt
