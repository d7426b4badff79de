"""The decomposition record of one question: how a run cut the corpus, from its logs alone.

Researchers want to see how a model decomposed the corpus, not only whether it was right, so
every question of an eval run gets one record, computed after the run from its trajectory and
the ledger (no model call), for every system. It is stored as `decomposition` in the
trajectory's result record and as flat columns of `predictions.parquet` (`flat_columns`).

Fields (`FIELDS`), all counted over the root run and every child run:
- `sub_calls`, `sub_calls_by_depth`: ledger entries of role `sub` (sub-model calls, failed
  ones included), in all and by depth; `sub_call_tokens`: their input tokens.
- `batches`, `fanouts`, `fanout_max`, `fanout_mean`: one fan-out per `llm_query_batched` call
  that got past the budget's size check (its number of prompts), in run order.
- `child_runs`: `rlm_query` calls that ran a child RLM (at the depth limit `rlm_query` is a
  plain sub-call and is not counted).
- `sub_call_chars`, `max_sub_call_chars`: characters of the recorded `llm_query` prompts, in
  all and the largest (calls past the trajectory's per-cell record limit are not seen).
- `pages_looked`, `docs_looked`: distinct pages (and their documents) the run looked at: read
  with `page`/`pages`/`lines`/`read_section`, named by `search`/`grep`/`locate` results, or covered
  by a `context[a:b]` slice whose bounds are constants in the code (`len(context)` and
  arithmetic allowed); for the baselines, the pages their retrieval or chunking put in a
  prompt (`long-context`: the pages that fitted).
- `corpus_share_read`: the share of the rendered corpus's characters that reached a model: a
  page read or put in a prompt counts whole, a slice counts its characters, a search snippet
  or grep line counts nothing. Text code reads is counted as reaching the model (whether it
  was printed or sent on is not traced). When code uses `context` other than through constant
  slices and `len(context)`, the text that reached a model is aligned back to the corpus,
  verbatim and line by line (`rlm_docs.eval.decomposition_align`): a lower bound.
- `cells`, `cell_errors`, `restarts`: code cells run, those that raised, those after which the
  sandbox was restarted (0 for the baselines, which run no model code).
- `cells_unanalysed`: cells whose code is too deeply nested to analyse (the parser runs out of
  recursion or memory, or a slice bound nests past `MAX_BOUND_DEPTH`). Model code is hostile
  and the record must never fail its question, so such a cell counts as using `context` in
  ways the code does not show (the text that reached a model is aligned instead) and its
  helper calls and slices are not seen.
- `strategies`: tags by the rules of `rlm_docs.eval.decomposition_strategies`.

The jobs live in modules of their own: what the code calls and slices
(`decomposition_code`), which corpus text reached a model (`decomposition_align`), the strategy
tags (`decomposition_strategies`) and storing the record in the trajectory file
(`decomposition_file`); this module walks a trajectory through them and types the record.
"""

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from rlm_docs.engine.records import CellResult, Iteration, SubCall, Trajectory
from rlm_docs.errors import ConfigError
from rlm_docs.eval.decomposition_align import Looked, PageMap
from rlm_docs.eval.decomposition_code import CodeFacts
from rlm_docs.eval.decomposition_strategies import strategies
from rlm_docs.systems.declaration import CELLS, Reading
from rlm_docs.systems.registry import declaration


@dataclass
class Decomposition:
    """One question's decomposition record (the fields are described in the module docstring);
    `to_dict` is its stored form, `from_dict` reads it back."""

    sub_calls: int = 0
    sub_calls_by_depth: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    fanout_max: int = 0
    fanout_mean: float = 0.0
    fanouts: list[int] = field(default_factory=list)
    child_runs: int = 0
    sub_call_chars: int = 0
    sub_call_tokens: int = 0
    max_sub_call_chars: int = 0
    pages_looked: int = 0
    docs_looked: int = 0
    corpus_share_read: float = 0.0
    cells: int = 0
    cell_errors: int = 0
    restarts: int = 0
    cells_unanalysed: int = 0
    strategies: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Decomposition":
        """The record of a stored `data` (keys it does not know are ignored)."""
        return cls(**{k: data[k] for k in FIELDS if k in data})


FIELDS = tuple(f.name for f in fields(Decomposition))


def _sizes(result: CellResult) -> dict[int, int]:
    """{batch number: prompts} of a cell's `llm_query_batched` calls (its `batches`)."""
    pairs = result.batches if isinstance(result.batches, list) else []
    return {
        n: size
        for n, size in (pair for pair in pairs if isinstance(pair, list) and len(pair) == 2)
        if isinstance(n, int) and isinstance(size, int)
    }


def _prompt_chars(call: SubCall) -> int:
    return call.prompt_chars if call.prompt_chars is not None else len(call.prompt or "")


class _Walk:
    """Totals over a run's trajectory and its child runs' nested trajectories."""

    def __init__(self, pages: PageMap | None) -> None:
        self.pages = pages
        self.looked = Looked(pages)
        self.code = CodeFacts()
        self.fanouts: list[int] = []
        self.prompt_chars: list[int] = []
        self.child_runs = self.cells = self.cell_errors = self.restarts = 0
        self.texts: list[str] = []  # what reached a model: sub-call prompts, printed output
        self.tags: set[str] = set()  # tags noted from the calls (see decomposition_strategies)

    def run(self, traj: Trajectory) -> None:
        reading = _reading(traj.metadata.system)
        if not reading.cells:
            self._turns(reading, traj.iterations)
            return
        env = traj.metadata.environment_kwargs or {}
        length = self.pages.length if env.get("corpus") and self.pages is not None else None
        mapped = False  # a batch of two or more was sent earlier in this run
        for block in traj.code_blocks:
            result = block.result
            self.cells += 1
            self.cell_errors += bool(result.stderr)
            self.restarts += bool(result.restarted)
            for a, b in self.code.add(block.code, length):
                self.looked.chars(a, b)
            for doc, page in _pairs(result.read):
                self.looked.page(doc, page, read=True)
            for doc, page in _pairs(result.seen):
                self.looked.page(doc, page, read=False)
            sizes = _sizes(result)
            self.fanouts += list(sizes.values())
            mapped = self._calls(result.sub_calls, sizes, mapped)
            self.texts.append(result.stdout or "")

    def _calls(self, calls: list[SubCall], sizes: dict[int, int], mapped: bool) -> bool:
        """Count one cell's calls; whether a chunked map has been sent by their end."""
        for call in calls:
            if call.kind == "rlm_query" and call.child is not None:
                self.child_runs += 1
                self.run(call.child)
                continue
            self.prompt_chars.append(_prompt_chars(call))
            self.texts.append(call.prompt or "")
            size = sizes.get(call.batch, 1) if call.batch is not None else 1
            if size >= 2:
                mapped = True
                self.tags.add("chunked-map")
            elif mapped:
                self.tags.add("map-reduce")
        return mapped

    def _turns(self, reading: Reading, iterations: list[Iteration]) -> None:
        """A fixed program's turns, read as its declaration says (`Reading`)."""
        for n, it in enumerate(iterations):
            found = (it.extra.get("search") or {}).get("results") or []
            leads = reading.search_first == "any-turn" or (n == 0 and reading.search_first)
            if found and leads:
                self.tags.add("search-first")
            for doc, page in [*_pairs(found), *_pairs(it.extra.get("read"))]:
                self.looked.page(doc, page, read=True)
            self.tags.update(t for t in it.extra.get("tags") or () if t in reading.tags)
            kept = (it.extra.get("context") or {}).get("pages_kept")
            if reading.whole_context and isinstance(kept, int):
                self.tags.add("whole-context")
                self.looked.page_range(0, kept - 1)
            for block in it.code_blocks:
                sizes = _sizes(block.result)
                self.fanouts += list(sizes.values())
                if any(size >= 2 for size in sizes.values()):
                    self.tags.add("chunked-map")
                for call in block.result.sub_calls:
                    self.prompt_chars.append(_prompt_chars(call))
                    span = list(_pairs(call.extra.get("span")))
                    if self.pages is not None and len(span) == 2:
                        first, last = (self.pages.of(*p) for p in span)
                        if first is not None and last is not None:
                            self.looked.page_range(first, last)
            if reading.reduce_after_map and "chunked-map" in self.tags and it.response:
                self.tags.add("map-reduce")


def _reading(system: str | None) -> Reading:
    """How `system`'s trajectory is read; an engine run when the trajectory names none (an
    `ask` log) or a system no longer registered."""
    if not system:
        return CELLS
    try:
        return declaration(system).reading
    except ConfigError:
        return CELLS


def _pairs(items: Any) -> Iterator[tuple[Any, Any]]:
    """(doc, page) of `[[doc, page], ...]` or `[{file, page}, ...]` lists."""
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict):
            yield item.get("file"), item.get("page")
        elif isinstance(item, list | tuple) and len(item) == 2:
            yield item[0], item[1]


def decompose(
    trajectory: Trajectory | None, ledger: list[dict[str, Any]], corpus: Any = None
) -> Decomposition:
    """The decomposition record of one question from its `trajectory` (the root run's, child
    runs nested in it; None: the ledger's figures alone), its `ledger` entries (dicts) and the
    `corpus` it ran on (None: pages are not mapped, the page fields are 0)."""
    walk = _Walk(PageMap(corpus) if corpus is not None else None)
    if trajectory is not None:
        walk.run(trajectory)
        if walk.code.untraced:
            walk.looked.matched(walk.texts)
    subs = [e for e in ledger if e.get("role") == "sub"]
    depths = Counter(int(e.get("depth") or 0) for e in subs)
    fanouts = walk.fanouts
    return Decomposition(
        sub_calls=len(subs),
        sub_calls_by_depth={str(d): depths[d] for d in sorted(depths)},
        batches=len(fanouts),
        fanout_max=max(fanouts, default=0),
        fanout_mean=round(sum(fanouts) / len(fanouts), 4) if fanouts else 0.0,
        fanouts=fanouts,
        child_runs=walk.child_runs,
        sub_call_chars=sum(walk.prompt_chars),
        sub_call_tokens=sum(int(e.get("input_tokens") or 0) for e in subs),
        max_sub_call_chars=max(walk.prompt_chars, default=0),
        pages_looked=len(walk.looked.seen),
        docs_looked=walk.looked.docs(),
        corpus_share_read=walk.looked.share(),
        cells=walk.cells,
        cell_errors=walk.cell_errors,
        restarts=walk.restarts,
        cells_unanalysed=walk.code.unanalysed,
        strategies=strategies(walk.tags, walk.code, walk.child_runs),
    )


def flat_columns(record: Decomposition | None) -> dict[str, Any]:
    """The decomposition as flat `predictions.parquet` columns (`sub_calls_by_depth` as JSON
    text); every field None when there is no record (a run made before it existed)."""
    if record is None:
        return dict.fromkeys(FIELDS)
    flat = record.to_dict()
    flat["sub_calls_by_depth"] = json.dumps(record.sub_calls_by_depth)
    return flat
