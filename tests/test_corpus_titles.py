"""Page titles stored at ingest: the same title for every page as reading the page at search
time, the same hits from a store written before titles were stored, and damaged title files
refused with one line naming the file."""

from pathlib import Path

import numpy as np
import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.corpus.headings import page_kind, page_title, title_and_kind
from rlm_docs.corpus.titles import OFFSETS_FILE, TITLES_FILE, PageTitles
from rlm_docs.errors import CorpusError

ROWS = "".join(
    f"    Item {i:<30} $ {1000 + 37 * i:>8,}   $ {900 + 29 * i:>8,}\n" for i in range(30)
)
PAGES = [
    "## Segment résults — Europe\n\nRevenue grew in every segment.\n",
    "CONSOLIDATED BALANCE SHEETS\n(In millions)\n" + ROWS,
    "SIGNATURES\nPursuant to the requirements of the Securities Exchange Act, revenue.\n",
    "the middle of a sentence continues here with revenue and more words\n",
    "",
    "Management’s Discussion and Analysis\n\nRevenue rose 12%.\n",
]


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    return Corpus.from_documents({"ACME_2020_10K": PAGES, "notes": PAGES[::-1]}).save(
        tmp_path / "store"
    )


def test_title_and_kind_read_the_page_once_with_the_same_answers() -> None:
    for page in PAGES:
        assert title_and_kind(page) == (page_title(page), page_kind(page))


def test_stored_titles_are_the_page_titles(store: Path) -> None:
    titles = PageTitles.load(store / "bm25")
    assert titles is not None
    corpus = Corpus.load(store)
    texts = corpus._text.to_pylist()
    assert [titles[r] for r in range(len(titles))] == [page_title(t) for t in texts]
    assert titles[0] == "Segment résults — Europe"


def test_a_store_without_stored_titles_gives_the_same_hits(store: Path) -> None:
    before = Corpus.load(store).search("revenue balance sheets", k=8)
    (store / "bm25" / TITLES_FILE).unlink()
    (store / "bm25" / OFFSETS_FILE).unlink()
    after = Corpus.load(store).search("revenue balance sheets", k=8)
    assert after == before and {h.title for h in after} >= {"CONSOLIDATED BALANCE SHEETS"}


def test_damaged_title_offsets_are_one_clear_error(store: Path, capsys) -> None:
    offsets = np.load(store / "bm25" / OFFSETS_FILE)
    offsets[3] = offsets[-1] + 100
    np.save(store / "bm25" / OFFSETS_FILE, offsets)
    with pytest.raises(CorpusError, match="title_offsets.npy: page title offsets are damaged"):
        Corpus.load(store).search("revenue")
    assert main(["corpus", "search", str(store), "revenue"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "title_offsets.npy" in err


def test_pickled_title_files_are_refused(store: Path) -> None:
    np.save(store / "bm25" / TITLES_FILE, np.array(["x"], dtype=object), allow_pickle=True)
    with pytest.raises(CorpusError, match="cannot load the BM25 index"):
        Corpus.load(store).search("revenue")
