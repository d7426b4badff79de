"""OOLONG-synth: `oolongbench/oolong-synth` questions, each over its own context window.

Layout, from the dataset card (`dataset_info`) and the benchmark's harness
(the Oolong repository's `src/eval/eval_script_batched.py` and `eval_helpers.py`):

- splits `validation` and `test` (parquet under `data/`); one row per question with `id`
  (int64), `context_len`, `dataset` (the source classification set, e.g. `trec_coarse`),
  `context_window_text` (the whole window the question is asked over),
  `context_window_text_with_labels`, `question`, `task_group`, `task`, `answer` (a Python
  list literal, `"[47]"`, `"['spam']"`, or `"[datetime.date(2023, 2, 2)]"`), `answer_type`
  (`ANSWER_TYPE.NUMERIC`, `ANSWER_TYPE.LABEL`, ...), `input_subset`, `num_labels`,
  `context_window_id` (int64).
- the harness puts `context_window_text` in the prompt and `question` after it; it never mixes
  windows. So each window becomes its own store with its own question file, the layout
  `bench make` writes for its OOLONG-style workloads, and the question lines are the records
  `bench make` writes (scorer `oolong`, so OOLONG's own scoring rule applies).

Pages are cut at line boundaries every `LINES_PER_PAGE` lines, as the generated windows are;
the pages concatenate back to the window text exactly.
"""

import ast
import datetime
from typing import Any

from rlm_docs.bench.window import DOCUMENT, LINES_PER_PAGE
from rlm_docs.corpus.document import Document
from rlm_docs.errors import DatasetError
from rlm_docs.eval.dataset import parse_question

QUESTIONS_REPO = "oolongbench/oolong-synth"
DEFAULT_SPLIT = "validation"
SPLIT_FILES = "data/{split}-*"
"""The card's `data_files` per split; fetching only them spares the 21 GB `test` split when
`validation` is asked for (and the reverse)."""


def window_pages(text: str) -> list[str]:
    """The window cut into pages of LINES_PER_PAGE lines (joined, they are `text`)."""
    lines = text.splitlines(keepends=True)
    pages = ["".join(lines[i : i + LINES_PER_PAGE]) for i in range(0, len(lines), LINES_PER_PAGE)]
    return pages or [""]


def gold_answer(value: Any, where: str) -> str:
    """The gold answer in OOLONG's `answer` literal, as the harness reads it (first item; a
    date as ISO `2023-02-02`: the harness parses dates, the `oolong` scorer matches exactly)."""
    text = str(value or "").strip()
    try:
        if "datetime" in text:  # the harness reads "[datetime.date(Y, M, D)]" with strptime
            day = datetime.datetime.strptime(text, "[datetime.date(%Y, %m, %d)]")
            return day.date().isoformat()
        parsed = ast.literal_eval(text)
        return str(parsed[0])
    except (ValueError, SyntaxError, TypeError, IndexError):
        raise DatasetError(f"{where}: field 'answer' {text[:60]!r} is not a list literal") from None


def window_key(row: dict[str, Any], where: str) -> str:
    """The directory a row's window is written to."""
    key = row.get("context_window_id")
    if not isinstance(key, int) or isinstance(key, bool):
        raise DatasetError(f"{where}: field 'context_window_id' must be an integer")
    return f"window-{key}"


def question_record(row: dict[str, Any], where: str, number: int) -> dict[str, Any]:
    """One OOLONG-synth row as a question line in `bench make`'s OOLONG record format."""
    kind = str(row.get("answer_type") or "").removeprefix("ANSWER_TYPE.").lower()
    record = {
        "id": str(row.get("id")) if row.get("id") is not None else None,
        "question": row.get("question"),
        "answer_variants": [[gold_answer(row.get("answer"), where)]],
        "evidence": [],
        "question_type": str(row.get("task") or ""),
        "scorer": "oolong",
        "answer_type": kind,  # numeric, label, comparison, user, date
        "workload": "oolong",
        "task_group": str(row.get("task_group") or ""),
        "source_dataset": str(row.get("dataset") or ""),
        "context_tokens": row.get("context_len"),
        "context_window_id": row.get("context_window_id"),
    }
    parse_question(record, where)
    return record


def window_document(row: dict[str, Any], where: str) -> Document:
    """The row's context window as the one document of its store."""
    text = row.get("context_window_text")
    if not isinstance(text, str) or not text:
        raise DatasetError(f"{where}: field 'context_window_text' is empty or not text")
    return Document(DOCUMENT, window_pages(text), source=f"hf:{QUESTIONS_REPO}")
