"""`cite()` and the citation check stay linear: thousands of cites cost the host no more than
a few comparisons each (counted, not timed: speed figures live in `benchmarks/`)."""

from typing import Any

from rlm_docs.corpus import Corpus
from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.host_functions import HostFunctions
from rlm_docs.governor import Governor
from rlm_docs.models import make_client

PAGES = 2000


class Name(str):
    """A document name that counts how often it is compared for equality."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        Name.compared += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


class CountingCorpus:
    """A real corpus whose resolved names count their comparisons."""

    def __init__(self, corpus: Corpus) -> None:
        self.corpus = corpus

    def resolve(self, name: str) -> str | None:
        found = self.corpus.resolve(name)
        return None if found is None else Name(found)

    def num_pages(self, doc: str) -> int:
        return self.corpus.num_pages(doc)


def corpus() -> Any:
    return CountingCorpus(Corpus.from_documents({"book": [f"page {i}" for i in range(PAGES)]}))


def test_cite_compares_each_citation_a_bounded_number_of_times() -> None:
    host = HostFunctions(Governor(), make_client("offline"), corpus=corpus())
    Name.compared = 0
    for page in range(1, PAGES + 1):
        host.cite("book", page)
    host.cite("book", 1)  # a repeat is still recorded once
    assert len(host.cited) == PAGES and host.cited[0] == {"file": "book", "page": 1}
    assert Name.compared < 10 * PAGES  # a list scan makes ~PAGES**2 / 2


def test_citation_check_compares_each_citation_a_bounded_number_of_times() -> None:
    citations = [{"file": "book", "page": p} for p in range(1, PAGES + 1)] * 2
    Name.compared = 0
    valid, rejected = validate(corpus(), citations)
    assert len(valid) == PAGES and not rejected
    assert Name.compared < 10 * PAGES
