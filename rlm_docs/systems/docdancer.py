"""`docdancer`: DocDancer's two-tool document agent (search, read), on text.

The agent works on the documents the question is about (`rlm_docs.systems.scope`,
`--toc-docs`) and loops until it answers (T = `--max-iterations` turns at most, then a forced
answer; budgets stop it as every tool agent, `rlm_docs.systems.tool_loop`):

- `SEARCH: kw | kw | ...` → full-text search (whole words or phrases, case-insensitive) over
  their paragraphs: the total hit count and, for the first `hits` (those holding the most
  keywords first), the section id (`document#section`, the ids of `toc`), page and a snippet
  window around the match (`rlm_docs.corpus.coordinates.full_text`);
- `READ: id, id, ... | goal` → the sections' full text (with their subsections, as
  `read_section` gives them, cut at `read_chars`) goes to a summariser: one sub-call through
  the governor whose prompt carries the goal, answering in two parts, "Evidence in document"
  and "Summary"; its reply is the tool's result. A summariser call the budget refuses comes
  back to the agent as that refusal.

The trajectory records each search (`docdancer_search`, the hits' pages as `search` results),
each read's sub-call (a code block, as map-reduce records its map) and pages (`read`); a read
after a search is tagged `search-then-read`.
"""

import json
import time
from dataclasses import dataclass
from functools import partial

from rlm_docs.call_purpose import Purpose
from rlm_docs.corpus import coordinates
from rlm_docs.corpus.render import page_block
from rlm_docs.corpus.sections import read_section
from rlm_docs.engine.host_functions import HostFunctions
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import CellResult, CodeBlock, Iteration
from rlm_docs.errors import CorpusError
from rlm_docs.governor import Budget, BudgetExceeded, Governor
from rlm_docs.offline.docdancer import docdancer_reply, summariser_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option, turns_bound
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format
from rlm_docs.systems.scope import question_documents
from rlm_docs.systems.tool_loop import answer_with_tools, tagged_after, unique_pages
from rlm_docs.templates import render

LAST_TURN = "This is your last turn: no more tools. Reply now with only the JSON answer."
SEARCH_THEN_READ = "search-then-read"
# A request is model text: past these, keywords and section ids are refused, not looked for.
MAX_KEYWORDS = 20
MAX_SECTIONS = 20


@dataclass(frozen=True)
class DocDancerOptions:
    max_iterations: int = option(
        30, flag="--max-iterations", recorded="always", help="agent turns T"
    )
    toc_docs: int = option(
        3,
        flag="--toc-docs",
        help="documents the agent works on (all of a corpus that has no more; else those the "
        "question's page search ranks first)",
    )
    hits: int = option(10, flag="--search-hits", recorded="always", help="hits shown per search")
    snippet_chars: int = option(240)
    read_chars: int = option(40000)


def keywords(args: str) -> list[str]:
    """`kw | kw` (or a JSON list of strings, or `kw, kw`) as keywords."""
    text = args.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, list):
            return [str(v).strip() for v in value if str(v).strip()]
    sep = "|" if "|" in text else ","
    return [k.strip().strip("\"'") for k in text.split(sep) if k.strip().strip("\"'")]


class DocDancer:
    """Search/read agent with a summarising reader (module docstring)."""

    name = "docdancer"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client, self.sub_client = config.clients()
        self.options = DECLARATION.typed(config.options)

    def _search(self, docs: list[str], args: str, record: Iteration) -> str:
        words = keywords(args)
        if not words or len(words) > MAX_KEYWORDS:
            return f"Error: SEARCH takes 1 to {MAX_KEYWORDS} keywords separated by |"
        found = coordinates.full_text(self.corpus, docs, words)
        shown = found[: self.options.hits]
        lines = [f"{len(found)} hits for {' | '.join(words)}" + (
            f" (showing the first {len(shown)})" if len(shown) < len(found) else ""
        ) + ":"]  # fmt: skip
        for m in shown:
            snip = coordinates.snippet_at(m.text, m.at, self.options.snippet_chars)
            lines.append(f"- section {m.doc}#{m.section} | page {m.page} | {snip}")
        record.extra["docdancer_search"] = {"keywords": words, "total": len(found)}
        record.extra["search"] = {
            "query": " | ".join(words),
            "results": unique_pages([[m.doc, m.page] for m in shown]),
        }
        return "\n".join(lines) if found else lines[0][:-1] + "."

    def _section_text(self, ref: str) -> tuple[str, str, list[tuple[int, str]]]:
        """(document, section id, [(page, paragraph)]) of `doc#section`."""
        doc, _, sid = ref.strip().rpartition("#")
        if not doc:
            raise CorpusError(f"section {ref!r}: expected document#section, e.g. report#s3")
        name = coordinates.resolve(self.corpus, doc)
        section = coordinates.section(self.corpus, name, sid)
        if section.id == "s0":  # text before the first heading: not a toc section
            return name, "s0", [(p.page, p.text) for p in section.paragraphs]
        paras = read_section(self.corpus, name, section.id)
        return name, section.id, [(int(p["page"]), str(p["text"])) for p in paras]

    def _read(self, host: HostFunctions, args: str, record: Iteration) -> str:
        refs, _, goal = args.partition("|")
        goal = goal.strip()
        ids = [r.strip() for r in refs.split(",") if r.strip()]
        if not ids or not goal or len(ids) > MAX_SECTIONS:
            return f"Error: READ takes 1 to {MAX_SECTIONS} <section id>s, then | <goal>"
        blocks, pages, used = [], [], 0
        try:
            for ref in ids:
                doc, sid, paras = self._section_text(ref)
                by_page: dict[int, list[str]] = {}
                for page, text in paras:
                    by_page.setdefault(page, []).append(text)
                blocks.append(f"Section {doc}#{sid}:")
                for page, texts in by_page.items():
                    body = "\n\n".join(texts)
                    room = self.options.read_chars - used
                    if room <= 0:
                        break
                    blocks.append(page_block(doc, page, body, room))
                    pages.append([doc, page])
                    used += min(len(body), room)
        except CorpusError as exc:
            return f"Error: {exc}"
        prompt = render("docdancer_read", goal=goal, sections="\n\n".join(blocks))
        record.extra["read"] = unique_pages(pages)
        host.start_block()
        try:
            reply = host.llm_query(prompt)
        except BudgetExceeded as exc:
            reply = f"Error: the budget refused the reader ({exc}); answer from what you have."
        finally:
            record.code_blocks.append(
                CodeBlock(f"# read {', '.join(ids)} for: {goal}", CellResult(sub_calls=host.calls))
            )
        return f"Reader's report on {', '.join(ids)}:\n{reply}"

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Search/read loop; the trajectory records every tool result and reader call."""
        start = time.perf_counter()
        docs = question_documents(self.corpus, question.question, self.options.toc_docs)
        system = render(
            "docdancer",
            documents=", ".join(docs),
            hits=self.options.hits,
            max_iterations=self.options.max_iterations,
            answer_format=answer_format("the search results"),
        )
        reads = Purpose("sub", self.name, "docdancer-read", question.question)
        host = HostFunctions(governor, self.sub_client, corpus=self.corpus, purpose=reads)
        search, read = tagged_after(
            partial(self._search, docs), partial(self._read, host), SEARCH_THEN_READ
        )
        return answer_with_tools(
            self.config,
            self.client,
            self.name,
            question,
            governor,
            system,
            {"SEARCH": search, "READ": read},
            self.options.max_iterations,
            LAST_TURN,
            "docdancer",
            start,
        )


def _calls(budget: Budget, options: DocDancerOptions) -> Bound:
    """One root call per turn (at most T and `--max-steps`) plus the forced answer; at most one
    reader sub-call per turn before the last (and `--max-sub-calls`)."""
    turns = turns_bound(budget, options.max_iterations)
    reads = turns if budget.max_sub_calls is None else min(turns, budget.max_sub_calls)
    return Bound(turns + 1 + reads)


DECLARATION = register(
    Declaration(
        name=DocDancer.name,
        summary="DocDancer's two-tool agent: `SEARCH: kw | kw` full-text search (section id, "
        "page, snippet window, total hit count), `READ: ids | goal` gives the sections to a "
        'summariser sub-call answering "Evidence in document" and "Summary" for the goal; '
        "loops until it answers",
        settings="{hits} hits shown per search, snippets of {snippet_chars} characters, reads "
        "cut at {read_chars} characters, T = {max_iterations} turns then a forced answer, "
        "{toc_docs} documents",
        factory=DocDancer,
        options=DocDancerOptions,
        calls=_calls,
        reading=Reading(search_first="first-turn", tags=(SEARCH_THEN_READ,)),
        offline={"docdancer": docdancer_reply, "docdancer-read": summariser_reply},
        prompts=("docdancer", "docdancer_read", "answer_format"),
    )
)
