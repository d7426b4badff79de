"""A local copy of the MADQA hub repositories, laid out as the hub serves them.

`OxRML/MADQA`: parquet files per split (`dev`, `test`, `train`) with the columns the
benchmark's harness reads (`id`, `question`, `answer_variants`, `evidence` as a list of
`{document, page}`, `document_category`, `domain`; the public `test` split has no answers or
evidence) and the `documents` config (`links` split: `document`, `url`), declared in the
card's `configs`. `OxRML/pdfs-to-markdown-mistral-ocr`: split `train` with `pdf_name`,
`markdown` (pages joined by `\\n---\\n`) and `metadata` (a JSON string with `num_pages`).

The content is the bundled demo corpus and its questions (renamed to `NAME.pdf`, as MADQA
names documents), repeated under new ids so a split holds more than 20 questions.
"""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "corpus"

QUESTION_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("question", pa.string()),
        ("answer_variants", pa.list_(pa.list_(pa.string()))),
        ("evidence", pa.list_(pa.struct([("document", pa.string()), ("page", pa.int64())]))),
        ("document_category", pa.string()),
        ("domain", pa.string()),
    ]
)
CORPUS_SCHEMA = pa.schema(
    [("pdf_name", pa.string()), ("markdown", pa.string()), ("metadata", pa.string())]
)
LINKS_SCHEMA = pa.schema([("document", pa.string()), ("url", pa.string())])

MADQA_CARD = """---
license: cc-by-nc-4.0
configs:
- config_name: default
  data_files:
  - split: dev
    path: data/dev-*
  - split: test
    path: data/test-*
  - split: train
    path: data/train-*
- config_name: documents
  data_files:
  - split: links
    path: documents/links-*
---
# MADQA (local test copy)
"""
CORPUS_CARD = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*
---
# pdfs-to-markdown-mistral-ocr (local test copy)
"""


def demo_documents() -> dict[str, list[str]]:
    """{document stem: pages} of the bundled demo corpus."""
    return {
        path.name.removesuffix(".pages.json"): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted((DEMO / "documents").glob("*.pages.json"))
    }


def _rows(copies: int) -> list[dict]:
    demo = [json.loads(line) for line in (DEMO / "questions.jsonl").read_text().splitlines()]
    rows = []
    for copy in range(copies):
        for q in demo:
            rows.append(
                {
                    "id": f"{q['id']}-{copy}",
                    "question": q["question"],
                    "answer_variants": q["answer_variants"],
                    "evidence": [
                        {"document": f"{e['document']}.pdf", "page": e["page"]}
                        for e in q["evidence"]
                    ],
                    "document_category": "Financial report",
                    "domain": q.get("domain", ""),
                }
            )
    return rows


def _write(path: Path, rows: list[dict], schema: pa.Schema) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def write_madqa_mirror(mirror: Path, copies: int = 3) -> Path:
    """Write both repositories under `mirror/OxRML/...`; returns `mirror`."""
    questions = mirror / "OxRML" / "MADQA"
    questions.mkdir(parents=True, exist_ok=True)
    (questions / "README.md").write_text(MADQA_CARD)
    rows = _rows(copies)
    _write(questions / "data" / "dev-00000-of-00001.parquet", rows, QUESTION_SCHEMA)
    _write(questions / "data" / "train-00000-of-00001.parquet", rows[:4], QUESTION_SCHEMA)
    hidden = [{**r, "answer_variants": [], "evidence": []} for r in rows[:4]]
    _write(questions / "data" / "test-00000-of-00001.parquet", hidden, QUESTION_SCHEMA)
    docs = demo_documents()
    links = [{"document": f"{n}.pdf", "url": f"https://example.org/{n}.pdf"} for n in docs]
    _write(questions / "documents" / "links-00000-of-00001.parquet", links, LINKS_SCHEMA)
    corpus = mirror / "OxRML" / "pdfs-to-markdown-mistral-ocr"
    corpus.mkdir(parents=True, exist_ok=True)
    (corpus / "README.md").write_text(CORPUS_CARD)
    corpus_rows = [
        {
            "pdf_name": f"{name}.pdf",
            "markdown": "\n---\n".join(pages),
            "metadata": json.dumps({"num_pages": len(pages)}),
        }
        for name, pages in docs.items()
    ]
    _write(corpus / "data" / "train-00000-of-00001.parquet", corpus_rows, CORPUS_SCHEMA)
    return mirror


OOLONG_SCHEMA = pa.schema(
    [
        ("id", pa.int64()),
        ("context_len", pa.int64()),
        ("dataset", pa.string()),
        ("context_window_text", pa.string()),
        ("context_window_text_with_labels", pa.string()),
        ("question", pa.string()),
        ("task_group", pa.string()),
        ("task", pa.string()),
        ("answer", pa.string()),
        ("answer_type", pa.string()),
        ("input_subset", pa.string()),
        ("num_labels", pa.int64()),
        ("context_window_id", pa.int64()),
    ]
)
"""`oolongbench/oolong-synth`'s columns and types, as its card's `dataset_info` lists them."""
OOLONG_CARD = """---
configs:
- config_name: default
  data_files:
  - split: validation
    path: data/validation-*
  - split: test
    path: data/test-*
---
# oolong-synth (local test copy)
"""
TREC_SMALL = ROOT / "tests" / "fixtures" / "bench" / "trec_small.jsonl"


def oolong_windows() -> dict[int, tuple[object, list]]:
    """{context_window_id: (window, OOLONG items)}: two windows generated from the small TREC
    pool with the project's OOLONG templates, so every gold is known exactly."""
    import random

    from rlm_docs.bench import oolong
    from rlm_docs.bench.trec import load_pool
    from rlm_docs.bench.window import sample_window

    pool = load_pool(TREC_SMALL)
    out = {}
    for window_id, tokens in ((7, 4096), (12, 6144)):
        rng = random.Random(window_id)
        window = sample_window(pool, tokens, rng)
        out[window_id] = (window, oolong.select(oolong.candidates(window, rng), 6, rng))
    return out


def _literal(item) -> str:
    """OOLONG's `answer` column: a Python list literal of the gold."""
    number = item.answer_type in ("numeric", "user")
    return repr([int(item.answer)] if number else [item.answer])


def write_oolong_mirror(mirror: Path) -> Path:
    """Write `mirror/oolongbench/oolong-synth` (splits validation and test); returns `mirror`."""
    repo = mirror / "oolongbench" / "oolong-synth"
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "README.md").write_text(OOLONG_CARD)
    rows = []
    for window_id, (window, items) in oolong_windows().items():
        text = window.text()
        labelled = text.replace(" || Instance: ", " || Label: ? || Instance: ")
        for item in items:
            rows.append(
                {
                    "id": 1000 + len(rows),
                    "context_len": len(text) // 4,
                    "dataset": "trec_coarse",
                    "context_window_text": text,
                    "context_window_text_with_labels": labelled,
                    "question": item.question,
                    "task_group": "counting" if item.task != "top_user" else "user",
                    "task": f"TASK_TYPE.{item.question_type.upper()}",
                    "answer": _literal(item),
                    "answer_type": f"ANSWER_TYPE.{item.answer_type.upper()}",
                    "input_subset": "True" if item.scope == "user" else "False",
                    "num_labels": 6,
                    "context_window_id": window_id,
                }
            )
    last = dict(rows[-1], id=1000 + len(rows), task="TASK_TYPE.FIRST_DATE")
    rows.append(last | {"answer": "[datetime.date(2023, 2, 2)]", "answer_type": "ANSWER_TYPE.DATE"})
    _write(repo / "data" / "validation-00000-of-00001.parquet", rows, OOLONG_SCHEMA)
    _write(repo / "data" / "test-00000-of-00001.parquet", rows[:3], OOLONG_SCHEMA)
    return mirror


FINANCEBENCH_CARD = """---
license: cc-by-nc-4.0
---
# financebench (local test copy)
"""


def financebench_rows() -> list[dict]:
    """The demo questions as `PatronusAI/financebench` lines: every field of the hub file, with
    `evidence_page_num` counted from 0 as the benchmark counts it."""
    demo = [json.loads(line) for line in (DEMO / "questions.jsonl").read_text().splitlines()]
    rows = []
    for q in demo:
        doc = q["evidence"][0]["document"]
        rows.append(
            {
                "financebench_id": f"financebench_id_{len(rows):05d}",
                "company": doc.split("_")[0],
                "doc_name": doc,
                "question_type": "metrics-generated",
                "question_reasoning": "Information extraction",
                "domain_question_num": None,
                "question": q["question"],
                "answer": q["answer_variants"][0][0],
                "justification": "",
                "dataset_subset_label": "OPEN_SOURCE",
                "evidence": [
                    {
                        "evidence_text": "",
                        "doc_name": e["document"],
                        "evidence_page_num": e["page"] - 1,
                        "evidence_text_full_page": "",
                    }
                    for e in q["evidence"]
                ],
                "gics_sector": "Industrials",
                "doc_type": "10k",
                "doc_period": 2018,
                "doc_link": f"https://example.org/{doc}.pdf",
            }
        )
    return rows


def write_financebench_mirror(mirror: Path) -> Path:
    """Write `mirror/PatronusAI/financebench` (the card and one JSONL file); returns `mirror`."""
    repo = mirror / "PatronusAI" / "financebench"
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "README.md").write_text(FINANCEBENCH_CARD)
    lines = "".join(json.dumps(r) + "\n" for r in financebench_rows())
    (repo / "financebench_merged.jsonl").write_text(lines)
    return mirror


MMLONGBENCH_SCHEMA = pa.schema(
    [
        (name, pa.string())
        for name in (
            "doc_id",
            "doc_type",
            "question",
            "answer",
            "evidence_pages",
            "evidence_sources",
            "answer_format",
        )
    ]
)
"""`yubo2333/MMLongBench-Doc`'s columns, all strings, as its card's `dataset_info` lists them."""
MMLONGBENCH_CARD = """---
configs:
- config_name: default
  data_files:
  - split: train
    path: data/train-*
---
# MMLongBench-Doc (local test copy)
"""


def mmlongbench_rows() -> list[dict]:
    """The demo questions as MMLongBench-Doc rows (one document each, pages 1-based as list
    literals), then an unanswerable question, a `List` answer and a page-0 citation."""
    demo = [json.loads(line) for line in (DEMO / "questions.jsonl").read_text().splitlines()]
    rows = []
    for q in demo:
        doc = q["evidence"][0]["document"]
        pages = [e["page"] for e in q["evidence"] if e["document"] == doc]
        rows.append(
            {
                "doc_id": f"{doc}.pdf",
                "doc_type": "Financial report",
                "question": q["question"],
                "answer": q["answer_variants"][0][0],
                "evidence_pages": str(pages),
                "evidence_sources": "['Pure-text (Plain-text)', 'Table']",
                "answer_format": "Str",
            }
        )
    first = rows[0]
    rows.append(first | {"question": "Who audited the moon?", "answer": "Not answerable",
                         "evidence_pages": "[]", "answer_format": "None"})  # fmt: skip
    rows.append(first | {"answer": "['32,765', '31,657']", "answer_format": "List"})
    rows.append(first | {"evidence_pages": "[0, 56]"})
    return rows


def write_mmlongbench_mirror(mirror: Path) -> Path:
    """Write `mirror/yubo2333/MMLongBench-Doc` (split train); returns `mirror`."""
    repo = mirror / "yubo2333" / "MMLongBench-Doc"
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "README.md").write_text(MMLONGBENCH_CARD)
    _write(repo / "data" / "train-00000-of-00001.parquet", mmlongbench_rows(), MMLONGBENCH_SCHEMA)
    return mirror
