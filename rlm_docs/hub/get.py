"""`get_benchmark`: fetch a public benchmark and write it as a store and a question file.

A benchmark whose hub copy holds only questions (FinanceBench, MMLongBench-Doc) gets
`DIR/questions.jsonl` and a line saying how to build its corpus. A benchmark whose questions
each carry their own context (OOLONG: one window per question group) is written as one store
and question file per window, `DIR/<window>/corpus` and `DIR/<window>/questions.jsonl`, the
layout `bench make` uses, with `DIR/manifest.json` last.

Nothing is written until every row has been read and validated, and the store and the
question file are each written atomically, so a failed or interrupted get never leaves a
question file that names a corpus it did not finish.
"""

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from rlm_docs.atomic import atomic_write_text
from rlm_docs.corpus.document import Document
from rlm_docs.corpus.store import write_store
from rlm_docs.errors import ConfigError, DatasetError
from rlm_docs.hub import financebench, madqa, mmlongbench, oolong
from rlm_docs.hub.load import load_split, mirror_setting
from rlm_docs.questions import doc_key

QUESTIONS_FILE = "questions.jsonl"
CORPUS_DIR = "corpus"


@dataclass(frozen=True)
class Benchmark:
    """Where a benchmark's questions and corpus live on the hub and how rows convert.

    Either a shared corpus (`corpus_repo`, `corpus_split`, `documents`); or, for questions
    asked over their own context, `window` (row -> the directory its context goes to) and
    `context` (row -> that context as a document); or neither, and `corpus_hint` says how to
    build the corpus the hub does not hold.
    """

    questions_repo: str
    default_split: str
    question: Callable[[dict[str, Any], str, int], dict[str, Any]]  # row, where, row number
    corpus_repo: str = ""
    corpus_split: str = ""
    documents: Callable[[Any], tuple[list, list[str]]] | None = None
    window: Callable[[dict[str, Any], str], str] | None = None
    context: Callable[[dict[str, Any], str], Document] | None = None
    corpus_hint: str = ""
    split_files: str = ""  # `data/{split}-*`: download only the asked split's files


def _benchmark(module: ModuleType, **how: Any) -> Benchmark:
    """A benchmark from its hub module's declarations (`QUESTIONS_REPO`, `DEFAULT_SPLIT`,
    `question_record`) and `how` its corpus is had."""
    return Benchmark(
        questions_repo=module.QUESTIONS_REPO,
        default_split=module.DEFAULT_SPLIT,
        question=module.question_record,
        **how,
    )


BENCHMARKS: dict[str, Benchmark] = {
    "madqa": _benchmark(
        madqa,
        corpus_repo=madqa.CORPUS_REPO,
        corpus_split=madqa.CORPUS_SPLIT,
        documents=madqa.documents,
    ),
    "financebench": _benchmark(financebench, corpus_hint=financebench.CORPUS_HINT),
    "mmlongbench-doc": _benchmark(mmlongbench, corpus_hint=mmlongbench.CORPUS_HINT),
    "oolong": _benchmark(
        oolong,
        split_files=oolong.SPLIT_FILES,
        window=oolong.window_key,
        context=oolong.window_document,
    ),
}


def get_benchmark(
    name: str,
    out: str | Path,
    split: str | None = None,
    limit: int | None = None,
    mirror: str | Path | None = None,
    log: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Write `out/corpus` and `out/questions.jsonl` for benchmark `name` (or only the
    questions, or one of each per context window: see the module); returns a summary.

    `limit` keeps the first N questions of the split; the corpus is always whole, so a short
    run searches the same collection as a full one. `mirror` is a directory holding local
    copies of the hub repositories (`mirror/OxRML/MADQA`, ...); without it RLM_DOCS_HUB_MIRROR is
    used when set.
    """
    bench = BENCHMARKS.get(name.lower())
    if bench is None:
        raise ConfigError(f"unknown benchmark {name!r}; choose from {', '.join(BENCHMARKS)}")
    split = split or bench.default_split
    root, label = mirror_setting(mirror)
    log(f"questions: {bench.questions_repo} ({split})")
    rows = load_split(bench.questions_repo, split, None, root, label, bench.split_files)
    if limit:
        rows = rows.select(range(min(limit, len(rows))))
    records = _questions(bench, rows, split)
    if bench.window is not None:
        return _write_windows(name.lower(), bench, rows, records, split, Path(out))
    if bench.documents is None:
        return _write_questions_only(name.lower(), bench, records, split, Path(out))
    log(f"corpus: {bench.corpus_repo} ({bench.corpus_split})")
    corpus_rows = load_split(bench.corpus_repo, bench.corpus_split, None, root, label)
    docs, warnings = bench.documents(corpus_rows)
    if not docs:
        raise DatasetError(f"{bench.corpus_repo} ({bench.corpus_split}): no documents")
    names = {doc_key(d.name) for d in docs}
    missing = sorted(
        {
            e["document"]
            for r in records
            for e in r["evidence"]
            if doc_key(e["document"]) not in names
        }
    )
    target = Path(out)
    store = write_store(
        target / CORPUS_DIR,
        docs,
        manifest={"source": f"hf:{bench.corpus_repo}@{bench.corpus_split}"},
    )
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    atomic_write_text(target / QUESTIONS_FILE, lines)
    return {
        "benchmark": name.lower(),
        "split": split,
        "questions": len(records),
        "documents": len(docs),
        "pages": sum(len(d.pages) for d in docs),
        "corpus": str(store),
        "dataset": str(target / QUESTIONS_FILE),
        "page_count_warnings": warnings,
        "missing_evidence_documents": missing,
    }


def _write_questions_only(
    name: str, bench: Benchmark, records: list[dict[str, Any]], split: str, out: Path
) -> dict[str, Any]:
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    atomic_write_text(out / QUESTIONS_FILE, lines)
    return {
        "benchmark": name,
        "split": split,
        "questions": len(records),
        "documents": 0,
        "pages": 0,
        "corpus": None,
        "corpus_hint": bench.corpus_hint.format(out=out),
        "dataset": str(out / QUESTIONS_FILE),
        "evidence_documents": sorted({e["document"] for r in records for e in r["evidence"]}),
        "page_count_warnings": [],
        "missing_evidence_documents": [],
    }


def _write_windows(
    name: str, bench: Benchmark, rows: Any, records: list[dict[str, Any]], split: str, out: Path
) -> dict[str, Any]:
    """One store and question file per context window, then `out/manifest.json`."""
    assert bench.window is not None and bench.context is not None
    windows: dict[str, tuple[Document, list[dict[str, Any]]]] = {}
    for n, (row, record) in enumerate(zip(rows, records, strict=True), 1):
        where = f"{bench.questions_repo} {split} row {n}"
        key = bench.window(row, where)
        if key not in windows:
            windows[key] = (bench.context(row, where), [])
        windows[key][1].append(record)
    parts: list[dict[str, Any]] = []
    for key, (doc, items) in windows.items():
        write_store(out / key / CORPUS_DIR, [doc], {"source": f"hf:{bench.questions_repo}"})
        lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items)
        atomic_write_text(out / key / QUESTIONS_FILE, lines)
        parts.append(
            {
                "window": key,
                "corpus": f"{key}/{CORPUS_DIR}",
                "questions": f"{key}/{QUESTIONS_FILE}",
                "num_questions": len(items),
                "pages": len(doc.pages),
            }
        )
    summary = {
        "benchmark": name,
        "split": split,
        "questions": len(records),
        "windows": len(parts),
        "documents": len(parts),
        "pages": sum(p["pages"] for p in parts),
        "parts": parts,
        "page_count_warnings": [],
        "missing_evidence_documents": [],
    }
    atomic_write_text(out / "manifest.json", json.dumps(summary, indent=1) + "\n")
    return summary


def _questions(bench: Benchmark, rows: Any, split: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for n, row in enumerate(rows, 1):
        where = f"{bench.questions_repo} {split} row {n}"
        record = bench.question(row, where, n)
        qid = str(record["id"])
        if qid in seen:
            raise DatasetError(f"{where}: field 'id' {qid!r} repeats row {seen[qid]}")
        seen[qid] = n
        records.append(record)
    if not records:
        raise DatasetError(f"{bench.questions_repo} ({split}): no questions")
    return records
