"""The value types of a corpus: a document read from a source, and the public records
`DocInfo` (one document's sizes and metadata) and `Hit` (one search result)."""

from dataclasses import asdict, dataclass, field


@dataclass(slots=True)
class Document:
    """A named, ordered list of pages (page 1 is `pages[0]`), as a reader produces it."""

    name: str
    pages: list[str]
    source: str = ""
    tokens: list[int] | None = field(default=None, repr=False)
    meta: dict[str, object] = field(default_factory=dict, repr=False)


@dataclass(frozen=True, slots=True)
class DocInfo:
    """Size summary of one stored document, with the metadata row given at ingest (`meta`, {}
    when none) and its normalised `company`, `doc_type` and `period` ('' when absent; see
    `rlm_docs.corpus.metadata`)."""

    name: str
    num_pages: int
    chars: int
    tokens: int
    source: str
    meta: dict[str, object] = field(default_factory=dict)
    company: str = ""
    doc_type: str = ""
    period: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked page from `Corpus.search`; `title` is the page's heading or statement/table
    title ('' when the page shows none), so a reader can tell which table a number comes from."""

    document: str
    page: int
    score: float
    snippet: str
    title: str = ""

    def to_dict(self) -> dict:
        return asdict(self)
