"""A crafted corpus store is refused from its Parquet footer, before anything is decompressed:
a `pages.parquet` of a few KB can hold a page of a billion characters."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.corpus.store import PAGES, PAGES_SCHEMA, check_expansion
from rlm_docs.errors import CorpusError


def bomb(path: Path, chars: int) -> int:
    """Write a one-page `pages.parquet` of `chars` characters (zstd); its size in bytes."""
    text = pa.array(["a" * chars], pa.large_string())
    columns = [pa.array([0], pa.int32()), pa.array([1], pa.int32()), text]
    columns += [pa.array([chars], pa.int32()), pa.array([1], pa.int32())]
    pq.write_table(pa.table(columns, schema=PAGES_SCHEMA), path, compression="zstd")
    return path.stat().st_size


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return Corpus.from_documents({"memo": ["one page"]}).save(tmp_path / "store")


def test_a_page_that_expands_a_thousandfold_is_refused_unread(store, tmp_path, capsys) -> None:
    # The file grows by ~1 byte per 30,000 characters: 1e9 characters fit in ~32 KB.
    small = bomb(tmp_path / "small.parquet", 8_000_000)
    size = bomb(store / PAGES, 32_000_000)
    assert size - small < 24_000_000 / 10_000 and size < 4_000
    with pytest.raises(CorpusError, match=r"pages\.parquet: its columns expand to 32,0\d\d,\d+"):
        Corpus.load(store)
    assert main(["corpus", "info", str(store)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(store / PAGES) in err and "over 100x" in err


def test_a_table_written_as_stores_are_passes_however_repetitive(tmp_path) -> None:
    page = "a" * 40_000_000  # snappy, as `write_store` writes, shrinks it at most ~22x
    table = pa.table({"text": pa.array([page], pa.large_string())})
    pq.write_table(table, tmp_path / "t.parquet", compression="snappy")
    check_expansion(tmp_path / "t.parquet")
