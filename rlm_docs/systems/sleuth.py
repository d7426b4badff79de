"""`sleuth`: SLEUTH's fixed coarse-to-fine pipeline, on text (OCR'd pages, no page images).

1. The top-K pages for the question (K = 5; the corpus's page search).
2. For each page, in parallel, two sub-calls: clue discovery (structured clues: location,
   content, key insight; `CLUE:` lines) and page screening (a label, CR critically relevant,
   R relevant or IR irrelevant, with a reason).
3. IR pages are dropped; when every page is IR, only the clues are kept, and the decision
   prompt says so (tag `clues-only`).
4. A difficulty-assessment sub-call writes a strategy from the clues and labels.
5. The decision call (the one root step) answers from the distilled context (the kept pages,
   their labels and clues) and the strategy, with an evidence table (page, evidence, source)
   in its JSON reply.

Every call goes through the governor. The page calls are sent as one batch sized to the
sub-calls left (pages in rank order, each page's two calls together), so a sub-call limit
screens a prefix of the pages; a cut pipeline still decides from what it has, as a `forced`
stop on the limit's axis (`budget` when the decision call itself is refused). A page whose
screening reply has no label is kept as R and its reason says so. The trajectory's one turn
holds the page search (`search`), the sub-calls (code blocks), the screening (`screening`),
the strategy and the evidence table; tags `screened-pages` (and `clues-only`).
"""

import json
import re
import time
from dataclasses import dataclass

from rlm_docs.call_purpose import Purpose
from rlm_docs.corpus.render import page_block
from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.host_functions import HostFunctions
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import CellResult, CodeBlock
from rlm_docs.governor import Budget, BudgetExceeded, Governor
from rlm_docs.offline.sleuth import clue_reply, decide_reply, difficulty_reply, screen_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig, answer_call, finish, new_trajectory
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format
from rlm_docs.templates import render

LABELS = ("CR", "R", "IR")
SCREENED, CLUES_ONLY = "screened-pages", "clues-only"
REFUSED = "Error: BudgetExceeded"
# Linear on any reply: each anchored at a line start or a word, no quantifier crosses a line.
_LABEL = re.compile(r"^[ \t*]*LABEL[ \t*]*:[ \t*]*(CR|R|IR)\b", re.M | re.I)
_BARE = re.compile(r"\b(CR|IR|R)\b")
_REASON = re.compile(r"^[ \t*]*REASON[ \t*]*:[ \t]*(.*)$", re.M | re.I)
_CLUE = re.compile(r"^[ \t*-]*CLUE[ \t*]*:[ \t]*(.*)$", re.M | re.I)
_STRATEGY = re.compile(r"^[ \t*]*STRATEGY[ \t*]*:[ \t]*(.*)$", re.M | re.I)
_DIFFICULTY = re.compile(r"^[ \t*]*DIFFICULTY[ \t*]*:[ \t]*(\w+)", re.M | re.I)


@dataclass(frozen=True)
class SleuthOptions:
    k: int = option(5, flag="--top-k", recorded="always", help="pages per search")
    max_page_chars: int = option(8000)


@dataclass
class Page:
    """One retrieved page through the pipeline."""

    file: str
    page: int
    text: str
    clues: list[dict[str, str]]
    label: str = "R"
    reason: str = ""
    screened: bool = False


def parse_label(reply: str) -> tuple[str | None, str]:
    """(CR, R or IR, or None when the reply gives none; the reason)."""
    found = _LABEL.search(reply) or _BARE.search(reply)
    reason = _REASON.search(reply)
    label = found.group(1).upper() if found else None
    return label, (reason.group(1).strip() if reason else reply.strip()[:300])


def parse_clues(reply: str) -> list[dict[str, str]]:
    """`CLUE: location: .. | content: .. | insight: ..` lines as dicts (`CLUE: none`: none); a
    reply without `CLUE:` lines is one clue of free text."""
    lines = _CLUE.findall(reply)
    if not lines:
        text = reply.strip()
        return [{"content": text[:1000]}] if text and not text.startswith(REFUSED) else []
    clues = []
    for line in lines:
        if line.strip().lower() in ("none", "none."):
            continue
        clue: dict[str, str] = {}
        for part in line.split("|"):
            key, sep, value = part.partition(":")
            name = key.strip().lower().replace("key insight", "insight")
            if sep and name in ("location", "content", "insight"):
                clue[name] = value.strip()
            else:
                clue["content"] = (clue.get("content", "") + " " + part.strip()).strip()
        clues.append(clue)
    return clues


def _clue_text(clues: list[dict[str, str]]) -> str:
    return "\n".join(
        "- " + " | ".join(f"{k}: {c[k]}" for k in ("location", "content", "insight") if k in c)
        for c in clues
    )


def evidence_table(reply: str) -> list[dict[str, str]]:
    """The `evidence` rows of a decision reply's JSON ([] when it has none)."""
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end <= start:
        return []
    try:
        value = json.loads(reply[start : end + 1])
    except (ValueError, RecursionError):
        return []
    rows = value.get("evidence") if isinstance(value, dict) else None
    if not isinstance(rows, list):
        return []
    keys = ("page", "evidence", "source")
    return [{k: str(r.get(k, "")) for k in keys} for r in rows if isinstance(r, dict)]


class Sleuth:
    """Retrieve, discover clues and screen per page, assess, decide (module docstring)."""

    name = "sleuth"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client, self.sub_client = config.clients()
        self.options = DECLARATION.typed(config.options)

    def _pages(self, question: str, host: HostFunctions, governor: Governor) -> tuple[
        list[Page], str | None
    ]:  # fmt: skip
        """The top-K pages with their clues and labels (those the budget let through), and the
        axis that cut the page calls short (None when every page was read)."""
        hits = self.corpus.search(question, k=self.options.k)
        pages = [Page(h.document, h.page, self.corpus.page(h.document, h.page), []) for h in hits]
        limit = governor.budget.max_sub_calls
        left = len(pages) if limit is None else (limit - governor.totals()["sub_calls"]) // 2
        cut: str | None = "sub_calls" if left < len(pages) else None
        asked = pages[: max(left, 0)]
        prompts = []
        for p in asked:
            block = page_block(p.file, p.page, p.text, self.options.max_page_chars)
            for kind in ("clue", "screen"):
                prompts.append(render(f"sleuth_{kind}", page=block, question=question))
                host.purposes[prompts[-1]] = Purpose("sub", self.name, f"sleuth-{kind}", question)
        replies: list[str] = []
        if prompts:
            try:
                replies = host.llm_query_batched(prompts)
            except BudgetExceeded as exc:
                replies, cut = [], exc.axis
        for i, p in enumerate(asked[: len(replies) // 2]):
            clue, screen = replies[2 * i], replies[2 * i + 1]
            if clue.startswith(REFUSED) or screen.startswith(REFUSED):
                cut = cut or _axis(clue if clue.startswith(REFUSED) else screen)
            p.clues = parse_clues(clue)
            if screen.startswith(REFUSED):
                p.reason = "(not screened: the budget refused the call; kept)"
                continue
            label, reason = parse_label(screen)
            p.label = label or "R"
            p.reason = reason if label else f"(no label given: kept) {reason}"
            p.screened = True
        return [p for p in asked if p.screened or p.clues], cut

    def _context(self, pages: list[Page]) -> tuple[str, bool]:
        """The distilled context, and whether only clues are left (every page IR)."""
        kept = [p for p in pages if p.label != "IR"]
        if not kept:
            clues = [
                f"[FILE: {p.file} | PAGE: {p.page}] clues:\n{_clue_text(p.clues) or '- none'}"
                for p in pages
            ]
            head = (
                f"All {len(pages)} retrieved pages were judged irrelevant (IR); only the clues "
                "found on them are kept:"
                if pages
                else "No page was retrieved."
            )
            return head + "\n\n" + "\n\n".join(clues), True
        kept.sort(key=lambda p: LABELS.index(p.label))
        blocks = []
        for p in kept:
            blocks.append(
                f"Label: {p.label} ({p.reason})\n"
                + page_block(p.file, p.page, p.text, self.options.max_page_chars)
                + f"\nClues:\n{_clue_text(p.clues) or '- none'}"
            )
        dropped = len(pages) - len(kept)
        note = f"({dropped} page(s) judged irrelevant were dropped.)\n\n" if dropped else ""
        return note + "\n\n".join(blocks), False

    def _strategy(
        self, question: str, pages: list[Page], host: HostFunctions
    ) -> tuple[str | None, str | None]:
        """The difficulty-assessment call's strategy, or None and the axis of the budget that
        refused it."""
        summary = "\n\n".join(
            f"[FILE: {p.file} | PAGE: {p.page}] label {p.label}: {p.reason}\n"
            + (_clue_text(p.clues) or "- no clue")
            for p in pages
        )
        prompt = render("sleuth_difficulty", clues=summary or "(no page)", question=question)
        host.purposes[prompt] = Purpose("sub", self.name, "sleuth-difficulty", question)
        try:
            reply = host.llm_query(prompt)
        except BudgetExceeded as exc:
            return None, exc.axis
        found = _STRATEGY.search(reply)
        level = _DIFFICULTY.search(reply)
        strategy = found.group(1).strip() if found else reply.strip()
        return (f"({level.group(1).lower()}) {strategy}" if level else strategy), None

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """The pipeline; budget cuts decide from what was gathered (module docstring)."""
        start = time.perf_counter()
        trajectory = new_trajectory(self.config, self.name, question, k=self.options.k)
        prediction = Prediction(question=question.question, question_id=question.id)
        record = trajectory.iteration([{"role": "user", "content": question.question}])
        host = HostFunctions(governor, self.sub_client, corpus=self.corpus)
        try:
            host.start_block()
            pages, cut = self._pages(question.question, host, governor)
            record.code_blocks.append(
                CodeBlock(
                    "# clue discovery and page screening, per page in parallel",
                    CellResult(sub_calls=host.calls, batches=host.block_batches),
                )
            )
            host.start_block()
            strategy, refused = self._strategy(question.question, pages, host)
            record.code_blocks.append(
                CodeBlock("# difficulty assessment", CellResult(sub_calls=host.calls))
            )
        except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
            prediction.stop_reason, prediction.error = "error", f"{type(exc).__name__}: {exc}"
            trajectory.close(record)
            return finish(self.config, trajectory, governor, prediction, start)
        cut = cut or refused
        context, clues_only = self._context(pages)
        record.extra["search"] = {
            "query": question.question,
            "results": [[p.file, p.page] for p in pages],
        }
        record.extra["screening"] = [
            {"file": p.file, "page": p.page, "label": p.label, "reason": p.reason,
             "clues": len(p.clues)} for p in pages
        ]  # fmt: skip
        record.extra["strategy"] = strategy
        record.extra["tags"] = [SCREENED] + [CLUES_ONLY] * clues_only
        prompt = render(
            "sleuth_decide",
            context=context,
            strategy=strategy or "(none: the budget refused the difficulty assessment)",
            question=question.question,
            answer_format=answer_format("the evidence"),
        )
        messages = [{"role": "user", "content": prompt}]
        record.prompt = messages
        decide = Purpose("root", self.name, "sleuth-decide", question.question)
        reply = answer_call(
            self.client, trajectory, governor, messages, record, prediction, purpose=decide
        )
        if reply is not None:
            table = evidence_table(prediction.raw_answer)
            record.extra["evidence"] = table
            prediction.info = {"evidence": table, "screening": record.extra["screening"]}
            prediction.citations, _ = validate(self.corpus, reply.answer.citations)
            if cut is not None:  # decided from what the budget let through
                prediction.stop_reason, prediction.stop_axis = "forced", cut
        return finish(self.config, trajectory, governor, prediction, start)


def _axis(refused: str) -> str:
    """The axis named in a refused sub-call's error string (`sub_calls` when none is)."""
    for axis in ("sub_calls", "input_tokens", "output_tokens", "cost_usd", "wall_s"):
        if axis in refused:
            return axis
    return "sub_calls"


def _calls(budget: Budget, options: SleuthOptions) -> Bound:
    """Two sub-calls per page and the difficulty call (at most `--max-sub-calls`), plus the
    decision call."""
    subs = 2 * options.k + 1
    if budget.max_sub_calls is not None:
        subs = min(subs, budget.max_sub_calls)
    return Bound(subs + 1)


DECLARATION = register(
    Declaration(
        name=Sleuth.name,
        summary="SLEUTH's coarse-to-fine pipeline: the top-K pages; per page in parallel a "
        "clue-discovery and a page-screening sub-call (CR / R / IR with a reason); IR pages "
        "dropped (all IR: clues only); a difficulty-assessment sub-call writes a strategy; "
        "one decision call answers with an evidence table",
        settings="top-K = {k} pages, each cut at {max_page_chars} characters; 2K + 1 sub-calls "
        "and one decision call",
        factory=Sleuth,
        options=SleuthOptions,
        calls=_calls,
        reading=Reading(search_first="first-turn", tags=(SCREENED, CLUES_ONLY)),
        offline={
            "sleuth-clue": clue_reply,
            "sleuth-screen": screen_reply,
            "sleuth-difficulty": difficulty_reply,
            "sleuth-decide": decide_reply,
        },
        prompts=("sleuth_clue", "sleuth_screen", "sleuth_difficulty", "sleuth_decide"),
    )
)
