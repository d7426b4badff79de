"""What a model call is for, as data carried from its caller to the client.

Each call's caller knows its role (a root turn, a sub-call, the extraction of the answer record,
a judge's verdict), which system makes it and in which prompt it is written; the governor makes
every call (`Governor.call(..., purpose=...)`) and sets the purpose around `client.complete` in
a context variable, as it does the deadline (`models.deadline`), so no client signature widens.
Clients that use it: the `offline` model chooses its policy by it (never by the prompt's
wording), and the OpenAI client names the role to the endpoint in request headers
(`ROLE_HEADER`, `SYSTEM_HEADER`), where a proxy or a person in the model's seat can tell an
extraction call from a root turn. Nothing is added to what the model reads. It depends on
nothing, so every layer that makes or answers a call (the offline policy included) may read it.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

ROLE_HEADER = "X-RLM-Docs-Role"
SYSTEM_HEADER = "X-RLM-Docs-System"
ENGINE = "rlm"  # the system name of the engine's own calls (`rlm_docs.engine`)


@dataclass(frozen=True)
class Purpose:
    """One call's purpose.

    `role`: the ledger's role (`root`, `sub`, `extract`, `judge`). `system`: the system that
    makes the call (`rlm`, `bm25-agent`, ...; empty when unknown, e.g. a proxied library).
    `prompt`: the prompt the request is written in: a root prompt family (`docs`, `madqa`) for
    `rlm`, the policy name of a baseline's prompt (`map-reduce-map`). `question`: the question
    the call serves. `sub_calls`: whether the run may make sub-calls (false in the ablation).
    `corpus`: whether the run's data is a corpus (false: a plain `context` string, as in a
    child `rlm_query`). `code_runs`: whether code in the reply will run (false on a forced last
    turn and an anytime checkpoint).
    """

    role: str
    system: str = ""
    prompt: str = ""
    question: str = ""
    sub_calls: bool = True
    corpus: bool = True
    code_runs: bool = True

    def headers(self) -> dict[str, str]:
        """The request headers that name the call's role (and system, when known)."""
        named = {ROLE_HEADER: self.role}
        if self.system:
            named[SYSTEM_HEADER] = self.system
        return named


_PURPOSE: ContextVar[Purpose | None] = ContextVar("rlm_docs_call_purpose", default=None)


@contextmanager
def calling(purpose: Purpose) -> Iterator[None]:
    """Calls made inside the block are for `purpose`."""
    token = _PURPOSE.set(purpose)
    try:
        yield
    finally:
        _PURPOSE.reset(token)


def current() -> Purpose | None:
    """The purpose of the call in progress, or None outside `Governor.call`."""
    return _PURPOSE.get()
