"""`deepread`: the structure-aware reading agent of DeepRead ("locate, then read"), on text.

Paragraphs have coordinates (document, section from the heading tree, paragraph number within
the section: `rlm_docs.corpus.coordinates`). The system prompt carries a compact table of
contents, one line per section with its paragraph and token counts, of the documents the
question is about (`rlm_docs.systems.scope`: every document of a small corpus, else those the
question's page search ranks first; `--toc-docs`). Two tools, one request per turn:

- `RETRIEVE: query` → the top-k paragraphs of those documents (BM25 over paragraphs; k = 2 as
  in the paper), each with its coordinates and score, widened by a scanning window of
  (before, after) paragraphs (1, 1) that stays inside the hit's section;
- `READ_SECTION: doc | section | start | end` → paragraphs start..end-1 of one section, in
  order (half-open), cut at `max_read_chars` with a note saying where to read on.

Up to T = 50 rounds, then a forced answer (`rlm_docs.systems.tool_loop`: budgets stop it the
same way). A tool's error (an unknown section, a bad range) is shown to the model, which may
try again. The trajectory records each retrieval (`retrieve`, and its pages as `search`
results) and each read (`read_section`, its pages as `read`); a read after a retrieval is
tagged `locate-then-read` in the decomposition record.
"""

import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from rlm_docs.corpus import coordinates
from rlm_docs.corpus.coordinates import Paragraph, ParagraphIndex
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import Iteration
from rlm_docs.errors import ConfigError, CorpusError
from rlm_docs.governor import Budget, Governor
from rlm_docs.models import make_client
from rlm_docs.offline.deepread import deepread_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option, turns_bound
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format
from rlm_docs.systems.scope import question_documents
from rlm_docs.systems.tool_loop import answer_with_tools, tagged_after, unique_pages
from rlm_docs.templates import render
from rlm_docs.tokens import count_tokens

LAST_TURN = "This is your last round: no more tools. Reply now with only the JSON answer."
LOCATE_THEN_READ = "locate-then-read"


@dataclass(frozen=True)
class DeepReadOptions:
    k: int = option(2, flag="--retrieve-k", recorded="always", help="paragraphs per Retrieve")
    window: str = option(
        "1,1",
        flag="--scan-window",
        recorded="always",
        metavar="BEFORE,AFTER",
        help="paragraphs shown before and after each retrieved one, inside its section "
        "(0,0: the paragraph alone)",
    )
    max_iterations: int = option(
        50, flag="--max-iterations", recorded="always", help="agent turns T"
    )
    toc_docs: int = option(
        3,
        flag="--toc-docs",
        help="documents the agent works on (all of a corpus that has no more; else those the "
        "question's page search ranks first)",
    )
    toc_tokens: int = option(6000)
    max_read_chars: int = option(12000)


def parse_window(text: str) -> tuple[int, int]:
    """`BEFORE,AFTER` as two non-negative ints (ConfigError naming the flag)."""
    try:
        before, after = (int(p) for p in str(text).split(","))
    except ValueError:
        before = after = -1
    if before < 0 or after < 0:
        raise ConfigError(f"--scan-window {text!r}: expected BEFORE,AFTER, e.g. 1,1")
    return before, after


def paragraph_block(
    doc: str, sid: str, number: int, para: Paragraph, max_chars: int, head: str = ""
) -> str:
    """One paragraph as shown to the model, labelled with its coordinates and page (a
    paragraph longer than `max_chars`, a table page without blank lines, is cut)."""
    text = para.text
    if len(text) > max_chars:
        text = text[:max_chars] + "\n[... paragraph truncated ...]"
    return (
        f"[FILE: {doc} | SECTION: {sid} | PARAGRAPH: {number} | PAGE: {para.page}{head}]\n"
        f"{text}\n[END PARAGRAPH]"
    )


def compact_toc(corpus: Any, docs: list[str], max_tokens: int) -> str:
    """One line per section (id, title, paragraphs, tokens, first page), indented by level,
    document after document, cut at `max_tokens` with a line saying how many were left out."""
    lines: list[str] = []
    used, left = 0, 0
    for doc in docs:
        entries = [f"{doc} ({corpus.num_pages(doc)} pages)"]
        for s in coordinates.sections(corpus, doc):
            pad = "  " * s.level
            entries.append(
                f"{pad}{s.id} {s.title} — {len(s.paragraphs)} paragraphs, {s.tokens} tokens, "
                f"p. {s.page}"
            )
        for line in entries:
            cost = count_tokens(line) + 1
            if used + cost > max_tokens:
                left += 1
                continue
            lines.append(line)
            used += cost
    if left:
        lines.append(f"({left} more sections not shown: RETRIEVE finds them)")
    return "\n".join(lines)


class DeepRead:
    """Locate-then-read agent over paragraph coordinates (module docstring)."""

    name = "deepread"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client = make_client(config.model, cache=config.cache)
        options = DECLARATION.typed(config.options)
        self.options = options
        self.before, self.after = parse_window(options.window)

    def _retrieve(self, index: ParagraphIndex, query: str, record: Iteration) -> str:
        hits = index.search(query, self.options.k)
        blocks, pages, shown = [], [], []
        for hit in hits:
            sid, paras = coordinates.window(self.corpus, hit, self.before, self.after)
            for number, para in paras:
                head = f" | SCORE: {hit.score}" if number == hit.paragraph else " | WINDOW"
                blocks.append(
                    paragraph_block(hit.doc, sid, number, para, self.options.max_read_chars, head)
                )
                pages.append([hit.doc, para.page])
            shown.append(
                {"doc": hit.doc, "section": sid, "paragraph": hit.paragraph, "page": hit.page,
                 "score": hit.score, "window": [paras[0][0], paras[-1][0] + 1]}
            )  # fmt: skip
        record.extra["retrieve"] = {"query": query, "hits": shown}
        record.extra["search"] = {"query": query, "results": unique_pages(pages)}
        head = f"Retrieved {len(hits)} paragraphs for {query!r}:\n\n"
        return head + ("\n\n".join(blocks) if blocks else "No paragraph matches.")

    def _read_section(self, args: str, record: Iteration) -> str:
        parts = [p.strip() for p in args.split("|")]
        if len(parts) != 4 or not parts[2].isdigit() or not parts[3].isdigit():
            return "Error: READ_SECTION takes <document> | <section id> | <start> | <end>"
        doc, sid, start, end = parts[0], parts[1], int(parts[2]), int(parts[3])
        try:
            name = coordinates.resolve(self.corpus, doc)
            section = coordinates.section(self.corpus, name, sid)
            paras = coordinates.read(self.corpus, name, section.id, start, end)
        except CorpusError as exc:
            return f"Error: {exc}"
        blocks: list[str] = []
        used, stop = 0, end
        for number, para in paras:
            if blocks and used + len(para.text) > self.options.max_read_chars:
                stop = number
                break
            blocks.append(
                paragraph_block(name, section.id, number, para, self.options.max_read_chars)
            )
            used += len(para.text)
        read = paras[: len(blocks)]
        record.extra["read_section"] = {"doc": name, "section": section.id, "start": start,
                                        "end": end, "read": len(read)}  # fmt: skip
        record.extra["read"] = unique_pages([[name, p.page] for _, p in read])
        total = len(section.paragraphs)
        head = f"Section {section.id} ({section.title}) of {name}: {total} paragraphs; "
        if not read:
            return head + f"no paragraph in {start}..{end - 1}."
        head += f"paragraphs {read[0][0]}..{read[-1][0]}:\n\n"
        tail = (
            f"\n\n(cut at the length limit: read on from paragraph {stop})"
            if stop < min(end, total)
            else ""
        )
        return head + "\n\n".join(blocks) + tail

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Locate/read loop; the trajectory records every tool result."""
        start = time.perf_counter()
        docs = question_documents(self.corpus, question.question, self.options.toc_docs)
        index = ParagraphIndex(self.corpus, docs)
        window = ""
        if self.before or self.after:
            window = (
                f", widened by {self.before} paragraph(s) before and {self.after} after "
                "within its section"
            )
        system = render(
            "deepread",
            documents=", ".join(docs),
            toc=compact_toc(self.corpus, docs, self.options.toc_tokens),
            k=self.options.k,
            window=window,
            max_iterations=self.options.max_iterations,
            answer_format=answer_format("the table of contents"),
        )
        retrieve, read_section = tagged_after(
            partial(self._retrieve, index), self._read_section, LOCATE_THEN_READ
        )
        tools = {"RETRIEVE": retrieve, "READ_SECTION": read_section}
        return answer_with_tools(
            self.config,
            self.client,
            self.name,
            question,
            governor,
            system,
            tools,
            self.options.max_iterations,
            LAST_TURN,
            "deepread",
            start,
        )


def _calls(budget: Budget, options: DeepReadOptions) -> Bound:
    """One call per round, at most T rounds and `--max-steps`, plus the forced answer."""
    return Bound(turns_bound(budget, options.max_iterations) + 1)


DECLARATION = register(
    Declaration(
        name=DeepRead.name,
        summary="DeepRead's locate-then-read agent: a compact table of contents (paragraph and "
        "token counts per section) in the system prompt, `RETRIEVE: query` for the top-k "
        "paragraphs with coordinates and scores, `READ_SECTION: doc | section | start | end` "
        "(half-open) to read in order",
        settings="k = {k} paragraphs per Retrieve, scanning window {window} (before,after, "
        "inside the section), T = {max_iterations} rounds then a forced answer, "
        "{toc_docs} documents",
        factory=DeepRead,
        options=DeepReadOptions,
        calls=_calls,
        reading=Reading(search_first="first-turn", tags=(LOCATE_THEN_READ,)),
        offline={"deepread": deepread_reply},
        prompts=("deepread", "answer_format"),
    )
)
