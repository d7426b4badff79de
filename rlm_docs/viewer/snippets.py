"""Quote the cited pages: for each citation, the text of that page around the answer."""

from pathlib import Path
from typing import Any

from rlm_docs.errors import CorpusError

WINDOW = 400


def page_snippet(text: str, answers: list[str], window: int = WINDOW) -> str:
    """`window` characters of `text` centred on the first answer string found in it (case-
    insensitive), else the start of the page; whitespace runs collapsed."""
    lower = text.lower()
    at = next((lower.find(a.lower()) for a in answers if a and a.lower() in lower), -1)
    start = max(0, at - window // 2) if at >= 0 else 0
    piece = text[start : start + window]
    prefix = "… " if start else ""
    suffix = " …" if start + window < len(text) else ""
    return prefix + " ".join(piece.split()) + suffix


def attach_snippets(data: dict[str, Any], corpus: Any) -> None:
    """Add `snippet` to every citation of `data` whose document and page exist in `corpus`
    (a `Corpus` or a store path); unknown pages get `snippet_error` instead."""
    from rlm_docs.corpus import Corpus

    store = corpus if isinstance(corpus, Corpus) else Corpus.load(Path(corpus))
    for q in data["questions"]:
        answers = [str(a) for a in q["answer"]]
        for c in q["citations"]:
            page = c.get("page")
            page = int(page) if isinstance(page, str) and page.isdigit() else page
            try:
                c["snippet"] = page_snippet(store.page(str(c.get("file")), page), answers)
            except CorpusError as exc:
                c["snippet_error"] = str(exc)
