"""`rlm`: the recursive language model (`rlm_docs.engine.RLM`) as a comparable system.

The run spends against the governor the system protocol passes in (`RLM.ask(governor=...)`), so
its calls, limits and effort fields are accounted exactly like the baselines'. Option
`sub_calls=False` is the no-sub-calls ablation.
"""

from rlm_docs.engine import RLM, Prediction
from rlm_docs.governor import Governor
from rlm_docs.questions import Question
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
        return self.rlm.ask(question.question, question_id=question.id, governor=governor)
