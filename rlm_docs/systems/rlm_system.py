"""`rlm`: the recursive language model (`rlm_docs.engine.RLM`) as a comparable system.

`RLM.ask` builds its own governor per question; it gets the run's budget and shared ledger, so
its calls and effort fields are accounted exactly like the baselines'. The governor passed in
by the runner is therefore unused here. Option `sub_calls=False` is the no-sub-calls ablation.
"""

from rlm_docs.engine import RLM, Prediction
from rlm_docs.eval.dataset import Question
from rlm_docs.governor import Governor
from rlm_docs.systems.base import SystemConfig


class RlmSystem:
    """Adapter from the system protocol to `RLM.ask`."""

    name = "rlm"

    def __init__(self, config: SystemConfig) -> None:
        self.rlm = RLM(
            config.corpus,
            model=config.model,
            sub_model=config.sub_model,
            budget=config.budget,
            prompt=str(config.options.get("prompt", "docs")),
            log_dir=config.log_dir,
            ledger=config.ledger,
            sub_calls=bool(config.options.get("sub_calls", True)),
            confirm_final=bool(config.options.get("confirm_final", True)),
            cache=config.cache,
        )

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """One RLM run; model failures come back as `stop_reason="error"` predictions."""
        del governor  # RLM.ask makes its own with the same budget and ledger
        return self.rlm.ask(question.question, question_id=question.id)
