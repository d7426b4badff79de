"""MADQA-schema question sets: loading, validation and hop types.

Each JSONL line is `{id, question, answer_variants: [[str, ...], ...], evidence: [{document,
page}], question_type, domain?}`. Mistakes raise `DatasetError` naming the line and field, so a
typo in a 2,000-line file is found in seconds rather than after an hour of model calls.

Optional fields read here: `page: null` in evidence (document-level evidence, as in KG-RAG
sec-10-q: Page F1 is then n/a), `hops` (how many evidence pages an answer needs; evidence may
list alternatives, so it decides the hop type when present) and `scorer` (a generated workload's
metric, see `rlm_docs.eval.workload_scoring`). Gold variants that only say "Not answerable" mark an unanswerable
question.
"""

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from rlm_docs.errors import DatasetError
from rlm_docs.eval.citation_f1 import page_number
from rlm_docs.eval.workload_scoring import SCORERS
from rlm_docs.jsonl import json_error
from rlm_docs.questions import Question


def _require(record: dict[str, Any], key: str, kind: type, where: str) -> Any:
    if key not in record:
        raise DatasetError(f"{where}: missing field '{key}'")
    value = record[key]
    if not isinstance(value, kind) or (
        kind is str and isinstance(value, str) and not value.strip()
    ):
        raise DatasetError(f"{where}: field '{key}' must be a non-empty {kind.__name__}")
    return value


def _variants(value: Any, where: str) -> list[list[str]]:
    if not isinstance(value, list) or not value:
        raise DatasetError(f"{where}: field 'answer_variants' must be a non-empty list of lists")
    out = []
    for i, variant in enumerate(value):
        items = [variant] if isinstance(variant, str) else variant
        if not isinstance(items, list) or not items or not all(isinstance(s, str) for s in items):
            raise DatasetError(
                f"{where}: field 'answer_variants[{i}]' must be a non-empty list of strings"
            )
        out.append(list(items))
    return out


def _evidence(value: Any, where: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise DatasetError(f"{where}: field 'evidence' must be a list of {{document, page}}")
    out: list[dict[str, Any]] = []
    for i, ev in enumerate(value):
        at = f"{where}: field 'evidence[{i}]'"
        if not isinstance(ev, dict) or not str(ev.get("document") or "").strip():
            raise DatasetError(f"{at} must be an object with a non-empty 'document'")
        if ev.get("page") is None:  # document-level evidence
            out.append({"document": str(ev["document"]), "page": None})
            continue
        page = page_number(ev.get("page"), f"{at}.page")
        if page < 1:
            raise DatasetError(f"{at}.page must be >= 1 (pages are 1-based), got {page}")
        out.append({"document": str(ev["document"]), "page": page})
    return out


def parse_question(record: Any, where: str) -> Question:
    """Validate one decoded record; `where` (file:line) prefixes every error."""
    if not isinstance(record, dict):
        raise DatasetError(f"{where}: expected a JSON object")
    qid = record.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid.strip():
        raise DatasetError(f"{where}: field 'id' must be a non-empty string")
    scorer = record.get("scorer")
    if scorer is not None and scorer not in SCORERS:
        raise DatasetError(f"{where}: field 'scorer' must be one of {', '.join(SCORERS)}")
    known = {"id", "question", "answer_variants", "evidence", "question_type", "domain"}
    hops = record.get("hops")
    if hops is not None and (not isinstance(hops, int) or isinstance(hops, bool) or hops < 1):
        raise DatasetError(f"{where}: field 'hops' must be an integer >= 1, got {hops!r}")
    return Question(
        id=qid,
        question=_require(record, "question", str, where),
        answer_variants=_variants(record.get("answer_variants"), where),
        evidence=_evidence(record.get("evidence", []), where),
        question_type=str(record.get("question_type") or ""),
        domain=str(record.get("domain") or ""),
        extra={k: v for k, v in record.items() if k not in known},
    )


def load_questions(path: str | os.PathLike[str], limit: int | None = None) -> list[Question]:
    """Questions of a MADQA-schema JSONL file, in file order; ids must be unique."""
    p = Path(path)
    try:
        lines = p.read_text(encoding="utf-8-sig").splitlines()  # a BOM from Windows editors
    except FileNotFoundError:
        raise DatasetError(f"{p}: question file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{p}: cannot read question file ({exc})") from None
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{p}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"{where}: invalid JSON ({json_error(exc)})") from None
        q = parse_question(record, where)
        if q.id in seen:
            raise DatasetError(f"{where}: field 'id' {q.id!r} repeats line {seen[q.id]}")
        seen[q.id] = number
        questions.append(q)
    if not questions:
        raise DatasetError(f"{p}: no questions")
    return questions[:limit] if limit else questions


def dataset_hash(path: str | os.PathLike[str]) -> str:
    """SHA-256 of the question file, recorded in a run manifest to refuse mismatched resumes."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
