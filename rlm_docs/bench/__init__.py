"""Generated workloads where decomposition pays (`rlm-docs bench make KIND`).

- `oolong`: OOLONG-style aggregation over TREC-coarse questions (`oolong.py`);
- `oolong-pairs`: the RLM paper's quadratic pair tasks on the same windows (`pairs.py`);
- `needle`: planted facts in filler made of real page text (`needle.py`).

Every generator is a pure function of its parameters and seed, so the same command writes
the same bytes; `output.py` writes each part (corpus store, questions, manifest) atomically.
"""

KINDS = ("oolong", "oolong-pairs", "needle")
GENERATOR = "rlm-docs.bench"
VERSION = 1
