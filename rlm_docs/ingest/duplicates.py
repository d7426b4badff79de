"""Documents stored twice under different names.

Collections of filings sometimes hold the same file under two names (FinanceBench has
`AMCOR_2022_8K_2022-04-26` and `AMCOR_2022_8K_dated-2022-04-26`, both 248 pages). Both stay in
the store (a question set may cite either name), but search then returns every hit twice and a
model may cite the copy the gold answer does not use, so ingest warns, naming both.
"""

import hashlib
from collections.abc import Iterable

from rlm_docs.corpus.document import Document


def _digest(doc: Document) -> str:
    h = hashlib.sha256()
    for page in doc.pages:
        h.update(page.encode("utf-8", "surrogatepass"))
        h.update(b"\x00\f\x00")  # page boundary, so page splits count as content
    return h.hexdigest()


def duplicate_warnings(docs: Iterable[Document]) -> list[str]:
    """One warning per group of documents whose pages are identical, naming all of them."""
    groups: dict[str, list[Document]] = {}
    for doc in docs:
        if any(page.strip() for page in doc.pages):  # empty scans are alike without being copies
            groups.setdefault(_digest(doc), []).append(doc)
    return [
        f"documents {', '.join(d.name for d in same)} have identical content "
        f"({len(same[0].pages)} pages): probably copies of one file under different names"
        for same in groups.values()
        if len(same) > 1
    ]
