"""The root and extract prompts (`prompts/*.txt`, filled by `rlm_docs.templates`) and the corpus
metadata the root model sees.

What a request is for (root turn, extraction; which prompt, with or without sub-calls) is not
written into the prompts: each call carries it as data (`rlm_docs.call_purpose`).

The root never sees corpus text, only a summary: counts, every document within a token budget
(`rlm_docs.engine.summary`) and, for small corpora, the top of each table of contents.
"""

import threading
import weakref
from typing import Any

from rlm_docs.corpus import sections
from rlm_docs.engine.summary import documents_summary
from rlm_docs.errors import ConfigError
from rlm_docs.templates import fill, load_template, render
from sandbox.modules import ALLOWED

ROOT_PROMPTS = ("docs", "madqa")
# The sandbox names each root prompt introduces (None: every name the sandbox offers). A run
# binds only these, so under `madqa` a model's own `files` or `pages` variable is just that.
PROMPT_NAMES: dict[str, frozenset[str] | None] = {
    "docs": None,
    "madqa": frozenset({"context", "llm_query", "llm_query_batched", "rlm_query", "SHOW_VARS"}),
}
TOC_DOCS = 8
TOC_ENTRIES = 14


# The modules model code may import, as the prompt lists them: a model that assumed `re` was
# imported lost a step to the NameError. The corpus's own name parser is left out (a dotted
# project module, there for the offline model's code).
MODULES = ", ".join(name for name in ALLOWED if "." not in name)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


# A corpus never changes once loaded, and every question's root prompt carries its summary:
# grouping a few hundred filings takes tens of milliseconds, so each corpus's is made once.
_SUMMARIES: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_SUMMARIES_LOCK = threading.Lock()


def corpus_summary(corpus: Any) -> str:
    """Counts, every document (within a token budget) and a short toc: what the root knows up
    front (computed once per corpus object: under the lock, so the questions an eval starts
    at once do not each compute it)."""
    with _SUMMARIES_LOCK:
        known = _SUMMARIES.get(corpus)
        if known is None:
            known = _SUMMARIES[corpus] = _summary(corpus)
    return known


def _summary(corpus: Any) -> str:
    docs = corpus.documents
    lines = [
        f"{_count(len(docs), 'document')}, {_count(corpus.total_pages, 'page')}, about "
        f"{corpus.total_tokens:,} tokens ({corpus.total_chars:,} characters)."
    ]
    lines += documents_summary(docs)
    if len(docs) <= TOC_DOCS:
        for d in docs:
            entries = sections.toc(corpus, d.name)
            top = min((e["level"] for e in entries), default=1)
            shown = [e for e in entries if e["level"] <= top + 1][:TOC_ENTRIES]
            if shown and not shown[0]["section"].startswith("p"):
                parts = [f"{e['title']} (p.{e['page_start']})" for e in shown]
                lines.append(f"Contents of {d.name}: " + "; ".join(parts))
    return "\n".join(lines)


def binds(prompt: str, name: str) -> bool:
    """Whether a run under `prompt` binds the sandbox name `name` (see `PROMPT_NAMES`)."""
    names = PROMPT_NAMES[prompt]
    return names is None or name in names


# The per-turn user messages of each prompt. `madqa` keeps rlms' wording (which repeats the
# question and echoes every code block back); `docs` says only what is new each turn.
# `confirm` is the turn after a finishing cell that printed: the same as `next` without the
# invitation to continue, which would contradict the confirmation question it carries.
TURN_TEMPLATES = {
    "docs": {"first": "docs_turn_first", "next": "docs_turn_next", "confirm": "docs_turn_confirm"},
    "madqa": {"first": "turn_first", "next": "turn_next", "confirm": "turn_next"},
}
# Lines of the docs prompt that describe the sub-call helpers, and the one sentence that counts
# sub-calls: the no-sub-calls ablation is the docs prompt without them.
SUB_CALL_LINES = ("- `llm_query(", "- `llm_query_batched(", "- `rlm_query(")


# The extraction prompt that goes with each root prompt (same page and file vocabulary).
EXTRACT_TEMPLATES = {"docs": "docs_extract", "madqa": "extract"}


def turn(prompt: str, kind: str, **values: Any) -> str:
    """The `first`, `next` or `confirm` user message of a root run under `prompt`."""
    return render(TURN_TEMPLATES[prompt][kind], **values)


def root_prompt(
    name: str,
    question: str,
    corpus: Any,
    max_steps: int | str,
    max_output_chars: int = 20_000,
    *,
    sub_calls: bool = True,
) -> str:
    """The filled system prompt of a root run; without `sub_calls`, the variant of the prompt
    (`NAME_no_sub_calls`) that never mentions `llm_query` / `rlm_query` (the ablation)."""
    if name not in ROOT_PROMPTS:
        raise ConfigError(f"unknown prompt {name!r}: choose one of {', '.join(ROOT_PROMPTS)}")
    return fill(
        _root_template(name, sub_calls),
        question=question,
        corpus_summary=corpus_summary(corpus),
        example_doc=corpus.documents[0].name if corpus.documents else "NAME",
        context_chars=corpus.rendered_chars,
        num_documents=len(corpus.documents),
        num_pages=corpus.total_pages,
        max_steps=max_steps,
        max_output_chars=f"{max_output_chars:,}",
        modules=MODULES,
    )


def docs_without_sub_calls(text: str) -> str:
    """The docs prompt minus its sub-call helpers. Derived rather than kept as a copy, so every
    wording change to `docs.txt` reaches the ablation (madqa's ablation is its own file: its
    sub-call text is woven through rlms' wording, not in removable lines)."""
    text = text.replace("Every step, sub-call, token", "Every step, token")
    return "\n".join(line for line in text.split("\n") if not line.startswith(SUB_CALL_LINES))


def _root_template(name: str, sub_calls: bool) -> str:
    if sub_calls:
        return load_template(name)
    if name == "docs":
        return docs_without_sub_calls(load_template("docs"))
    return load_template(f"{name}_no_sub_calls")


def context_prompt(
    name: str, question: str, context: str, max_steps: int | str, max_output_chars: int = 20_000
) -> str:
    """System prompt of a child run whose context is a plain string, not a corpus."""
    summary = f"No document corpus: your `context` is a string of {len(context)} characters."
    return render(
        name,
        question=question,
        corpus_summary=summary,
        example_doc="NAME",
        context_chars=len(context),
        num_documents=0,
        num_pages=0,
        max_steps=max_steps,
        max_output_chars=f"{max_output_chars:,}",
        modules=MODULES,
    )
