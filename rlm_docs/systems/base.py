"""The system protocol and registry: every compared system answers one question through a
governor and returns a `Prediction` with the same effort fields.

Keeping systems behind `answer(question, governor)` means the runner, budgets and ledger are
identical for all of them, so effort curves and cost numbers are comparable.
"""

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from rlm_docs.call_purpose import Purpose
from rlm_docs.engine.loop import answer_text
from rlm_docs.engine.prediction import Prediction, effort_from_totals
from rlm_docs.engine.records import Iteration, Metadata, Result, TurnUsage
from rlm_docs.engine.trajectory import TrajectoryWriter, trajectory_file
from rlm_docs.governor import Budget, BudgetExceeded, Governor, Ledger
from rlm_docs.models import Client, make_client
from rlm_docs.questions import Question
from rlm_docs.systems.registry import declaration
from rlm_docs.systems.replies import Reply, read_reply


class System(Protocol):
    """Anything that answers a question within a governor's budget."""

    name: str

    def answer(self, question: Question, governor: Governor) -> Prediction: ...


@dataclass(frozen=True)
class SystemConfig:
    """What every system is built from (the same for all, so runs are comparable)."""

    corpus: Any
    model: str
    sub_model: str | None = None
    budget: Budget = field(default_factory=Budget)
    log_dir: str | None = None
    ledger: Ledger = field(default_factory=Ledger)
    options: dict[str, Any] = field(default_factory=dict)
    # The response cache every client is built with (`make_client`'s `cache`): True is the
    # default rule; a step-limit sweep passes one ResponseCache so even offline and scripted
    # clients replay the prefixes its limits share.
    cache: Any = True

    def clients(self) -> tuple[Client, Client]:
        """(root client, sub-model client): the sub-model is the root model unless one is set."""
        root = make_client(self.model, cache=self.cache)
        sub = make_client(self.sub_model, cache=self.cache) if self.sub_model else root
        return root, sub


def make_system(name: str, config: SystemConfig) -> System:
    """Build the system registered as `name` (`rlm_docs.systems.registry`); ConfigError lists
    the valid names, or names an option the system does not have."""
    decl = declaration(name)
    decl.typed(config.options)
    system: System = decl.factory(config)
    return system


def new_trajectory(
    config: SystemConfig, system: str, question: Question, **extra: Any
) -> TrajectoryWriter:
    """A trajectory in the engine's format (so the viewer opens baseline runs too); `extra`:
    the system's own metadata (e.g. `max_iterations`, `chunk_tokens`)."""
    metadata = {
        "root_model": config.model,
        "backend": config.model.partition(":")[0],
        "max_depth": 0,
        "environment_type": system,
        "question": question.question,
        "question_id": question.id,
        "system": system,
        "budget": vars(config.budget),
    }
    return TrajectoryWriter(Metadata.from_dict(metadata | extra))


def finish(
    config: SystemConfig,
    trajectory: TrajectoryWriter,
    governor: Governor,
    prediction: Prediction,
    start: float,
) -> Prediction:
    """Fill the effort fields from the governor, then write the trajectory (if logging)."""
    prediction.set_effort(effort_from_totals(governor.totals()))
    prediction.wall_s = time.perf_counter() - start
    if config.log_dir is not None:
        path = trajectory_file(config.log_dir, prediction.question_id)
        prediction.trajectory = str(path)
        trajectory.result(Result.from_dict(prediction.to_madqa()))
        trajectory.write(path)
    return prediction


def answer_call(
    client: Any,
    trajectory: TrajectoryWriter,
    governor: Governor,
    messages: list[dict[str, Any]],
    record: Iteration,
    prediction: Prediction,
    *,
    purpose: Purpose,
) -> Reply | None:
    """One root step and one answering call for `purpose` (which system asks, in which prompt:
    `rlm_docs.call_purpose`), parsed into `prediction` (answer record, raw answer) and the
    trajectory `record` (closed here). None when the budget refused the call (`budget` stop, the refusal
    as the record's notice) or the call failed (`error` stop)."""
    try:
        governor.step()
        completion = governor.call(client, messages, role="root", purpose=purpose)
    except BudgetExceeded as exc:
        prediction.stop_reason, prediction.stop_axis = "budget", exc.axis
        record.notice = str(exc)
        trajectory.close(record)
        return None
    except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
        prediction.stop_reason, prediction.error = "error", f"{type(exc).__name__}: {exc}"
        trajectory.close(record)
        return None
    reply = read_reply(completion.text, allow_tools=False)
    record.response = completion.text
    record.usage = turn_usage(completion)
    record.final_answer = answer_text(reply.answer.values)
    trajectory.close(record)
    prediction.take(reply.answer)
    prediction.raw_answer = completion.text
    return reply


def turn_usage(completion: Any) -> TurnUsage:
    """The trajectory usage of a root call (token counts, cached tokens, dollars)."""
    return TurnUsage.from_dict(completion.usage.__dict__ | {"cost_usd": completion.cost_usd})
