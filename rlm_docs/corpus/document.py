"""The value types of a corpus: a document read from a source, and the public records
`DocInfo` (one document's sizes) and `Hit` (one search result)."""

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(slots=True)
class Document:
    """A named, ordered list of pages (page 1 is `pages[0]`), as a reader produces it."""

    name: str
    pages: list[str]
    source: str = ""
    tokens: list[int] | None = field(default=None, repr=False)


@dataclass(frozen=True, slots=True)
class DocInfo:
    """Size summary of one stored document."""

    name: str
    num_pages: int
    chars: int
    tokens: int
    source: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked page from `Corpus.search`."""

    document: str
    page: int
    score: float
    snippet: str

    def to_dict(self) -> dict:
        return asdict(self)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython's plain-text view (the dataclass repr stays for debugging)."""
        from rlm_docs.notebook.display import hit_text

        p.text(hit_text(self))

    def _repr_html_(self) -> str:
        from rlm_docs.notebook.display import hit_html

        return hit_html(self)
