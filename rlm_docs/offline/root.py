"""The offline root: REPL code on turn 1, then FINAL_VAR once the code printed its answer.

Turn 1 reads the question on the host (`plan`) and writes one cell: the source of the
`rlm_docs.offline.repl` modules it needs (`rlm_docs.offline.ship`), the plan as a literal, and
one call. A question of the generated workloads gets the workload code (`workloads.cell`); a
corpus gets `repl.corpus.answer_from_corpus` (its result also fills the `answer` dict with
`answer["ready"] = True`, the docs prompt's way to finish); a plain `context` without a corpus
(a child `rlm_query`, the madqa prompt) gets `repl.context.answer_from_context`. Under the
no-sub-calls ablation pages are read in the REPL by `repl.readings.read_all` instead of
`llm_query_batched`, and a workload plan that needs sub-calls is not used. All of this is read
from the call's `Purpose` (question, prompt, corpus or not, sub-calls or not, whether code
runs on this turn), never from the prompt's wording. The code prints, so the engine's confirmation turn shows the output; the
next turn keeps the answer with `FINAL_VAR(final_answer)` (also on a forced last turn), or
says `FINAL(No answer found in the documents.)` when nothing was printed as ready.
"""

import re

from rlm_docs.call_purpose import Purpose
from rlm_docs.offline import workloads
from rlm_docs.offline.computation import computation
from rlm_docs.offline.question import (
    QUANT,
    asked_decimals,
    asked_unit,
    quarter_of,
    statement_titles,
    terms,
    years,
)
from rlm_docs.offline.repl import compute, context, corpus, filings, pages, readings, statements
from rlm_docs.offline.repl.readings import READY
from rlm_docs.offline.ship import cell

_TASK_PLANS = (
    "Every entry must be classified before counting: I will classify the entries chunk by "
    "chunk with sub-calls, then aggregate in Python.",
    "The question names exact keys: I will grep for each and read the value on its line.",
)
_CORPUS_MODULES = [readings, statements, filings, pages, compute, corpus]
_CONTEXT_MODULES = [readings, context]


def plan(question: str) -> dict:
    """What the REPL code needs to know about the question, as JSON-able data."""
    return {
        "question": question,
        "terms": terms(question),
        "years": years(question),
        "quantitative": bool(QUANT.search(question)),
        "quarter": quarter_of(question),
        "titles": statement_titles(question),
        "unit": asked_unit(question),
        "decimals": asked_decimals(question),
        "usd": bool(re.search(r"usd|dollar|[$]", question, re.I)),
        "compute": computation(question),
    }


def root_code(question: str, has_corpus: bool, sub_calls: bool = True) -> str:
    """Turn-1 cell of the locate-then-read policy."""
    reader = (
        "llm_query_batched" if sub_calls else "lambda prompts: read_all(prompts, plan['terms'])"
    )
    if has_corpus:
        call = (
            f"final_answer = answer_from_corpus(plan, search, page, files, cite, {reader})\n"
            "answer.update(final_answer)\n"
            'answer["ready"] = True'
        )
    else:
        call = f"final_answer = answer_from_context(plan, context, {reader})"
    modules = _CORPUS_MODULES if has_corpus else _CONTEXT_MODULES
    return cell(modules, f"plan = {plan(question)!r}\n{call}")


def root_reply(messages: list[dict], purpose: Purpose) -> str:
    """Code on turn 1, then FINAL_VAR once the result is ready (see the module docstring)."""
    turns = sum(1 for m in messages if m.get("role") == "assistant")
    if READY in str(messages[-1].get("content", "")):
        return "The result is stored in `final_answer`.\nFINAL_VAR(final_answer)"
    if turns == 0 and purpose.code_runs:
        question = purpose.question
        # The madqa prompt binds only `context` and sub-calls, so its code reads `context`.
        has_corpus = purpose.corpus and purpose.prompt != "madqa"
        sub_calls = purpose.sub_calls
        task = workloads.parse_task(question) if has_corpus else None
        if task is not None and (sub_calls or not workloads.needs_sub_calls(task)):
            code = workloads.cell_for(task)
            return f"{_TASK_PLANS[task['kind'] == 'needle']}\n```repl\n{code}```"
        code = root_code(question, has_corpus, sub_calls=sub_calls)
        reader = "with the sub-model" if sub_calls else "in the REPL"
        return (
            f"I will locate candidate pages with search, read them {reader}, "
            f"and keep the best-supported answer.\n```repl\n{code}```"
        )
    return "FINAL(No answer found in the documents.)"
