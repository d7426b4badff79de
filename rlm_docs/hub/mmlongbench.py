"""MMLongBench-Doc: the `yubo2333/MMLongBench-Doc` questions (its documents are PDFs).

Layout, from the dataset card (`dataset_info`): split `train` (parquet under `data/`), every
column a string: `doc_id` (the PDF's file name, under the repository's `documents/`),
`doc_type`, `question`, `answer` (`Not answerable` for the unanswerable questions; a Python
list literal when `answer_format` is `List`), `evidence_pages` (a list literal, `"[5]"`,
`"[82, 121]"`), `evidence_sources` (a list literal), `answer_format` (`Str`, `Int`, `Float`,
`List`, `None`). The rows carry no id, so a question's id is its row number, `mmlb_0001`.

`evidence_pages` are 1-based PDF page indices, with exceptions the maintainers' issue tracker
records, and the project's own check of the data confirms: a few questions cite page 0, and one document (`san-francisco-11-contents`) cites the
book's printed page numbers. Page 0 cannot be a 1-based page, so it is dropped from the
evidence and the record says so in `evidence_note`; printed page numbers cannot be told apart
from PDF pages without the PDF, so they are kept as the source gives them.
`question_type` follows the benchmark's evaluation script: `unanswerable` when the answer is
`Not answerable`, else `single-page` with exactly one evidence page, else `cross-page`.
"""

import ast
from typing import Any

from rlm_docs.errors import DatasetError
from rlm_docs.eval.dataset import parse_question

QUESTIONS_REPO = "yubo2333/MMLongBench-Doc"
DEFAULT_SPLIT = "train"
UNANSWERABLE = "Not answerable"
CORPUS_HINT = (  # {out}: the --out directory
    "the questions' PDFs are the repository's documents/ folder: `hf download "
    "yubo2333/MMLongBench-Doc --repo-type dataset --include 'documents/*' --local-dir PDFS`, "
    "then `rlm-docs ingest PDFS/documents --out {out}/corpus` (scanned pages need OCR: "
    "--ocr local or mistral)"
)


def _literal_list(value: Any, field: str, where: str) -> list:
    try:
        parsed = ast.literal_eval(str(value))
    except (ValueError, SyntaxError):
        parsed = None
    if not isinstance(parsed, list):
        raise DatasetError(f"{where}: field {field!r} {str(value)[:60]!r} is not a list literal")
    return parsed


def question_record(row: dict[str, Any], where: str, number: int) -> dict[str, Any]:
    """One MMLongBench-Doc row as a question-file line (id `mmlb_NNNN` from its row number)."""
    answer = str(row.get("answer") or "").strip()
    pages = _literal_list(row.get("evidence_pages"), "evidence_pages", where)
    if not all(isinstance(p, int) and not isinstance(p, bool) for p in pages):
        raise DatasetError(f"{where}: field 'evidence_pages' must list page numbers")
    unanswerable = answer == UNANSWERABLE
    kept = [] if unanswerable else [p for p in pages if p >= 1]
    variants: list[list[str]] | None
    if row.get("answer_format") == "List" and answer.startswith("["):
        variants = [[str(x) for x in _literal_list(answer, "answer", where)] or [answer]]
    else:
        variants = [[answer]] if answer else None
    if variants is None:
        raise DatasetError(f"{where}: field 'answer' is empty")
    document = str(row.get("doc_id") or "").strip()
    record: dict[str, Any] = {
        "id": f"mmlb_{number:04d}",
        "question": row.get("question"),
        "answer_variants": variants,
        "evidence": [{"document": document, "page": p} for p in kept],
        "question_type": "unanswerable"
        if unanswerable
        else ("single-page" if len(pages) == 1 else "cross-page"),
        "doc_type": str(row.get("doc_type") or ""),
        "answer_format": str(row.get("answer_format") or ""),
        "evidence_sources": _literal_list(
            row.get("evidence_sources") or "[]", "evidence_sources", where
        ),
        "evidence_pages": pages,
    }
    if not unanswerable and len(kept) < len(pages):
        record["evidence_note"] = "the source's page 0 is not a 1-based page and was dropped"
    parse_question(record, where)
    return record
