"""`Meter`: one governor per question over one shared ledger, in front of upstream clients.

An agent rlm-docs did not write is measured by what it sends: each chat request names its
question (the proxy reads it from a path segment or header) and its role (`root`, the agent's
own turns, or `sub`, calls its code makes). A root call is one step, exactly as for rlm-docs'
own systems (`Prediction.steps` counts root calls), so effort records, Kuiper curves and the
report read a proxied agent's questions like any system's. Every call goes through
`Governor.call`, so limits are checked before the request leaves and tokens and dollars are the
provider's counts priced by the same table.
"""

import threading
from typing import Any

from rlm_docs.engine.prediction import effort_from_totals
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, BudgetExceeded, Governor, Ledger
from rlm_docs.models import Client, Completion

DEFAULT_QUESTION = "default"
ROLES = ("root", "sub")
# Request fields passed to the upstream as they came (the rest of a chat request is either
# read here, `messages` / `model` / `stream`, or refused: the proxy does not relay tools).
PASSED_PARAMS = (
    "top_p",
    "stop",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "response_format",
    "reasoning_effort",
)


class Meter:
    """Upstream clients (the first is the default), the budget every question gets, and the
    ledger all questions write into. `count_steps=False` leaves the step limit to the agent
    (root calls are still counted as steps, but `max_steps` does not refuse them): for an
    agent with its own turn limit and a last answering turn past it, as rlms has."""

    def __init__(
        self,
        upstreams: list[Client],
        budget: Budget | None = None,
        ledger: Ledger | None = None,
        *,
        count_steps: bool = True,
        record: bool = False,
    ) -> None:
        if not upstreams:
            raise ConfigError("proxy: at least one upstream model is needed")
        self.upstreams = list(upstreams)
        self.budget = budget or Budget()
        self.ledger = ledger if ledger is not None else Ledger()
        self.count_steps = count_steps
        # With `record`, each question's calls as (role, messages, completion), in call order.
        self.exchanges: dict[str, list[tuple[str, list[dict], Completion]]] | None = (
            {} if record else None
        )
        self.refusals: dict[str, str] = {}  # question -> the axis of its last refused call
        self._governors: dict[str, Governor] = {}
        self._lock = threading.Lock()

    def client(self, model: str | None) -> Client:
        """The upstream a request's `model` names (by model name or full spec); the default
        when it names none. ConfigError when it names a model this proxy does not offer."""
        if not model:
            return self.upstreams[0]
        for c in self.upstreams:
            if model in (c.model, c.spec):
                return c
        raise ConfigError(f"model {model!r}: this proxy offers {self.model_names()}")

    def model_names(self) -> list[str]:
        return [c.model for c in self.upstreams]

    def governor(self, question_id: str) -> Governor:
        """The question's governor, made at its first call (its wall clock starts then)."""
        with self._lock:
            gov = self._governors.get(question_id)
            if gov is None:
                gov = Governor(self.budget, ledger=self.ledger, question_id=question_id)
                self._governors[question_id] = gov
            return gov

    def attach(self, question_id: str, governor: Governor) -> None:
        """Spend `question_id`'s calls against `governor` (the eval runner's, which owns the
        question's budget and ledger) instead of one made here."""
        with self._lock:
            self._governors[question_id] = governor

    def call(
        self,
        messages: list[dict],
        *,
        question_id: str = DEFAULT_QUESTION,
        role: str = "root",
        model: str | None = None,
        **sampling: Any,
    ) -> Completion:
        """One upstream call within the question's budget (BudgetExceeded when refused; the
        upstream's own errors pass through)."""
        if role not in ROLES:
            raise ConfigError(f"role {role!r}: expected one of {', '.join(ROLES)}")
        client = self.client(model)
        gov = self.governor(question_id)
        try:
            if role == "root" and self.count_steps:
                gov.step()
            completion = gov.call(client, messages, role=role, **sampling)
        except BudgetExceeded as exc:
            with self._lock:
                self.refusals[question_id] = exc.axis
            raise
        if self.exchanges is not None:
            with self._lock:
                self.exchanges.setdefault(question_id, []).append((role, messages, completion))
        return completion

    def questions(self) -> list[str]:
        """Question ids seen so far, in first-call order."""
        with self._lock:
            return list(self._governors)

    def effort(self, question_id: str) -> dict[str, Any]:
        """The question's recorded effort fields (`governor.axes`), as every system records them."""
        with self._lock:
            gov = self._governors.get(question_id)
        if gov is None:
            raise KeyError(question_id)
        effort = effort_from_totals(gov.totals())
        # From the first call's start to the last call's end: the governor's own clock runs
        # on while the proxy waits for the agent's next question.
        calls = [e for e in self.ledger.entries if e.question_id == question_id]
        if calls:
            end = max(e.started_at + e.latency_s for e in calls)
            effort["wall_s"] = end - min(e.started_at for e in calls)
        return effort
