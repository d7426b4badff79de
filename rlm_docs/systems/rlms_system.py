"""`rlms`: the reference RLM (the `rlms` package, MADQA's RLM baseline) as a comparable system.

rlms' own loop runs unchanged: its system prompt, its turn prompts, its iteration limit (the
budget's `max_steps`, then its one default-answer turn: `max_steps + 1` root calls at most, as
for `rlm`), its `answer` dict protocol. Around it, per question:

- the corpus is `context`, rendered as MADQA's baseline built it (`[FILE: name | TOTAL PAGES:
  n]`, `[PAGE i]` ... `[END PAGE i]`: `Corpus.render`), and the question is rlms' root prompt;
- its code runs in the rlm-docs sandbox (`rlm_docs.rlms.environment.SandboxEnv`);
- its model calls (root turns and `llm_query` sub-calls) go through a metering proxy on
  127.0.0.1 that spends against the question's governor, so budgets stop it before a call is
  sent and the ledger holds the provider's own token counts. A refused root call ends the run
  (`budget` stop, the refused axis as `stop_axis`); a refused sub-call comes back to the
  model's code as an error string naming the axis, as rlms reports failed sub-calls;
- its answer text goes through MADQA's extraction step (the `madqa` prompt's `extract`
  template, as for `rlm --prompt madqa`), and the citations are those the extraction found;
- its rlms log becomes an rlm-docs trajectory (`rlm_docs.engine.rlms_log`), each root turn
  with its ledger usage, so the viewer, report and decomposition record read it like `rlm`'s.

Needs the `rlms` extra. Any model string works but `human`; with `offline`, the offline
policy takes rlms' root seat (`rlm_docs.offline.rlms_root`).
"""

import time
from dataclasses import dataclass
from typing import Any

from rlm_docs.engine import Prediction
from rlm_docs.engine.records import Trajectory, TurnUsage
from rlm_docs.engine.rlms_log import from_rlms
from rlm_docs.governor import Budget, Governor
from rlm_docs.proxy import MeteringProxy
from rlm_docs.questions import Question
from rlm_docs.rlms import DEFAULT_ITERATIONS, ENVIRONMENT
from rlm_docs.rlms import register as register_environment
from rlm_docs.systems.base import SystemConfig
from rlm_docs.systems.declaration import CELLS, Bound, Declaration, sub_call_bound
from rlm_docs.systems.proxied import budget_axis, finish, setup
from rlm_docs.systems.registry import register


@dataclass(frozen=True)
class RlmsOptions:
    """rlms' loop has no options of its own here (its turns are the budget's steps)."""


class RlmsSystem:
    """rlms' `RLM.completion` per question (see module docstring)."""

    name = "rlms"

    def __init__(self, config: SystemConfig) -> None:
        DECLARATION.typed(config.options)
        register_environment()
        self.config = config
        proxied = setup(
            config,
            "system rlms: model {spec}: a person at the terminal cannot take rlms' seat; use "
            "--system rlm for that",
        )
        self.root, self.sub, self.extractor = proxied.root, proxied.sub, proxied.extractor
        self.corpus = config.corpus
        self.context = self.corpus.render()
        self.iterations = config.budget.max_steps or DEFAULT_ITERATIONS

    def _rlm(self, proxy: MeteringProxy, qid: str, logger: Any) -> Any:
        from rlm import RLM as ReferenceRLM

        def backend(client: Any, role: str) -> dict[str, Any]:
            return {
                "model_name": client.model,
                "base_url": proxy.question_url(qid, role),
                "api_key": "rlm-docs-proxy",  # the proxy holds the real keys
                "max_retries": 0,  # rlm-docs' clients retry behind the proxy
                "timeout": None,  # and time out there (rlms' 300 s would cut their retries)
            }

        return ReferenceRLM(
            backend="openai",
            backend_kwargs=backend(self.root, "root"),
            other_backends=["openai"],
            other_backend_kwargs=[backend(self.sub, "sub")],
            environment=ENVIRONMENT,
            environment_kwargs={"corpus": str(self.corpus.path or "in-memory corpus")},
            max_depth=1,
            max_iterations=self.iterations,
            logger=logger,
        )

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """One rlms run through the proxy, then extraction; failures are predictions."""
        from rlm.logger import RLMLogger

        start = time.perf_counter()
        qid = question.id or "question"
        prediction = Prediction(question=question.question, question_id=question.id)
        logger = RLMLogger()
        value: str | None = None
        proxy = MeteringProxy([self.root, self.sub], ledger=governor.ledger, count_steps=False)
        proxy.meter.attach(qid, governor)
        with proxy:
            rlm = self._rlm(proxy, qid, logger)
            try:
                value = rlm.completion(self.context, root_prompt=question.question).response
                prediction.stop_reason = "final"
                turns = (logger.get_trajectory() or {}).get("iterations") or []
                if len(turns) > self.iterations:  # rlms' default answer after its last turn
                    prediction.stop_reason, prediction.stop_axis = "forced", "steps"
            except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
                value = rlm._best_partial_answer
                axis = budget_axis(exc)
                if axis is not None:
                    prediction.stop_reason, prediction.stop_axis = "budget", axis
                else:
                    prediction.stop_reason = "error"
                    prediction.error = f"{type(exc).__name__}: {exc}"
        traj = self._trajectory(logger, question, governor)
        return finish(
            self.config, self.extractor, question, governor, prediction, value or "", traj, start
        )

    def _trajectory(self, logger: Any, question: Question, governor: Governor) -> Trajectory:
        """rlms' log as a trajectory, with rlm-docs' metadata and each turn's ledger usage."""
        logged = logger.get_trajectory() or {"run_metadata": {}, "iterations": []}
        traj = from_rlms(logged["run_metadata"], logged["iterations"])
        meta = traj.metadata
        meta.question, meta.question_id, meta.system = question.question, question.id, self.name
        meta.budget, meta.sub_model = vars(self.config.budget), self.sub.spec
        meta.root_model, meta.backend = self.root.spec, self.root.backend
        roots = [
            e
            for e in governor.ledger.entries
            if e.question_id == governor.question_id and e.role == "root" and e.error is None
        ]
        for it, entry in zip(traj.iterations, roots, strict=False):
            it.usage = TurnUsage(entry.input_tokens, entry.output_tokens, entry.cost_usd)
        return traj


def _calls(budget: Budget, options: RlmsOptions) -> Bound:
    """Its turns, its default-answer turn, the extraction call, plus its sub-calls."""
    turns = budget.max_steps if budget.max_steps is not None else DEFAULT_ITERATIONS
    return Bound(turns + 2) + sub_call_bound(budget)


DECLARATION = register(
    Declaration(
        name=RlmsSystem.name,
        summary="the reference RLM (the rlms package, MADQA's RLM baseline) run unchanged in "
        "the sandbox, its model calls through a metering proxy, its answer through MADQA's "
        "extraction",
        settings=f"turns: --max-steps (default {DEFAULT_ITERATIONS}, rlms' own)",
        factory=RlmsSystem,
        options=RlmsOptions,
        calls=_calls,
        reading=CELLS,
        offline="the rlms root policy (rlm_docs.offline.rlms_root)",
        prompts=("madqa", "extract"),
    )
)
