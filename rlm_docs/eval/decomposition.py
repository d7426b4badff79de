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
  with `page`/`pages`/`read_section`, named by `search`/`grep`/`locate` results, or covered
  by a `context[a:b]` slice whose bounds are constants in the code (`len(context)` and
  arithmetic allowed); for the baselines, the pages their retrieval or chunking put in a
  prompt (`long-context`: the pages that fitted).
- `corpus_share_read`: the share of the rendered corpus's characters that reached a model: a
  page read or put in a prompt counts whole, a slice counts its characters, a search snippet
  or grep line counts nothing. Text code reads is counted as reaching the model (whether it
  was printed or sent on is not traced). When code uses `context` other than through constant
  slices and `len(context)` (a regex over the whole string, a loop over its lines, slices at
  computed offsets), what it derived cannot be followed through the code, so the text that
  reached a model (sub-call prompts, printed cell output) is aligned back to the corpus
  instead: runs of at least `MATCH_CHARS` characters found verbatim in the rendered corpus
  (seeded at word starts, extended character by character) count their characters and pages.
  Rewritten text and prompt text past the trajectory's prompt cap are not counted, so this is
  a lower bound; on corpora over `MATCH_LIMIT` rendered characters it is not attempted (the
  seed index would cost memory on every eval) and such runs count only what the code shows.
- `cells`, `cell_errors`, `restarts`: code cells run, those that raised, those after which the
  sandbox was restarted (0 for the baselines, which run no model code).
- `cells_unanalysed`: cells whose code is too deeply nested to analyse (the parser runs out of
  recursion or memory, or a slice bound nests past `MAX_BOUND_DEPTH`). Model code is hostile
  and the record must never fail its question, so such a cell counts as using `context` in
  ways the code does not show (the text that reached a model is aligned instead) and its
  helper calls and slices are not seen.
- `strategies`: tags by these rules (a run can have several), checked on the code of every
  cell (root and child runs) and the recorded calls:
  - `search-first`: the first corpus helper the code calls (cells in order, calls in source
    order) is `search`; `bm25-agent` when its first turn searched; `static-rag` always.
  - `grep`: a cell calls `grep`.
  - `direct-read`: a cell calls `page`, `pages` or `read_section`.
  - `context-slicing`: a cell slices `context` (`context[a:b]`, any bounds).
  - `chunked-map`: an `llm_query_batched` call sent two or more prompts.
  - `map-reduce`: a chunked map followed, in the same run, by a single-prompt model call that
    combines the answers (an `llm_query`, or a batch of one); the `map-reduce` baseline's
    reduce call.
  - `recursive`: a child RLM run.
  - `whole-context`: the `long-context` baseline (the corpus, or its prefix, in one call).
  - a fixed program's own tags, which its turns record and its declaration lists
    (`Reading.tags`: `deepread`'s `locate-then-read`, `sleuth`'s `screened-pages`, ...).
  A call is "in the code" when it is written there (`search(...)` or `corpus.search(...)`),
  whether or not that line ran.
"""

import ast
import bisect
import json
import re
import weakref
from collections import Counter
from collections.abc import Iterator
from typing import Any

from rlm_docs import python_ast
from rlm_docs.engine.records import CellResult, Iteration, SubCall, Trajectory
from rlm_docs.engine.trajectory import load_trajectory, write_records
from rlm_docs.errors import ConfigError
from rlm_docs.systems.declaration import CELLS, Reading
from rlm_docs.systems.registry import declaration

FIELDS = (
    "sub_calls",
    "sub_calls_by_depth",
    "batches",
    "fanout_max",
    "fanout_mean",
    "fanouts",
    "child_runs",
    "sub_call_chars",
    "sub_call_tokens",
    "max_sub_call_chars",
    "pages_looked",
    "docs_looked",
    "corpus_share_read",
    "cells",
    "cell_errors",
    "restarts",
    "cells_unanalysed",
    "strategies",
)
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
HELPERS = ("files", "page", "pages", "search", "grep", "locate", "toc", "read_section")
READERS = ("page", "pages", "read_section")
MATCH_CHARS = 32  # shorter runs ("Total", a bare number) say nothing about where they came from
MATCH_LIMIT = 8_000_000  # rendered characters above which text is not aligned to the corpus
_SEED = 16  # characters of a seed window
MAX_BOUND_DEPTH = 100  # nesting of a slice bound's expression past which it is not evaluated


class _Pages:
    """Pages as global indices in corpus order, and their spans in the rendered corpus."""

    def __init__(self, corpus: Any) -> None:
        self.corpus = corpus
        self.names = [d.name for d in corpus.documents]
        self.first: list[int] = []
        total = 0
        for d in corpus.documents:
            self.first.append(total)
            total += d.num_pages
        self.total = total
        self.index = {name: i for i, name in enumerate(self.names)}
        self.length = corpus.rendered_chars

    def of(self, doc: Any, page: Any) -> int | None:
        """The global index of (doc, page); None when either is not in the corpus."""
        name = self.corpus.resolve(str(doc))
        d = self.index.get(name) if name is not None else None
        if d is None or isinstance(page, bool) or not isinstance(page, int):
            return None
        count = (self.first[d + 1] if d + 1 < len(self.first) else self.total) - self.first[d]
        return self.first[d] + page - 1 if 1 <= page <= count else None

    def doc(self, g: int) -> int:
        return bisect.bisect_right(self.first, g) - 1

    def start(self, g: int) -> int:
        """Where page `g`'s text begins in the rendered corpus (the end of page g - 1)."""
        if g >= self.total:
            return self.length
        d = self.doc(g)
        return self.corpus.page_offset(self.names[d], g - self.first[d] + 1)

    def at(self, offset: int) -> int:
        name, page = self.corpus.locate(offset)
        return self.first[self.index[name]] + page - 1


_SEEDS: "weakref.WeakKeyDictionary[Any, dict[int, int]]" = weakref.WeakKeyDictionary()
_WORD = re.compile(r"\b\w")


def _seeds(corpus: Any) -> dict[int, int]:
    """{hash of the `_SEED` characters at a word start: the first offset they occur at} over
    the rendered corpus, built once per corpus object."""
    seeds = _SEEDS.get(corpus)
    if seeds is None:
        text = corpus.render()
        seeds = {}
        for m in _WORD.finditer(text):
            seeds.setdefault(hash(text[m.start() : m.start() + _SEED]), m.start())
        _SEEDS[corpus] = seeds
    return seeds


def _common(a: str, i: int, b: str, j: int) -> int:
    """How many characters `a[i:]` and `b[j:]` share from their start."""
    n, step = 0, 64
    while step:
        if a[i + n : i + n + step] == b[j + n : j + n + step] and i + n + step <= len(a):
            n += step
        else:
            step //= 2
    while i + n < len(a) and j + n < len(b) and a[i + n] == b[j + n]:
        n += 1
    return n


class _Looked:
    """What one question's run looked at: page indices and rendered-corpus intervals."""

    def __init__(self, pages: _Pages | None) -> None:
        self.pages = pages
        self.seen: set[int] = set()
        self.spans: list[tuple[int, int]] = []

    def page(self, doc: Any, page: Any, read: bool) -> None:
        if self.pages is None:
            return
        g = self.pages.of(doc, page)
        if g is not None:
            self.seen.add(g)
            if read:
                self.spans.append((self.pages.start(g), self.pages.start(g + 1)))

    def page_range(self, first: int, last: int) -> None:
        """Pages `first`..`last` (global indices), read whole."""
        if self.pages is None or last < first:
            return
        self.seen.update(range(first, last + 1))
        self.spans.append((self.pages.start(first), self.pages.start(last + 1)))

    def chars(self, a: int, b: int) -> None:
        """Characters `a:b` of the rendered corpus (a slice of `context`)."""
        if self.pages is None or b <= a:
            return
        self.seen.update(range(self.pages.at(a), self.pages.at(b - 1) + 1))
        self.spans.append((a, b))

    def matched(self, texts: list[str]) -> None:
        """Runs of corpus text found verbatim in `texts` (see the module docstring)."""
        if self.pages is None or not texts or self.pages.length > MATCH_LIMIT:
            return
        corpus = self.pages.corpus.render()
        seeds = _seeds(self.pages.corpus)
        for text in texts:
            pos = 0
            for m in _WORD.finditer(text):
                j = m.start()
                if j < pos:
                    continue
                i = seeds.get(hash(text[j : j + _SEED]))
                if i is None:
                    continue
                n = _common(text, j, corpus, i)
                if n >= MATCH_CHARS:
                    self.chars(i, i + n)
                    pos = j + n

    def share(self) -> float:
        if self.pages is None or not self.pages.length:
            return 0.0
        covered, end = 0, 0
        for a, b in sorted(self.spans):
            a = max(a, end)
            if b > a:
                covered += b - a
                end = b
        return round(covered / self.pages.length, 6)

    def docs(self) -> int:
        if self.pages is None:
            return 0
        return len({self.pages.doc(g) for g in self.seen})


def _sizes(result: CellResult) -> dict[int, int]:
    """{batch number: prompts} of a cell's `llm_query_batched` calls (`batches` in its record)."""
    pairs = result.extra.get("batches")
    return (
        {
            n: size
            for n, size in (pair for pair in pairs if isinstance(pair, list) and len(pair) == 2)
            if isinstance(n, int) and isinstance(size, int)
        }
        if isinstance(pairs, list)
        else {}
    )


def _prompt_chars(call: SubCall) -> int:
    return call.prompt_chars if call.prompt_chars is not None else len(call.prompt or "")


class _TooDeep(Exception):
    """A slice bound nested past `MAX_BOUND_DEPTH`."""


class _Const:
    """The value of a slice bound built from int constants, `len(context)`, + - * //."""

    def __init__(self, length: int) -> None:
        self.length = length

    def value(self, node: ast.AST | None, depth: int = 0) -> int | None:
        """The bound's value; None when it is not constant; `_TooDeep` past the depth limit."""
        if node is None:
            return None
        if depth > MAX_BOUND_DEPTH:
            raise _TooDeep
        if isinstance(node, ast.Constant) and type(node.value) is int:
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.value(node.operand, depth + 1)
            return None if inner is None else -inner
        if isinstance(node, ast.Call) and _name(node.func) == "len" and len(node.args) == 1:
            return self.length if _name(node.args[0]) == "context" else None
        if isinstance(node, ast.BinOp):
            a, b = self.value(node.left, depth + 1), self.value(node.right, depth + 1)
            if a is None or b is None:
                return None
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if isinstance(node.op, ast.FloorDiv):
                return a // b if b else None
            return ops.get(type(node.op))
        return None


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _helper(call: ast.Call) -> str | None:
    """`search` for `search(...)` and `corpus.search(...)`; None for anything else."""
    func = call.func
    if isinstance(func, ast.Name) and func.id in HELPERS:
        return func.id
    if isinstance(func, ast.Attribute) and _name(func.value) == "corpus":
        return func.attr if func.attr in HELPERS else None
    return None


class _Code:
    """What the cells of one question call and slice (see the module docstring)."""

    def __init__(self) -> None:
        self.helpers: list[str] = []  # corpus helpers called, cells in order, source order
        self.slices = 0
        self.untraced = False  # `context` used other than by constant slices and len(context)
        self.unanalysed = 0  # cells too deeply nested to analyse

    def add(self, code: str, context_chars: int | None) -> list[tuple[int, int]]:
        """Note a cell's helper calls and slices; the `(start, stop)` of its slices of
        `context` whose bounds are constants (none when `context_chars` is None). A cell too
        deeply nested to analyse counts in `unanalysed` and as untraced use of `context`."""
        try:
            return self._add(code, context_chars)
        except (RecursionError, MemoryError, _TooDeep):
            self.unanalysed += 1
            self.untraced = True
            return []

    def _add(self, code: str, context_chars: int | None) -> list[tuple[int, int]]:
        try:
            tree = python_ast.parse(code)
        except (SyntaxError, ValueError):
            return []
        calls, constant, slices = [], [], 0
        followed: set[int] = set()  # ids of `context` names the analysis accounts for
        uses: list[ast.AST] = []  # every `context` name in the cell
        for node in ast.walk(tree):
            if _name(node) == "context":
                uses.append(node)
            if isinstance(node, ast.Call) and _name(node.func) == "len" and len(node.args) == 1:
                followed.add(id(node.args[0]))
            if isinstance(node, ast.Call) and _helper(node):
                calls.append((node.lineno, node.col_offset, _helper(node)))
            if (
                isinstance(node, ast.Subscript)
                and _name(node.value) == "context"
                and isinstance(node.slice, ast.Slice)
            ):
                slices += 1
                if context_chars is not None and node.slice.step is None:
                    const = _Const(context_chars)
                    lower, upper = node.slice.lower, node.slice.upper
                    a, b = const.value(lower), const.value(upper)
                    if (lower is None or a is not None) and (upper is None or b is not None):
                        start, stop, _ = slice(a, b).indices(context_chars)
                        constant.append((start, stop))
                        followed.add(id(node.value))
        self.untraced |= any(id(node) not in followed for node in uses)
        self.helpers += [name for *_, name in sorted(calls)]
        self.slices += slices
        return constant


class _Walk:
    """Totals over a run's trajectory and its child runs' nested trajectories."""

    def __init__(self, pages: _Pages | None) -> None:
        self.pages = pages
        self.looked = _Looked(pages)
        self.code = _Code()
        self.fanouts: list[int] = []
        self.prompt_chars: list[int] = []
        self.child_runs = self.cells = self.cell_errors = self.restarts = 0
        self.texts: list[str] = []  # what reached a model: sub-call prompts, printed output
        self.tags: set[str] = set()

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
            for doc, page in _pairs(result.extra.get("read")):
                self.looked.page(doc, page, read=True)
            for doc, page in _pairs(result.extra.get("seen")):
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
            first = reading.search_first == "any-turn" or (n == 0 and reading.search_first)
            if found and first:
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

    def strategies(self) -> list[str]:
        tags = set(self.tags)
        helpers = self.code.helpers
        if helpers and helpers[0] == "search":
            tags.add("search-first")
        if "grep" in helpers:
            tags.add("grep")
        if any(h in READERS for h in helpers):
            tags.add("direct-read")
        if self.code.slices:
            tags.add("context-slicing")
        if self.child_runs:
            tags.add("recursive")
        return [t for t in STRATEGIES if t in tags] + sorted(tags.difference(STRATEGIES))


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
) -> dict[str, Any]:
    """The decomposition record (`FIELDS`) of one question from its `trajectory` (the root
    run's, child runs nested in it; None: the ledger's figures alone), its `ledger` entries
    (dicts) and the `corpus` it ran on (None: pages are not mapped, the page fields are 0)."""
    walk = _Walk(_Pages(corpus) if corpus is not None else None)
    if trajectory is not None:
        walk.run(trajectory)
        if walk.code.untraced:
            walk.looked.matched(walk.texts)
    subs = [e for e in ledger if e.get("role") == "sub"]
    depths = Counter(int(e.get("depth") or 0) for e in subs)
    fanouts = walk.fanouts
    return {
        "sub_calls": len(subs),
        "sub_calls_by_depth": {str(d): depths[d] for d in sorted(depths)},
        "batches": len(fanouts),
        "fanout_max": max(fanouts, default=0),
        "fanout_mean": round(sum(fanouts) / len(fanouts), 4) if fanouts else 0.0,
        "fanouts": fanouts,
        "child_runs": walk.child_runs,
        "sub_call_chars": sum(walk.prompt_chars),
        "sub_call_tokens": sum(int(e.get("input_tokens") or 0) for e in subs),
        "max_sub_call_chars": max(walk.prompt_chars, default=0),
        "pages_looked": len(walk.looked.seen),
        "docs_looked": walk.looked.docs(),
        "corpus_share_read": walk.looked.share(),
        "cells": walk.cells,
        "cell_errors": walk.cell_errors,
        "restarts": walk.restarts,
        "cells_unanalysed": walk.code.unanalysed,
        "strategies": walk.strategies(),
    }


def flat_columns(record: dict[str, Any] | None) -> dict[str, Any]:
    """The decomposition as flat `predictions.parquet` columns (`sub_calls_by_depth` as JSON
    text); every field None when there is no record (a run made before it existed)."""
    if record is None:
        return dict.fromkeys(FIELDS)
    flat = {k: record.get(k) for k in FIELDS}
    flat["sub_calls_by_depth"] = json.dumps(record.get("sub_calls_by_depth") or {})
    return flat


def record_decomposition(
    trajectory: str | None, ledger: list[dict[str, Any]], corpus: Any
) -> dict[str, Any]:
    """Decompose one question and store the record as `decomposition` in its trajectory file's
    result record (rewritten atomically); with no trajectory file, from the ledger alone."""
    if not trajectory:
        return decompose(None, ledger, corpus)
    traj = load_trajectory(trajectory)
    record = decompose(traj, ledger, corpus)
    if traj.result is not None:
        traj.result.extra["decomposition"] = record
        write_records(trajectory, traj.to_records())
    return record
