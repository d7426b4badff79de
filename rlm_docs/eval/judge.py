"""LLM judge for answers ANLS* cannot settle, with MADQA's prompt and verdict scale.

The prompt (`prompts/judge.txt`) is MADQA's G-Eval judge prompt; the predicted answer is the
answer record's values, and its explanation follows on its own line (an open question's prose
answer lives there; the judge reads it for content and does not count its length as verbosity,
since the values are what is asked). Instead of a function call the model ends with `JUDGMENT: correct|partial|incorrect` lines, which any chat model can follow.
Calls go through a governor with role `judge`, so they land in the question's ledger (and in the
response cache when the client has one); a reply that cannot be parsed is an `error` verdict
scoring 0, never a guess.
"""

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rlm_docs.errors import RlmDocsError
from rlm_docs.templates import render

VERDICT_SCORES = {"correct": 1.0, "partial": 0.5, "incorrect": 0.0}
_TAGGED = re.compile(r"judg(?:e)?ment\W{0,6}(correct|partial|incorrect)\b", re.IGNORECASE)
_ISSUE = re.compile(r"main[_ ]issue\W{0,6}([a-z_]+)", re.IGNORECASE)
_EXPLANATION = re.compile(r"explanation\W{0,4}(.+)", re.IGNORECASE)
_BARE = re.compile(r"\b(correct|partial|incorrect)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """`judgment` is correct / partial / incorrect, or `error` when no verdict was obtained."""

    judgment: str
    score: float
    main_issue: str = ""
    explanation: str = ""


EXPLANATION_LINE = (
    "\nExplanation given with the answer (read it for content; it is not part of the "
    "answer's wording, so its length is not verbosity): {text}"
)


def judge_prompt(
    question: str,
    predicted: Sequence[str],
    gold_variants: Sequence[Sequence[str]],
    explanation: str = "",
) -> str:
    """MADQA's judge prompt filled in (answers JSON-encoded, as MADQA does), with the answer's
    explanation on a line of its own when it has one."""
    return render(
        "judge",
        question=question,
        predicted=json.dumps(list(predicted), ensure_ascii=False),
        explanation=EXPLANATION_LINE.format(text=explanation.strip()) if explanation else "",
        gold_variants=json.dumps([list(v) for v in gold_variants], ensure_ascii=False),
    )


def parse_verdict(text: str) -> Verdict:
    """The verdict in a judge reply: the last `JUDGMENT:` tag, a JSON `judgment` field, or the
    last bare verdict word on the final non-empty line."""
    tagged = _TAGGED.findall(text)
    judgment = tagged[-1].lower() if tagged else None
    if judgment is None:
        found = re.findall(r'"judgment"\s*:\s*"(correct|partial|incorrect)"', text, re.IGNORECASE)
        judgment = found[-1].lower() if found else None
    if judgment is None:
        lines = [line for line in text.strip().splitlines() if line.strip()]
        bare = _BARE.findall(lines[-1]) if lines else []
        judgment = bare[-1].lower() if len(set(w.lower() for w in bare)) == 1 else None
    if judgment is None:
        return Verdict("error", 0.0, "parse_error", text.strip()[-200:])
    issue = _ISSUE.findall(text)
    explanation = _EXPLANATION.findall(text)
    return Verdict(
        judgment,
        VERDICT_SCORES[judgment],
        issue[-1].lower() if issue else "",
        explanation[-1].strip() if explanation else "",
    )


def run_judge(
    client: Any,
    governor: Any,
    question: str,
    predicted: Sequence[str],
    gold_variants: Sequence[Sequence[str]],
    explanation: str = "",
) -> Verdict:
    """Ask the judge model once (temperature 0) through `governor` with role `judge`."""
    prompt = judge_prompt(question, predicted, gold_variants, explanation)
    messages = [{"role": "user", "content": prompt}]
    try:
        completion = governor.call(client, messages, role="judge", temperature=0.0)
    except RlmDocsError as exc:
        return Verdict("error", 0.0, "judge_failed", str(exc))
    return parse_verdict(completion.text)
