"""The offline policy's entry point: which policy answers a request, and its reply.

The policy is chosen by the call's `Purpose` (`rlm_docs.call_purpose`), the data its caller
hands the governor, never by the prompt's wording: role `extract` -> the JSON of a
deterministic parse of the response (`rlm_docs.answer_parsing.heuristic_answer`); a root turn
of system `rlm` -> the root policy (`root`); a call of any other named system -> that system's
policy by the purpose's prompt name (`baselines`: `bm25-agent`, `map-reduce-map`, ...); a root
turn of an unnamed caller whose system prompt is rlms' own -> the policy in the reference RLM's
seat (`rlms_root`: rlms' prompt is that library's, so its first words are all there is to go
by); anything else is a sub-call (a judge's request too): a classification prompt of
`workloads` gets the TREC rules of `trec`, any other prompt the extractive reader (`reader`).
"""

import json
from dataclasses import asdict

from rlm_docs.answer_parsing import heuristic_answer
from rlm_docs.call_purpose import ENGINE, Purpose, current
from rlm_docs.offline.baselines import baseline_reply
from rlm_docs.offline.reader import read
from rlm_docs.offline.rlms_root import is_rlms, rlms_reply
from rlm_docs.offline.root import root_reply
from rlm_docs.offline.workloads import classification_reply


def detect_role(messages: list[dict], purpose: Purpose | None = None) -> str:
    """`root`, `baseline`, `rlms`, `extract` or `sub`: which policy answers (see the module
    docstring); no purpose (none given, no call in progress) is an unnamed sub-call."""
    purpose = purpose or current() or Purpose("sub")
    if purpose.role == "extract":
        return "extract"
    if purpose.system == ENGINE:
        return "root" if purpose.role == "root" else "sub"
    if purpose.system:
        return "baseline"
    if purpose.role == "root" and is_rlms(messages):
        return "rlms"
    return "sub"


def extract_reply(messages: list[dict]) -> str:
    """The answer record as JSON (values, explanation, caveat, citations) from the response
    embedded in an extract prompt."""
    text = "\n".join(str(m.get("content", "")) for m in messages)
    response = text.split("RLM Analysis Response:", 1)[-1].strip()
    return json.dumps(asdict(heuristic_answer(response)))


def reply(messages: list[dict], purpose: Purpose | None = None) -> str:
    """The deterministic reply to `messages` for the call's `purpose` (by default the purpose of
    the call in progress, so a client of one's own may just call `reply(messages)`)."""
    purpose = purpose or current()
    role = detect_role(messages, purpose)
    if role == "root" and purpose is not None:
        return root_reply(messages, purpose)
    if role == "baseline" and purpose is not None:
        return baseline_reply(messages, purpose.prompt)
    if role == "rlms":
        return rlms_reply(messages)
    if role == "extract":
        return extract_reply(messages)
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    return classification_reply(prompt) or read(prompt)
