"""FinanceBench: the `PatronusAI/financebench` questions (the hub copy holds no documents).

Layout: the repository is one JSON Lines file (`financebench_merged.jsonl`) that `datasets`
reads as split `train`; each line is a question of the benchmark's open-source sample, with the
fields of the benchmark's GitHub release (`data/financebench_open_source.jsonl`) and its
document information merged in: `financebench_id`, `company`, `doc_name`, `question_type`,
`question_reasoning`, `domain_question_num`, `question`, `answer`, `justification`,
`dataset_subset_label`, `evidence` (a list of `{evidence_text, doc_name, evidence_page_num,
evidence_text_full_page}`), `gics_sector`, `doc_type`, `doc_period`, `doc_link`.

`evidence_page_num` is a 0-based PDF page index: the cash-flow statement the capital
expenditure question of `3M_2018_10K` cites is at index 59, printed page 60, the 60th page of
the filing. Question files count pages from 1, so every page is written one higher.
"""

from typing import Any

from rlm_docs.errors import DatasetError
from rlm_docs.eval.dataset import parse_question

QUESTIONS_REPO = "PatronusAI/financebench"
DEFAULT_SPLIT = "train"
CORPUS_HINT = (  # {out}: the --out directory
    "the hub copy has no documents: ingest the filings it names (the PDFs of "
    "github.com/patronus-ai/financebench, `pdfs/`) with `rlm-docs ingest PDF_DIR --out {out}/corpus`"
)
_CARRIED = ("question_reasoning", "company", "doc_type", "doc_period", "gics_sector")


def question_record(row: dict[str, Any], where: str, number: int) -> dict[str, Any]:
    """One FinanceBench line as a question-file line, evidence pages counted from 1."""
    evidence = row.get("evidence")
    if not isinstance(evidence, list):
        raise DatasetError(f"{where}: field 'evidence' must be a list")
    pages = []
    for i, e in enumerate(evidence):
        page = e.get("evidence_page_num") if isinstance(e, dict) else None
        if not isinstance(page, int) or isinstance(page, bool) or page < 0:
            raise DatasetError(f"{where}: evidence[{i}] needs 'evidence_page_num' >= 0")
        pages.append({"document": e.get("doc_name"), "page": page + 1})
    answer = row.get("answer")
    record = {
        "id": row.get("financebench_id"),
        "question": row.get("question"),
        "answer_variants": [[answer]] if isinstance(answer, str) and answer.strip() else None,
        "evidence": pages,
        "question_type": str(row.get("question_type") or ""),
        "domain": "finance",
        **{k: row.get(k) for k in _CARRIED if row.get(k) is not None},
    }
    if record["answer_variants"] is None:
        raise DatasetError(f"{where}: field 'answer' must be non-empty text")
    parse_question(record, where)
    return record
