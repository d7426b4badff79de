"""Needle-in-a-haystack at scale (S-NIAH style): facts planted in filler made of real pages.

The filler is the pages of a corpus store (the demo corpus by default), documents in a seeded
order and repeated as often as the token target needs; it is cut into documents `filler_NNN`.
Each question plants `needles` facts, each at a uniformly random line boundary of a uniformly
random page; the question names every fact's key and its gold is every value. Keys are invented
`adjective-noun` pairs that the filler text does not contain, values seven-digit numbers, so
exactly one line of the corpus answers each key.
"""

import random
from dataclasses import dataclass

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.document import Document
from rlm_docs.errors import CorpusError

_ADJECTIVES = [
    "amber",
    "brisk",
    "coral",
    "dusky",
    "eager",
    "fallow",
    "gilded",
    "hollow",
    "ivory",
    "jovial",
    "kindred",
    "lunar",
    "mellow",
    "nimble",
    "opal",
    "placid",
    "quiet",
    "russet",
    "silver",
    "tawny",
    "umber",
    "velvet",
    "woven",
    "xenial",
    "yonder",
    "zesty",
]
_NOUNS = [
    "falcon",
    "harbor",
    "lantern",
    "meadow",
    "orchard",
    "quarry",
    "saddle",
    "thistle",
    "walrus",
    "beacon",
    "cobalt",
    "dynamo",
    "ember",
    "ferret",
    "glacier",
    "heron",
    "iris",
    "juniper",
    "kettle",
    "lagoon",
    "marble",
    "nectar",
    "otter",
    "pepper",
]
FACT = "The special magic number for {key} is {value}."
ONE = "What is the special magic number for {key} mentioned in the documents?"
MANY = (
    "What are the special magic numbers for {keys} mentioned in the documents? Give every one "
    "of them."
)
PAGES_PER_DOCUMENT = 20


@dataclass(frozen=True)
class Needle:
    """One planted fact and where it went (1-based page)."""

    key: str
    value: str
    document: str
    page: int


def filler_pages(store: Corpus) -> list[tuple[str, int]]:
    """(document, page) of every non-empty page of the filler store, in corpus order."""
    pages = [
        (doc, n)
        for doc in store.names
        for n in range(1, store.num_pages(doc) + 1)
        if store.page(doc, n).strip()
    ]
    if not pages:
        raise CorpusError(f"{store.path}: the filler store has no page text")
    return pages


def build_haystack(store: Corpus, target_tokens: int, rng: random.Random) -> list[Document]:
    """Filler documents of about `target_tokens` (pages whole, never past the target)."""
    order = filler_pages(store)
    docs = sorted({d for d, _ in order})
    rng.shuffle(docs)
    by_doc = {d: [p for dd, p in order if dd == d] for d in docs}
    pages: list[str] = []
    spent = 0
    while True:
        for d in docs:
            for n in by_doc[d]:
                cost = store.page_tokens(d, n)
                if spent + cost > target_tokens:
                    if not pages:
                        raise CorpusError(
                            f"--tokens {target_tokens}: smaller than one filler page ({cost})"
                        )
                    return _documents(pages)
                pages.append(store.page(d, n))
                spent += cost


def _documents(pages: list[str]) -> list[Document]:
    size = PAGES_PER_DOCUMENT
    return [
        Document(f"filler_{i // size + 1:03d}", pages[i : i + size], source="generated")
        for i in range(0, len(pages), size)
    ]


def _keys(count: int, rng: random.Random, text_lower: str) -> list[str]:
    pool = [f"{a}-{n}" for a in _ADJECTIVES for n in _NOUNS]
    pool = [k for k in pool if k not in text_lower]
    if len(pool) < count:
        raise CorpusError(f"only {len(pool)} needle keys are free in this filler; ask for fewer")
    return rng.sample(pool, count)


def plant(docs: list[Document], count: int, rng: random.Random) -> list[Needle]:
    """Insert `count` facts (in place) and return them in planting order."""
    text_lower = "\n".join(p for d in docs for p in d.pages).lower()
    keys = _keys(count, rng, text_lower)
    values = rng.sample(range(1_000_000, 10_000_000), count)
    slots = [(di, pi) for di, d in enumerate(docs) for pi in range(len(d.pages))]
    needles = []
    for key, value in zip(keys, values, strict=True):
        di, pi = rng.choice(slots)
        lines = docs[di].pages[pi].split("\n")
        at = rng.randint(0, len(lines))
        lines.insert(at, FACT.format(key=key, value=value))
        docs[di].pages[pi] = "\n".join(lines)
        needles.append(Needle(key, str(value), docs[di].name, pi + 1))
    return needles


def question_text(needles: list[Needle]) -> str:
    """The question asking for every needle's value."""
    if len(needles) == 1:
        return ONE.format(key=needles[0].key)
    keys = [n.key for n in needles]
    return MANY.format(keys=", ".join(keys[:-1]) + " and " + keys[-1])
