"""Strategy tags of a run: the strategy-tagging part of the decomposition record
(`rlm_docs.eval.decomposition`).

A run can have several tags, by these rules, checked on the code of every cell (root and child
runs; `rlm_docs.eval.decomposition_code`) and the recorded calls:

- `search-first`: the first corpus helper the code calls (cells in order, calls in source
  order) is `search`; `bm25-agent` when its first turn searched; `static-rag` always.
- `grep`: a cell calls `grep`.
- `direct-read`: a cell calls `page`, `pages`, `lines` or `read_section`.
- `context-slicing`: a cell slices `context` (`context[a:b]`, any bounds).
- `chunked-map`: an `llm_query_batched` call sent two or more prompts.
- `map-reduce`: a chunked map followed, in the same run, by a single-prompt model call that
  combines the answers (an `llm_query`, or a batch of one); the `map-reduce` baseline's reduce
  call.
- `recursive`: a child RLM run.
- `whole-context`: the `long-context` baseline (the corpus, or its prefix, in one call).
- a fixed program's own tags, which its turns record and its declaration lists
  (`Reading.tags`: `deepread`'s `locate-then-read`, `sleuth`'s `screened-pages`, ...), after
  the tags above, sorted.

The call-order tags (`chunked-map`, `map-reduce`, `search-first` of a fixed program,
`whole-context`) are noted while the trajectory is walked; `strategies` adds those the code
shows and orders them.
"""

from rlm_docs.eval.decomposition_code import READERS, CodeFacts

STRATEGIES = (
    "search-first",
    "grep",
    "direct-read",
    "context-slicing",
    "chunked-map",
    "map-reduce",
    "recursive",
    "whole-context",
)


def strategies(noted: set[str], code: CodeFacts, child_runs: int) -> list[str]:
    """The run's tags in `STRATEGIES` order (then a system's own, sorted): those `noted` from
    its calls and turns plus those its `code` and child runs show."""
    tags = set(noted)
    helpers = code.helpers
    if helpers and helpers[0] == "search":
        tags.add("search-first")
    if "grep" in helpers:
        tags.add("grep")
    if any(h in READERS for h in helpers):
        tags.add("direct-read")
    if code.slices:
        tags.add("context-slicing")
    if child_runs:
        tags.add("recursive")
    return [t for t in STRATEGIES if t in tags] + sorted(tags.difference(STRATEGIES))
