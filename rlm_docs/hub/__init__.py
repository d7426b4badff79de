"""Public benchmarks from the Hugging Face Hub as a store plus a MADQA-schema question file.

`get_benchmark("madqa", out)` writes `out/corpus/` (a store) and `out/questions.jsonl`, which
`rlm-docs eval --dataset out/questions.jsonl --corpus out/corpus` takes as they are; OOLONG,
FinanceBench and MMLongBench-Doc are written as `rlm_docs.hub.get` describes. Downloads
go through `datasets` (the `hub` extra), so they are cached, resumed and shown with progress.
"""

from rlm_docs.hub.get import BENCHMARKS, get_benchmark

__all__ = ["BENCHMARKS", "get_benchmark"]
