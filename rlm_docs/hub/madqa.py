"""MADQA: `OxRML/MADQA` questions over the `OxRML/pdfs-to-markdown-mistral-ocr` corpus.

Layouts, as the benchmark's own harness reads them (github.com/OxRML/MADQA: `examples/`,
`eval/evaluate.py`, `baselines/recursive-lm/`):

- questions, splits `dev` / `test` / `train`: `id`, `question`, `answer_variants`, `evidence`
  (a list of `{document, page}`), `document_category`, `domain`. The public `test` split has no
  answers or evidence, so it cannot be scored; `dev` is the default.
- corpus, split `train`: one row per PDF with `pdf_name` (the document name the evidence uses),
  `markdown` (the whole document) and `metadata` (a JSON string with `num_pages`).

Pages are cut the way the official RLM baseline cut them (`markdown.split("\\n---\\n")`, each
page stripped), not with `ingest --separator ---`'s stricter rule: the baseline's page numbers
are the ones its published row was scored with, so they are the ones to reproduce.
"""

import json
from collections.abc import Iterable
from typing import Any

from rlm_docs.corpus.document import Document
from rlm_docs.errors import DatasetError
from rlm_docs.eval.dataset import parse_question

QUESTIONS_REPO = "OxRML/MADQA"
CORPUS_REPO = "OxRML/pdfs-to-markdown-mistral-ocr"
CORPUS_SPLIT = "train"
DEFAULT_SPLIT = "dev"
PAGE_BREAK = "\n---\n"


def split_pages(markdown: str) -> list[str]:
    """A document's pages, cut on the baseline's `\\n---\\n` separator."""
    return [page.strip() for page in markdown.split(PAGE_BREAK)]


def question_record(row: dict[str, Any], where: str, number: int) -> dict[str, Any]:
    """One MADQA row as a question-file line (validated: DatasetError names `where`)."""
    evidence = row.get("evidence")
    record = {
        "id": row.get("id"),
        "question": row.get("question"),
        "answer_variants": row.get("answer_variants"),
        "evidence": [
            {"document": e.get("document"), "page": e.get("page")}
            for e in evidence
            if isinstance(e, dict)
        ]
        if isinstance(evidence, list)
        else evidence,
        "question_type": "",
        "domain": row.get("domain") or "",
        "document_category": row.get("document_category") or "",
    }
    if not record["answer_variants"]:
        raise DatasetError(
            f"{where}: no 'answer_variants' (the public test split has no answers; use --split dev)"
        )
    parse_question(record, where)
    return record


def documents(rows: Iterable[dict[str, Any]]) -> tuple[list[Document], list[str]]:
    """The corpus rows as documents, and a warning per document whose page count differs
    from its `metadata.num_pages` (the split still decides the pages, as in the baseline)."""
    docs: list[Document] = []
    warnings: list[str] = []
    for n, row in enumerate(rows, 1):
        name = str(row.get("pdf_name") or "").strip()
        markdown = row.get("markdown")
        if not name or not isinstance(markdown, str):
            raise DatasetError(f"{CORPUS_REPO} row {n}: needs 'pdf_name' and 'markdown'")
        meta = _metadata(row.get("metadata"), f"{CORPUS_REPO} row {n} ({name})")
        pages = split_pages(markdown)
        expected = meta.get("num_pages")
        if isinstance(expected, int) and expected != len(pages):
            warnings.append(f"{name}: {len(pages)} pages split, metadata says {expected}")
        docs.append(Document(name=name, pages=pages, source=f"hf:{CORPUS_REPO}", meta=meta))
    return docs, warnings


def _metadata(value: Any, where: str) -> dict[str, Any]:
    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        return value
    try:
        data = json.loads(value)
    except (TypeError, ValueError):
        raise DatasetError(f"{where}: 'metadata' is not a JSON object") from None
    if not isinstance(data, dict):
        raise DatasetError(f"{where}: 'metadata' is not a JSON object")
    return data
