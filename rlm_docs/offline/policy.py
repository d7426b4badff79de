"""The offline policy's entry point: which role a request is written for, and its reply.

The role is read from the first message's marker line: `[rlm-docs:root NAME]` (the marker of
`prompts/docs.txt` and `prompts/madqa.txt`) -> the root policy (`root`); `[rlm-docs:baseline
NAME]` -> the baseline systems' policy (`baselines`); rlms' own system prompt -> the policy in
the reference RLM's seat (`rlms_root`); `[rlm-docs:extract]` -> the JSON of a
deterministic parse of the response (`rlm_docs.answer_parsing.heuristic_answer`); anything else
is a sub-call: a classification prompt of `workloads` gets the TREC rules of `trec`, any other
prompt the extractive reader (`reader`).
"""

import json
from dataclasses import asdict

from rlm_docs.answer_parsing import heuristic_answer
from rlm_docs.offline.baselines import BASELINE_MARKER, baseline_reply
from rlm_docs.offline.reader import read
from rlm_docs.offline.rlms_root import is_rlms, rlms_reply
from rlm_docs.offline.root import root_reply
from rlm_docs.offline.workloads import classification_reply

ROOT_MARKER = "[rlm-docs:root"
EXTRACT_MARKER = "[rlm-docs:extract]"


def detect_role(messages: list[dict]) -> str:
    """`root`, `baseline`, `rlms`, `extract` or `sub`, from the marker line of the first
    message."""
    first = str(messages[0].get("content", "")) if messages else ""
    if first.startswith(ROOT_MARKER):
        return "root"
    if first.startswith(BASELINE_MARKER):
        return "baseline"
    if is_rlms(messages):
        return "rlms"
    if EXTRACT_MARKER in first:
        return "extract"
    return "sub"


def extract_reply(messages: list[dict]) -> str:
    """The answer record as JSON (values, explanation, caveat, citations) from the response
    embedded in an extract prompt."""
    text = "\n".join(str(m.get("content", "")) for m in messages)
    response = text.split("RLM Analysis Response:", 1)[-1].strip()
    return json.dumps(asdict(heuristic_answer(response)))


def reply(messages: list[dict]) -> str:
    """The deterministic reply to `messages` for the role they are written for."""
    role = detect_role(messages)
    if role == "root":
        return root_reply(messages)
    if role == "baseline":
        return baseline_reply(messages)
    if role == "rlms":
        return rlms_reply(messages)
    if role == "extract":
        return extract_reply(messages)
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    return classification_reply(prompt) or read(prompt)
