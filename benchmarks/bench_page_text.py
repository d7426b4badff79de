"""Compact page text versus raw: how many tokens a model saves per page it reads.

The helpers return `rlm_docs.corpus.compact.compact(page)` unless asked for `raw=True`. This
counts cl100k_base tokens and characters of every page of a store both ways (raw token counts
are the ones stored at ingest) and prints the totals, the reduction, and per-page quantiles.

    python benchmarks/bench_page_text.py --store /tmp/stores/fb   # e.g. the 344 FinanceBench filings
"""

import argparse
import statistics
import time

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.compact import compact
from rlm_docs.tokens import count_tokens_batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="corpus store (default: the demo corpus)")
    args = parser.parse_args()
    if args.store is None:
        from rlm_docs.ingest.demo import demo_corpus_path

        args.store = demo_corpus_path()
    corpus = Corpus.load(args.store)
    raw_tokens = raw_chars = small_tokens = small_chars = 0
    ratios: list[float] = []
    t0 = time.perf_counter()
    for name in corpus.names:
        texts = corpus.pages(name, 1, corpus.num_pages(name))
        small = [compact(t) for t in texts]
        counts = count_tokens_batch(small)
        for n, (text, short, tokens) in enumerate(zip(texts, small, counts, strict=True), 1):
            before = corpus.page_tokens(name, n)
            raw_tokens += before
            raw_chars += len(text)
            small_tokens += tokens
            small_chars += len(short)
            if before:
                ratios.append(tokens / before)
    elapsed = time.perf_counter() - t0
    print(f"store: {args.store} ({len(corpus)} documents, {corpus.total_pages:,} pages)")
    print(f"raw:     {raw_tokens:>14,} tokens {raw_chars:>16,} chars")
    print(f"compact: {small_tokens:>14,} tokens {small_chars:>16,} chars")
    print(
        f"reduction: {1 - small_tokens / raw_tokens:.1%} of tokens, "
        f"{1 - small_chars / raw_chars:.1%} of characters"
    )
    q = statistics.quantiles(ratios, n=10)
    print(
        f"per page compact/raw tokens: p10 {q[0]:.2f}, median {statistics.median(ratios):.2f}, "
        f"p90 {q[-1]:.2f} ({len(ratios):,} non-empty pages; {elapsed:.0f} s)"
    )


if __name__ == "__main__":
    main()
