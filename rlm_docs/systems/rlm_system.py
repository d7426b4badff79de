"""`rlm`: the recursive language model (`rlm_docs.engine.RLM`) as a comparable system.

The run spends against the governor the system protocol passes in (`RLM.ask(governor=...)`), so
its calls, limits and effort fields are accounted exactly like the baselines'. Option
`sub_calls=False` is the no-sub-calls ablation.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlm_docs.engine import RLM, Prediction
from rlm_docs.engine.rlm import checkpoints
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, Governor
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig
from rlm_docs.systems.declaration import (
    CELLS,
    Bound,
    Declaration,
    option,
    root_bound,
    sub_call_bound,
)
from rlm_docs.systems.registry import register


@dataclass(frozen=True)
class RlmOptions:
    prompt: str = option(
        "docs",
        flag="--prompt",
        choices=("docs", "madqa"),
        recorded="always",
        help="root prompt, as for `ask`: docs (corpus helpers, answer dict, cite) or madqa "
        "(MADQA's prompt, only `context` and sub-calls: for MADQA-comparable runs)",
    )
    sub_calls: bool = option(
        True,
        flag="--no-sub-calls",
        strict=True,
        help="without llm_query/llm_query_batched/rlm_query (the paper's ablation)",
    )
    # recorded only when off, so older run directories still resume
    confirm_final: bool = option(
        True,
        flag="--no-confirm-final",
        help="end a run as soon as code sets answer['ready'] (MADQA's protocol)",
    )
    anytime: str = option(
        "",
        flag="--anytime",
        strict=True,
        metavar="SHARES",
        help="when each share of the budget (a comma list, e.g. 0.25,0.5) is spent, ask the "
        "model for its best answer so far, recorded and scored in the row (docs/budget.md)",
    )
    memory: str = option(
        "",
        flag="--memory",
        strict=True,
        metavar="DIR",
        help="keep a memory across questions in DIR, per corpus: identical sub-calls reused, "
        "note()/notes() in the REPL (docs/memory.md)",
    )


class RlmSystem:
    """Adapter from the system protocol to `RLM.ask`."""

    name = "rlm"

    def __init__(self, config: SystemConfig) -> None:
        options = DECLARATION.typed(config.options)
        self.rlm = RLM(
            config.corpus,
            model=config.model,
            sub_model=config.sub_model,
            budget=config.budget,
            prompt=options.prompt,
            log_dir=config.log_dir,
            ledger=config.ledger,
            sub_calls=options.sub_calls,
            confirm_final=options.confirm_final,
            cache=config.cache,
            **run_kwargs(options),
        )

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """One RLM run; model failures come back as `stop_reason="error"` predictions."""
        return self.rlm.ask(question.question, question_id=question.id, governor=governor)


def run_kwargs(options: RlmOptions) -> dict[str, Any]:
    """The `RLM(...)` arguments of `--anytime` and `--memory` (`ask` takes the same flags)."""
    memory = str(Path(options.memory).resolve()) if options.memory else None
    return {"anytime": shares(options.anytime), "memory": memory}


def shares(text: str) -> tuple[float, ...]:
    """The `--anytime` shares: a comma list of numbers in (0, 1), none given twice."""
    try:
        values = [float(p) for p in text.split(",")] if text else []
        if len(set(values)) < len(values):
            raise ConfigError("a share appears twice")
        return checkpoints(values)
    except (ValueError, ConfigError) as exc:
        raise ConfigError(
            f"--anytime {text!r}: expected a comma list of shares between 0 and 1, e.g. "
            f"0.25,0.5 ({exc})"
        ) from None


def _calls(budget: Budget, options: RlmOptions) -> Bound:
    """Its steps, a forced answering turn and the extraction call, plus its sub-calls."""
    return root_bound(budget, 2) + sub_call_bound(budget, options.sub_calls)


DECLARATION = register(
    Declaration(
        name=RlmSystem.name,
        summary="the recursive language model: the root model writes code over the corpus in "
        "a sandboxed REPL, searches, reads and sends sub-LLM calls, then answers with citations",
        settings="root turns: --max-steps; sub-calls: --max-sub-calls; prompt {prompt}",
        factory=RlmSystem,
        options=RlmOptions,
        calls=_calls,
        reading=CELLS,
        offline="the engine's root policy (rlm_docs.offline.root)",
        prompts=("docs", "madqa", "extract", "docs_extract", "turn_first", "turn_next"),
    )
)
