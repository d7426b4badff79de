"""The turn loop the tool-calling agents share (`bm25-agent`, `deepread`, `docdancer`).

Each turn is one root step and one root call through the governor, so every agent's effort
fields mean the same as the RLM's. A reply is one tool request (`NAME: arguments`, one line,
`rlm_docs.systems.replies`) or the answer; a request runs the named tool, whose text is the
next user message. The last turn (`max_turns`) must answer: it says so (`last_turn`) and a
request there is read as an answer. When a budget refuses a turn, one final answering turn is
still tried, as the engine does; the governor checks it like any call, so a dollar, token or
wall limit can refuse it too. Stop reason `final` when the agent answered of its own accord,
`forced` when the turn limit or a budget made it answer (`stop_axis` the limit: `steps` for
the agent's own turn limit), `budget` when even the forced turn was refused (no answer),
`error` when a call or a tool failed.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rlm_docs.call_purpose import Purpose
from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.loop import answer_text
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import Iteration
from rlm_docs.engine.trajectory import TrajectoryWriter
from rlm_docs.governor import BudgetExceeded, Governor
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig, finish, new_trajectory, turn_usage
from rlm_docs.systems.replies import Reply, read_reply

# A tool: its arguments and the turn's record (to note what it returned) -> the text shown.
Tool = Callable[[str, Iteration], str]


@dataclass
class Outcome:
    """How the loop ended: the final reply (None: no answer), stop reason and axis, the
    error of a failed call or tool, and the answering reply's text."""

    reply: Reply | None
    stop_reason: str
    axis: str | None
    error: str | None
    raw: str


def run_turns(
    client: Any,
    governor: Governor,
    trajectory: TrajectoryWriter,
    messages: list[dict[str, Any]],
    tools: Mapping[str, Tool],
    max_turns: int,
    last_turn: str,
    purpose: Purpose,
) -> Outcome:
    """Turns until an answer, the turn limit or a refused forced turn (module docstring);
    `messages` (system prompt and question) grow with every turn; every call is for `purpose`
    (which agent asks, in which prompt: `rlm_docs.call_purpose`)."""
    names = tuple(tools)
    reply: Reply | None = None
    stop_reason, error, sent, raw = "forced", None, 0, ""
    axis: str | None = None  # the limit that forced the last turn
    for turn in range(1, max_turns + 1):
        last = turn == max_turns
        if last:
            messages.append({"role": "user", "content": last_turn})
        record = trajectory.iteration(messages[sent:])
        sent = len(messages)
        try:
            try:
                governor.step()
                completion = governor.call(client, list(messages), role="root", purpose=purpose)
            except BudgetExceeded as exc:
                last, stop_reason, axis = True, "budget", exc.axis
                messages.append({"role": "user", "content": f"{exc}. {last_turn}"})
                record.prompt, record.forced = messages[sent - 1 :], True
                sent = len(messages)
                completion = governor.call(client, list(messages), role="root", purpose=purpose)
        except BudgetExceeded:  # even the final answering turn is refused
            trajectory.close(record)
            break
        except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
            error, stop_reason = f"{type(exc).__name__}: {exc}", "error"
            trajectory.close(record)
            break
        messages.append({"role": "assistant", "content": completion.text})
        sent, raw = len(messages), completion.text
        reply = read_reply(completion.text, names, allow_tools=not last)
        record.response = completion.text
        record.usage = turn_usage(completion)
        if reply.tool is None:
            record.final_answer = answer_text(reply.answer.values)
            trajectory.close(record)
            stop_reason = "forced" if last else "final"
            if last and axis is None:  # the agent's own turn limit is a step limit
                axis = "steps"
            break
        try:
            shown = tools[reply.tool](reply.query or "", record)
        except Exception as exc:  # noqa: BLE001 - a tool's failure ends the run as an error
            error, stop_reason = f"{type(exc).__name__}: {exc}", "error"
            trajectory.close(record)
            break
        messages.append({"role": "user", "content": shown})
        trajectory.close(record)
    final = reply if reply is not None and reply.tool is None else None
    return Outcome(final, stop_reason, axis, error, raw if final is not None else "")


def answer_with_tools(
    config: SystemConfig,
    client: Any,
    name: str,
    question: Question,
    governor: Governor,
    system: str,
    tools: Mapping[str, Tool],
    max_turns: int,
    last_turn: str,
    prompt: str,
    start: float,
) -> Prediction:
    """A tool agent's whole question: its `system` prompt and the question as the first
    messages, a trajectory in the engine's format, the turns (`run_turns`, every call for
    `Purpose("root", name, prompt, ...)`) and the prediction (`finish_agent`)."""
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": question.question},
    ]
    trajectory = new_trajectory(config, name, question, max_iterations=max_turns)
    purpose = Purpose("root", name, prompt, question.question)
    out = run_turns(client, governor, trajectory, messages, tools, max_turns, last_turn, purpose)
    return finish_agent(config, trajectory, governor, question, out, start)


def tagged_after(first: Tool, then: Tool, tag: str) -> tuple[Tool, Tool]:
    """`first` and `then` as a pair of tools where each `then` turn taken after a `first` turn
    carries the strategy tag `tag` (locate-then-read, search-then-read: what the decomposition
    record counts)."""
    used = False

    def run_first(args: str, record: Iteration) -> str:
        nonlocal used
        used = True
        return first(args, record)

    def run_then(args: str, record: Iteration) -> str:
        if used:
            record.extra["tags"] = [tag]
        return then(args, record)

    return run_first, run_then


def finish_agent(
    config: SystemConfig,
    trajectory: TrajectoryWriter,
    governor: Governor,
    question: Question,
    out: Outcome,
    start: float,
) -> Prediction:
    """The loop's outcome as the question's prediction (citations checked against the
    corpus), with effort and trajectory written by `rlm_docs.systems.base.finish`."""
    final = out.reply or Reply()
    citations, _ = validate(config.corpus, final.answer.citations)
    prediction = Prediction(
        question=question.question,
        question_id=question.id,
        answer=final.answer.values,
        explanation=final.answer.explanation,
        caveat=final.answer.caveat,
        citations=citations,
        stop_reason=out.stop_reason,
        stop_axis=out.axis,
        raw_answer=out.raw,
        error=out.error,
    )
    return finish(config, trajectory, governor, prediction, start)


def unique_pages(pairs: list[list[Any]]) -> list[list[Any]]:
    """`[[doc, page], ...]` without repeats, in order (what a tool result showed)."""
    out: list[list[Any]] = []
    for pair in pairs:
        if pair not in out:
            out.append(pair)
    return out
