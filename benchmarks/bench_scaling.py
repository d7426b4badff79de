"""Decomposition study: accuracy and cost against context length for each system.

Usage:
    python benchmarks/bench_scaling.py [--lengths 2^13 2^15 2^17] [--questions 10]
        [--systems rlm bm25-agent ...] [--workloads oolong needle] [--model offline]
        [--data TREC.jsonl] [--out DIR] [--generation 2^20] [--no-study]

Prints, all measured in this run:
- the offline sub-model's TREC rule set: accuracy on every question of the TREC-coarse file
  (per label, and the main confusions);
- with `--generation T`: wall time and peak memory of `bench make oolong|needle` at T tokens,
  and the actual token counts against the target;
- the study (`rlm_docs.eval.scaling`): per workload, length and system, mean score, mean
  sub-calls, tokens and dollars per question, seconds per question; and `scaling.png` (accuracy
  and tokens per question against context length, log2 axis) in `--out`.

The TREC file is `oolong-trec/trec_coarse_validated.jsonl` in a data directory (`RLM_DOCS_DATA`,
or `../shared/datasets`) or `--data`;
without it the oolong parts are skipped with a message. The machine is shared: wall times are
noisy upper bounds.
"""

import argparse
import json
import resource
import tempfile
import time
from collections import Counter
from pathlib import Path

from rlm_docs.bench.make import make_bench
from rlm_docs.bench.trec import load_pool
from rlm_docs.cli.bench_cmd import _tokens
from rlm_docs.data_sets import TREC, find
from rlm_docs.eval.scaling import STUDY_SYSTEMS, format_rows, plot_scaling, scaling_study
from rlm_docs.offline.trec import classify


def classifier_accuracy(data: Path) -> None:
    pool = load_pool(data)
    hits = Counter()
    totals = Counter()
    confusions = Counter()
    for item in pool:
        guess = classify(item.text)
        totals[item.label] += 1
        hits[item.label] += guess == item.label
        if guess != item.label:
            confusions[(item.label, guess)] += 1
    print(
        f"offline TREC rules: {sum(hits.values())}/{len(pool)} = "
        f"{sum(hits.values()) / len(pool):.1%} correct on {data.name}"
    )
    for label in totals:
        print(f"  {label:<34} {hits[label] / totals[label]:6.1%} of {totals[label]}")
    print(
        "  main confusions (gold -> rules):",
        ", ".join(f"{g} -> {p}: {n}" for (g, p), n in confusions.most_common(4)),
    )


def generation(tokens: int, data: Path | None, out: Path) -> None:
    for kind in ("oolong", "needle"):
        if kind == "oolong" and data is None:
            continue
        start = time.perf_counter()
        manifest = make_bench(
            kind,
            out / f"gen-{kind}",
            tokens=[tokens],
            questions=10,
            **({"data": data} if kind == "oolong" else {}),
        )
        part = manifest["parts"][0]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"bench make {kind} at {tokens}: {time.perf_counter() - start:.1f}s, peak RSS "
            f"{peak:.0f} MB (process so far); text {part['text_tokens']} tokens "
            f"({part['text_tokens'] / tokens:.1%} of target), rendered "
            f"{part['rendered_tokens']}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=_tokens, nargs="+", default=[2**13, 2**15, 2**17])
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--systems", nargs="+", default=list(STUDY_SYSTEMS))
    parser.add_argument("--workloads", nargs="+", default=["oolong", "needle"])
    parser.add_argument("--model", default="offline")
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=None, help="keep outputs here")
    parser.add_argument("--generation", type=_tokens, default=None, metavar="T")
    parser.add_argument("--no-study", action="store_true")
    args = parser.parse_args()
    data = args.data or find(TREC)
    if data is None or not data.is_file():
        print(f"TREC file {data or TREC.name} not found: oolong parts skipped")
        data = None
        args.workloads = [w for w in args.workloads if w == "needle"]
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-scaling-"))
    if data is not None:
        classifier_accuracy(data)
    if args.generation:
        generation(args.generation, data, out)
    if args.no_study:
        return 0
    start = time.perf_counter()
    rows = scaling_study(
        out,
        workloads=args.workloads,
        lengths=args.lengths,
        systems=args.systems,
        model=args.model,
        questions=args.questions,
        data=data,
    )
    print(format_rows(rows))
    (out / "scaling.json").write_text(json.dumps(rows, indent=1) + "\n")
    print(
        f"study in {time.perf_counter() - start:.0f}s; plot: {plot_scaling(rows, out / 'scaling.png')}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
