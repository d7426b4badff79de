"""Every page's title, stored at ingest so that a search does not work it out per hit.

A hit carries its page's title (`rlm_docs.corpus.headings.page_title`); finding it reads the
page's top lines through half a dozen regular expressions, about a tenth of a FinanceBench
search's CPU time when done for the ten hits of every query. Ingest already reads every
page's top lines for its statement kind, so it keeps the title too (`title_and_kind`).

Stored beside the BM25 index as two arrays, loaded memory-mapped: `titles.npy`, the UTF-8
bytes of all titles one after the other, and `title_offsets.npy`, where each page's title
starts (one more entry than pages). No pickled objects: a store's files may be hostile. Offsets
that do not ascend from 0 to the size of the bytes make the store unreadable (CorpusError).
"""

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from rlm_docs.errors import CorpusError

TITLES_FILE = "titles.npy"
OFFSETS_FILE = "title_offsets.npy"


class PageTitles:
    """Page titles by row, from the two stored arrays."""

    def __init__(self, data: np.ndarray, offsets: np.ndarray) -> None:
        self._data = data
        self._offsets = offsets

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, row: int) -> str:
        a, b = int(self._offsets[row]), int(self._offsets[row + 1])
        return self._data[a:b].tobytes().decode("utf-8", "replace")

    @classmethod
    def of(cls, titles: Sequence[str]) -> "PageTitles":
        encoded = [t.encode("utf-8") for t in titles]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in encoded], out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    def save(self, directory: Path) -> None:
        np.save(directory / TITLES_FILE, self._data)
        np.save(directory / OFFSETS_FILE, self._offsets)

    @classmethod
    def load(cls, directory: Path) -> "PageTitles | None":
        """The stored titles, None for a store written before they were stored."""
        if not (directory / OFFSETS_FILE).is_file():
            return None
        data = np.load(directory / TITLES_FILE, mmap_mode="r")
        offsets = np.load(directory / OFFSETS_FILE, mmap_mode="r")
        if (
            data.dtype != np.uint8
            or offsets.dtype != np.int64
            or data.ndim != 1
            or offsets.ndim != 1
            or len(offsets) == 0
            or offsets[0] != 0
            or offsets[-1] != len(data)
            or bool(np.any(np.diff(offsets) < 0))
        ):
            raise CorpusError(f"{directory / OFFSETS_FILE}: page title offsets are damaged")
        return cls(data.view(np.ndarray), offsets.view(np.ndarray))
