"""What the systems whose model calls go through the metering proxy share (`rlms`, `agent`):
their answer text goes through MADQA's extraction step, their effort comes from the question's
governor, and their trajectory is written like every system's."""

import time
from dataclasses import dataclass
from typing import Any

from rlm_docs.engine import RLM, Prediction
from rlm_docs.engine.citation_check import with_fallback
from rlm_docs.engine.loop import Outcome
from rlm_docs.engine.prediction import effort_from_totals
from rlm_docs.engine.records import Result, Trajectory
from rlm_docs.engine.trajectory import redact, trajectory_file, write_records
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Governor
from rlm_docs.models import Client, make_client
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig


def budget_axis(exc: BaseException) -> str | None:
    """The budget axis of a proxy refusal seen by an OpenAI client (`BadRequestError.body`)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and body.get("code") == "budget_exceeded":
        return str(body.get("axis"))
    return None


@dataclass(frozen=True)
class Proxied:
    """What a proxied system is built with: its root and sub clients (the proxy serves both)
    and MADQA's extraction step."""

    root: Client
    sub: Client
    extractor: RLM


def setup(config: SystemConfig, refusal: str) -> Proxied:
    """Clients for the model and sub-model and the extraction step. The proxy answers from a
    server thread, where a person at the terminal (`human`) cannot: ConfigError `refusal`
    (with `{spec}`, the model's spec)."""
    root = make_client(config.model, cache=config.cache)
    sub = make_client(config.sub_model or config.model, cache=config.cache)
    for client in (root, sub):
        if client.backend == "human":
            raise ConfigError(refusal.format(spec=client.spec))
    return Proxied(root, sub, extractor(config, root))


def extractor(config: SystemConfig, client: Client) -> RLM:
    """MADQA's extraction step in the `madqa` prompt's wording, as `rlm --prompt madqa` uses."""
    return RLM(config.corpus, model=client, prompt="madqa", ledger=config.ledger)


def finish(
    config: SystemConfig,
    extract: RLM,
    question: Question,
    governor: Governor,
    prediction: Prediction,
    value: str,
    trajectory: Trajectory,
    start: float,
) -> Prediction:
    """Answer and citations from `value` (the extraction call, when it is not already MADQA's
    JSON), effort from the governor, and the trajectory file (when logging)."""
    answer, how = extract._answer(question.question, Outcome(value=value), governor)
    citations, rejected, source = with_fallback(config.corpus, answer.citations, [], [])
    prediction.answer, prediction.citations, prediction.raw_answer = answer.values, citations, value
    prediction.explanation, prediction.caveat = answer.explanation, answer.caveat
    prediction.set_effort(effort_from_totals(governor.totals()))
    prediction.wall_s = time.perf_counter() - start
    if config.log_dir is not None:
        path = trajectory_file(config.log_dir, question.id)
        prediction.trajectory = str(path)
        result: Any = Result.from_dict(prediction.to_madqa())
        result.raw_answer, result.extraction = value, how
        result.citation_source, result.rejected_citations = source, rejected
        trajectory.result = result
        write_records(path, redact(trajectory.to_records()))
    return prediction
