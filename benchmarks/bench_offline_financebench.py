"""The `offline` model on FinanceBench dev: accuracy, Page F1 and effort over all 344 filings.

Usage:
    python benchmarks/bench_offline_financebench.py [--store DIR] [--limit N] [--out FILE]

The corpus store is built once from `../shared/datasets/financebench/text` with
`rlm-docs ingest` (into `--store`, default /tmp/rlm-docs-financebench) and reused afterwards.
Every question runs the full RLM machinery (sandbox, governor, BM25 search, offline sub-model
reader). Printed figures, all measured in this run:

- accuracy over the decided questions: the numeric stage, then MADQA's ANLS* >= 0.5 stage (no
  LLM judge offline), with how many questions have prose golds and need a judge; beside it
  MADQA's ANLS* accuracy over all questions and the decided questions on which the two
  disagree; exact: ANLS* = 1
- mean ANLS*, Page F1 and Doc F1 of the citations against the gold evidence pages
- mean steps, sub-calls, tokens in/out and wall seconds per question; stop reasons

Skips (exit 0 with a message) when the data set is absent. Questions are read from ../shared
and never copied into the repository.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"


def ensure_store(store: Path) -> Path:
    """Ingest the 344 text filings once (pdftotext pages split on form feeds)."""
    if (store / "manifest.json").is_file():
        return store
    t0 = time.perf_counter()
    cmd = [sys.executable, "-m", "rlm_docs", "ingest", str(DATA / "text"), "--out", str(store)]
    subprocess.run(cmd, check=True)
    print(f"ingested {DATA / 'text'} -> {store} in {time.perf_counter() - t0:.1f}s")
    return store


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/rlm-docs-financebench"))
    parser.add_argument("--limit", type=int, default=None, help="first N questions only")
    parser.add_argument("--out", type=Path, default=None, help="write predictions JSONL here")
    args = parser.parse_args()
    if not (DATA / "questions.dev.jsonl").is_file():
        print(f"skipped: {DATA} not found")
        return 0

    from rlm_docs.engine import RLM
    from rlm_docs.eval.dataset import load_questions
    from rlm_docs.eval.scoring import score_prediction

    store = ensure_store(args.store)
    questions = load_questions(DATA / "questions.dev.jsonl", limit=args.limit)
    rlm = RLM(store, model="offline")
    rows, records = [], []
    t_all = time.perf_counter()
    for i, q in enumerate(questions, 1):
        pred = rlm.ask(q.question, question_id=q.id)
        record = pred.to_madqa()
        scores = score_prediction(q, record)
        rows.append((pred, scores))
        keys = ("anls", "stage", "correct", "page_f1", "doc_f1")
        records.append(record | {k: scores[k] for k in keys})
        page = "n/a" if scores["page_f1"] is None else f"{scores['page_f1']:.2f}"
        print(
            f"[{i}/{len(questions)}] {q.id} correct={scores['correct']!s:5} "
            f"stage={scores['stage']} anls={scores['anls']:.2f} pageF1={page} "
            f"steps={pred.steps} {pred.wall_s:.1f}s answer={pred.answer[:1]}",
            flush=True,
        )
    total_s = time.perf_counter() - t_all
    if args.out:
        from rlm_docs.atomic import atomic_write_text

        atomic_write_text(args.out, "".join(json.dumps(r) + "\n" for r in records))

    def mean(values: list[float]) -> float:
        return statistics.fmean(values) if values else 0.0

    preds = [p for p, _ in rows]
    scored = [s for _, s in rows]
    print()
    print(f"questions            {len(rows)}")
    decided = [s for s in scored if s["score"] is not None]  # prose golds need a judge
    anls_only = [s["anls"] >= 0.5 for s in scored]
    flipped = [
        f"{q.id}: {a} -> {s['correct']}"
        for q, a, s in zip(questions, anls_only, scored, strict=True)
        if s["score"] is not None and a != s["correct"]
    ]
    pages = [s["page_f1"] for s in scored if s["page_f1"] is not None]
    docs = [s["doc_f1"] for s in scored if s["doc_f1"] is not None]
    right = sum(bool(s["correct"]) for s in decided)
    print(
        f"accuracy (decided)   {mean([float(s['correct']) for s in decided]):.3f} "
        f"({right}/{len(decided)} decided; {len(scored) - len(decided)} need a judge)"
    )
    print(f"ANLS* accuracy (all) {mean([float(a) for a in anls_only]):.3f}")
    print(f"numeric stage decided {sum(s['stage'] == 'numeric' for s in scored)}; changed")
    print("  " + ("\n  ".join(flipped) if flipped else "none"))
    print(f"exact (ANLS*=1)      {mean([float(s['anls'] >= 1.0) for s in scored]):.3f}")
    print(f"mean ANLS*           {mean([s['anls'] for s in scored]):.3f}")
    print(f"Page F1              {mean(pages):.3f} (n={len(pages)})")
    print(f"Doc F1               {mean(docs):.3f} (n={len(docs)})")
    print(f"mean steps           {mean([p.steps for p in preds]):.2f}")
    print(f"mean sub-calls       {mean([p.sub_calls for p in preds]):.2f}")
    print(
        f"mean tokens in/out   {mean([p.input_tokens for p in preds]):,.0f} / "
        f"{mean([p.output_tokens for p in preds]):,.0f}"
    )
    print(f"mean wall s          {mean([p.wall_s for p in preds]):.2f} (total {total_s:.0f}s)")
    print(f"stop reasons         {dict(Counter(p.stop_reason for p in preds))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
