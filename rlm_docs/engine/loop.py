"""One RLM run at one depth: the root model's turn loop over a sandboxed REPL.

Each turn: governor step -> root call -> the reply's code blocks run in order in the sandbox ->
the run ends if the `answer` dict is ready or a FINAL / FINAL_VAR marker is written outside code
-> otherwise the truncated outputs go back with the turn counter and the governor's notice.

Finishing by `answer["ready"] = True` follows three rules: a turn whose code raised an error
never finishes (`ready` is reset and the model sees the error); a finishing turn whose output
shows something the model has not seen (a warning, or a printed word or number that is neither
in its reply nor in the answer: `engine.finishing`) gets one confirmation turn that shows that
output and the whole answer, where the model may reply without code to keep it, change the
answer's fields, write FINAL(...), or set `ready` back to False (with `confirm_final=False`, or
when no step is left, the answer stands at once); any other finishing turn ends the run at once.
Warnings of the turn that ended a run which no turn showed the model are kept in
`Outcome.warnings` (the prediction's `info["warnings"]`).
FINAL / FINAL_VAR outside code always end the run at once.
When steps or budget run out there is one forced final turn, checked by the governor like any
call (so it can never spend past a dollar or token limit, nor start after the wall deadline);
if it is refused the run stops with `budget` and the caller builds the answer from the evidence
gathered so far. The top-level run's forced turn comes on top of `max_steps`; a child keeps its
last step for it, so a child never takes more root turns than its share. Under a wall budget the
top-level run keeps the last FORCED_WALL_SHARE of it for the forced turn: no new turn starts,
and cells stop, once only that share is left.

A final value crosses from the sandbox to the host cut to MAX_ANSWER_CHARS (in the worker, by
`Sandbox.get(max_chars=...)`: the `answer` dict, FINAL_VAR, and so every child's answer to its
parent's `rlm_query`; FINAL(text) is cut the same way on the host). Each cut is marked in the
text with how much was left out, which is how a parent model learns its child's answer was cut.
Without the cap, a 200,000,000-character FINAL_VAR cost the host 1.1 GB and a 400 MB trajectory.

With `anytime` shares, the top-level run asks for its best answer so far in a side turn each
time one more share of the budget is spent (`_anytime`); the side turns are recorded but not
kept in the conversation.

A child run (`rlm_query`) is the same loop one level deeper with its own sandbox and governor.
A child that cannot pay for its first call is refused before its sandbox starts, and the
parent's `rlm_query` raises that `BudgetExceeded`. Model-side failures of any kind (a value
that cannot be copied out of the worker, a broken reply) end the run with `error`, never raise.
"""

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rlm_docs.call_purpose import ENGINE, Purpose
from rlm_docs.engine import finishing, prompts
from rlm_docs.engine.feedback import UNREADY, unread_warning
from rlm_docs.engine.feedback import render as render_feedback
from rlm_docs.engine.feedback import warning as cell_warning
from rlm_docs.engine.host_functions import HostFunctions
from rlm_docs.engine.memory import Memory
from rlm_docs.engine.parsing import find_code_blocks, find_final, prose
from rlm_docs.engine.records import (
    CellResult,
    CodeBlock,
    Iteration,
    Metadata,
    Result,
    Trajectory,
    TurnUsage,
)
from rlm_docs.engine.trajectory import TrajectoryWriter
from rlm_docs.errors import RlmDocsError
from rlm_docs.governor import BudgetExceeded, Governor
from rlm_docs.models import Client, Completion
from rlm_docs.repl import CorpusSandbox
from rlm_docs.templates import render
from sandbox import Limits
from sandbox.output import bounded
from sandbox.values import capped

# The REPL's `answer` dict: the answer record's fields (`rlm_docs.answer_record`) and `ready`.
EMPTY_ANSWER = {"values": [], "explanation": "", "caveat": "", "ready": False}
FORCED_WALL_SHARE = 0.1  # of the top-level run's wall budget, kept for the forced turn
# Characters (and values) of a final answer the host takes from the sandbox (docs/limits.md).
MAX_ANSWER_CHARS = 100_000


@dataclass
class Settings:
    """What every run of one `RLM` shares."""

    client: Client
    sub_client: Client
    prompt: str
    limits: Limits | None
    child_share: float
    max_output_chars: int
    on_turn: Callable[[int, Iteration], None] | None = None
    sub_calls: bool = True
    confirm_final: bool = True
    anytime: tuple[float, ...] = ()  # shares of the budget at which to ask for an answer
    memory: Memory | None = None  # the corpus memory across questions, when on
    # prompt -> the reply a sub-call gets instead of the model's (`eval.attribute`), or None
    override: Callable[[str], str | None] | None = None


@dataclass
class Outcome:
    """How a run ended: the raw final value (str, dict or list) and the evidence it gathered."""

    value: Any = None
    stop_reason: str = "final"
    stop_axis: str | None = None  # the limit that ended the run (see `Prediction.stop_axis`)
    error: str | None = None
    cited: list[dict[str, Any]] = field(default_factory=list)
    read: list[dict[str, Any]] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)
    trajectory: TrajectoryWriter | None = None
    refusal: BudgetExceeded | None = None  # why the last call was refused, if one was
    anytime: list[dict[str, Any]] = field(default_factory=list)  # see `TurnLoop._anytime`
    # The engine's warnings on the cells of the turn that ended the run, which no later turn
    # showed the model (e.g. a page cited unread): kept with the answer (`info["warnings"]`).
    warnings: list[str] = field(default_factory=list)


def answer_text(value: Any) -> str:
    """A final value as the string a parent's `rlm_query` returns."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


ERROR_CHARS = 2_000


def _error_text(exc: BaseException) -> str:
    """`Type: message`, capped: messages can quote model input of any size."""
    return _truncate(f"{type(exc).__name__}: {exc}", ERROR_CHARS)


def _truncate(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... [{len(text) - limit} more characters truncated]"


def _record_reply(record: Iteration, reply: Completion) -> None:
    record.response = reply.text
    record.usage = TurnUsage(reply.usage.input_tokens, reply.usage.output_tokens, reply.cost_usd)
    if reply.usage.cached_tokens:  # prompt-cache reads, for exports and traces of the turn
        record.usage.extra["cached_tokens"] = reply.usage.cached_tokens


class TurnLoop:
    """The turn loop of one question at one depth (see module docstring); a child `rlm_query`
    is another `TurnLoop` one level deeper. (An eval run's directory is `eval.rundir
    .EvalRunDir`, a run as the report reads it `eval.report.ReportedRun`, a question answered
    for a network caller `serve.served_runs.ServedRun`.)"""

    def __init__(
        self,
        settings: Settings,
        gov: Governor,
        question: str,
        *,
        corpus: Any = None,
        store: Path | None = None,
        context: str | None = None,
        question_id: str | None = None,
    ) -> None:
        self.s = settings
        self.gov = gov
        self.question = question
        self.corpus = corpus
        self.store = store
        self.context = context
        self.question_id = question_id
        spawn = self._spawn if gov.depth < gov.budget.max_depth else None
        self.host = HostFunctions(
            gov,
            settings.sub_client,
            corpus=corpus,
            spawn=spawn,
            allowed=[settings.client],
            sub_calls=settings.sub_calls,
            memory=settings.memory if corpus is not None else None,
            question=(question_id, question),
            override=settings.override,
            purpose=self._purpose("sub"),
        )
        # Notes left by earlier questions, announced in the first message (memory on only).
        self.notes_before = None if self.host.memory is None else self.host.memory.note_count()
        self.max_steps = gov.budget.max_steps
        # The top-level run's checkpoints still to come (a child's answer is not the run's).
        self._checkpoints = sorted(settings.anytime) if gov.depth == 0 else []
        self._log_marks: dict[str, int] = {}  # entries of each page log recorded so far
        self.traj = TrajectoryWriter(
            Metadata(
                root_model=settings.client.model,
                max_depth=gov.budget.max_depth,
                max_iterations=self.max_steps,
                backend=settings.client.backend,
                backend_kwargs={"model_name": settings.client.model},
                environment_type="rlm-docs-sandbox",
                environment_kwargs={
                    "corpus": str(store) if store else None,
                    "context_chars": len(context) if context is not None else None,
                    "limits": asdict(settings.limits) if settings.limits is not None else None,
                },
                other_backends=[settings.sub_client.spec],
                sub_model=settings.sub_client.spec,
                question=question,
                question_id=question_id,
                prompt_name=settings.prompt,
                sub_calls=settings.sub_calls,
                budget=asdict(gov.budget),
                depth=gov.depth,
            )
        )

    def _close(self, record: Iteration) -> None:
        """End an iteration record and show it to the `on_turn` observer (e.g. `ask -v`)."""
        self.traj.close(record)
        if self.s.on_turn is not None:
            self.s.on_turn(self.gov.depth, record)

    # -- recursion ----------------------------------------------------------------------------

    def _spawn(self, prompt: str, context: str | None) -> tuple[str, Trajectory]:
        """Run a child; BudgetExceeded (raised in the parent's code) if it cannot make a call."""
        child_gov = self.gov.child(self.s.child_share)
        child = TurnLoop(
            self.s,
            child_gov,
            prompt,
            corpus=self.corpus if context is None else None,
            store=self.store if context is None else None,
            context=context,
            question_id=self.question_id,
        )
        child.gov.affordable(self.s.client, child._first_messages(), role="root")
        outcome = child.execute()
        with self.host._lock:  # the question's memory use, children included
            self.host.reused += child.host.reused
            self.host.noted += child.host.noted
        if outcome.refusal is not None and child_gov.totals()["calls"] == 0:
            raise outcome.refusal
        text = answer_text(outcome.value)
        totals = child_gov.totals()
        child.traj.result(
            Result(
                answer=text,
                steps=totals["steps"],
                input_tokens=totals["input_tokens"],
                output_tokens=totals["output_tokens"],
                cost_usd=totals["cost_usd"],
                stop_reason=outcome.stop_reason,
                stop_axis=outcome.stop_axis,
                error=outcome.error,
                variables=outcome.variables,
            )
        )
        return text, child.traj.trajectory

    # -- prompts ------------------------------------------------------------------------------

    def _system(self) -> str:
        steps = self.max_steps if self.max_steps is not None else "unlimited"
        cap = self.s.max_output_chars
        if self.corpus is not None:
            return prompts.root_prompt(
                self.s.prompt, self.question, self.corpus, steps, cap, sub_calls=self.s.sub_calls
            )
        return prompts.context_prompt(self.s.prompt, self.question, self.context or "", steps, cap)

    def _first_messages(self) -> list[dict[str, str]]:
        """The messages of the first root call: system prompt and the question (with the
        memory's tools and its count of notes when a memory is on)."""
        first = prompts.turn(self.s.prompt, "first", question=self.question)
        if self.notes_before is not None and self._binds("notes"):  # madqa's names omit them
            first += "\n\n" + render("memory_first", count=self.notes_before)
        return [{"role": "system", "content": self._system()}, {"role": "user", "content": first}]

    def _feedback(self, blocks: list[CodeBlock]) -> str:
        return render_feedback(self.s.prompt, blocks, self.s.max_output_chars)

    # -- the loop -----------------------------------------------------------------------------

    def _binds(self, name: str) -> bool:
        return prompts.binds(self.s.prompt, name)

    def _prepare(self, sb: CorpusSandbox) -> None:
        """Bind the run's own names (at start and after a restart, never between cells)."""
        if self.context is not None:
            sb.set("context", self.context)
        if self._binds("answer"):
            sb.set("answer", dict(EMPTY_ANSWER))

    @staticmethod
    def _pages_read(sb: CorpusSandbox) -> list[dict[str, Any]]:
        """The pages the corpus helpers recorded (model code cannot reach that log)."""
        return [{"file": doc, "page": page} for doc, page in sb.pages_read()]

    def _new_pages(self, name: str, log: list[list[Any]]) -> list[list[Any]]:
        """The `[doc, page]` pairs of page log `name` added by the cell just run (the logs
        only grow, except that a restarted worker starts empty ones)."""
        seen = self._log_marks.get(name, 0)
        self._log_marks[name] = len(log)
        return log[seen:] if len(log) >= seen else log

    def _run_code(self, sb: CorpusSandbox, reply: str, record: Iteration) -> list[CodeBlock]:
        """Run the reply's blocks, recording each (with the engine's warning on it, if any)."""
        ran = []
        for code in find_code_blocks(reply):
            self.host.start_block()
            cited = len(self.host.cited)
            r = sb.run(code, deadline=self._work_deadline())
            if r.restarted:
                self._prepare(sb)
            note = self._unread_citations(sb, self.host.cited[cited:])
            block = CodeBlock(
                code,
                CellResult(
                    stdout=r.stdout or "",
                    stderr=r.error or "",
                    execution_time=round(r.duration_s, 4),
                    sub_calls=self.host.calls,
                    sub_calls_omitted=self.host.omitted,
                    restarted=r.restarted,
                    batches=self.host.block_batches,
                    read=self._new_pages("read", sb.pages_read()),
                    seen=self._new_pages("seen", sb.pages_seen()),
                    extra={"warning": note} if note else {},
                ),
            )
            record.code_blocks.append(block)
            ran.append(block)
        return ran

    def _unread_citations(self, sb: CorpusSandbox, new: list[dict[str, Any]]) -> str:
        """A note flagging pages this cell cited without having read them (allowed: a search
        snippet may be enough, but the model should know it has not seen the page)."""
        if not new:
            return ""
        read = {(doc, page) for doc, page in sb.pages_read()}
        unread = [c for c in new if (c["file"], c["page"]) not in read]
        if not unread:
            return ""
        return unread_warning([(c["file"], c["page"]) for c in unread])

    def _ready_answer(self, sb: CorpusSandbox) -> tuple[bool, Any, str | None]:
        """(ready, content, problem) of the `answer` dict."""
        try:
            answer = sb.get("answer", MAX_ANSWER_CHARS) if self._binds("answer") else None
        except KeyError:
            return False, None, None
        except ValueError as exc:  # e.g. nested too deeply to copy
            return False, None, f"`answer` cannot be read ({exc}); use plain strings and lists."
        if isinstance(answer, dict) and answer.get("ready"):
            return True, {k: v for k, v in answer.items() if k != "ready"}, None
        return False, None, None

    def _marker_value(self, sb: CorpusSandbox, reply: str) -> tuple[bool, Any, str | None]:
        """(done, value, problem) of a FINAL_VAR / FINAL marker written outside code."""
        final = find_final(reply)
        if final is None:
            return False, None, None
        if final.kind == "text":
            return True, capped(final.value, MAX_ANSWER_CHARS), None
        try:
            return True, sb.get(final.value, MAX_ANSWER_CHARS), None
        except ValueError as exc:
            return False, None, f"FINAL_VAR({final.value}): the value cannot be read ({exc})."
        except KeyError:
            return (
                False,
                None,
                (
                    f"FINAL_VAR({final.value}): no variable named {final.value!r} exists. Create it "
                    "in a ```repl``` block first (SHOW_VARS() lists your variables)."
                ),
            )

    def _final_value(
        self, sb: CorpusSandbox, reply: str, markers_first: bool = False
    ) -> tuple[bool, Any, str | None, bool]:
        """(done, value, problem, by_answer): the answer dict wins, then FINAL_VAR / FINAL
        outside code; on a confirmation turn (`markers_first`) a marker wins, since it is the
        model's last word on an answer it has just seen."""
        ready, content, problem = self._ready_answer(sb)
        if ready and not markers_first:
            return True, content, None, True
        done, value, marker_problem = self._marker_value(sb, reply)
        if done:
            return True, value, None, False
        if ready:
            return True, content, None, True
        return False, None, marker_problem or problem, False

    def _unready(self, sb: CorpusSandbox, answer: dict[str, Any]) -> str:
        """Undo `answer["ready"]` after a cell error; the note the model sees about it."""
        sb.set("answer", answer | {"ready": False})
        return UNREADY

    def _purpose(self, role: str, code_runs: bool = True) -> Purpose:
        """What a call of this run is for, handed to the model client as data."""
        return Purpose(
            role,
            system=ENGINE,
            prompt=self.s.prompt,
            question=self.question,
            sub_calls=self.s.sub_calls,
            corpus=self.corpus is not None,
            code_runs=code_runs,
        )

    def _call_root(self, messages: list[dict[str, Any]], code_runs: bool = True) -> Completion:
        """One root turn; `code_runs` is False on a turn whose code is never run."""
        return self.gov.call(
            self.s.client,
            list(messages),
            role="root",
            depth=self.gov.depth,
            purpose=self._purpose("root", code_runs),
        )

    def execute(self) -> Outcome:
        """Run the loop to an answer; never raises for model-side or budget failures."""
        outcome = Outcome(trajectory=self.traj)
        try:
            functions = {k: f for k, f in self.host.functions().items() if self._binds(k)}
            names = prompts.PROMPT_NAMES[self.s.prompt]
            with CorpusSandbox(
                limits=self.s.limits, corpus=self.store, functions=functions, names=names
            ) as sb:
                self._prepare(sb)
                self._loop(sb, outcome)
                outcome.read = self._pages_read(sb)
                outcome.variables = sb.variables()
        except Exception as exc:  # noqa: BLE001 - a failed run is a wrong answer, not a crash
            outcome.stop_reason, outcome.error = "error", _error_text(exc)
        outcome.cited = list(self.host.cited)
        return outcome

    def _work_deadline(self) -> float | None:
        """When ordinary turns and cells must stop: the wall deadline, less the share kept for
        the forced answering turn in the top-level run."""
        deadline, wall = self.gov.deadline(), self.gov.budget.max_wall_s
        if deadline is None or wall is None or self.gov.depth > 0:
            return deadline
        return deadline - FORCED_WALL_SHARE * wall

    def _out_of_steps(self) -> str | None:
        """The exhausted axis before a turn; takes the turn's step when there is none. A child
        with two or more steps keeps its last one for the forced turn."""
        axis = self.gov.exhausted()
        work_deadline = self._work_deadline()
        if axis is None and work_deadline is not None and time.monotonic() >= work_deadline:
            return "wall_s"
        if axis is None and self.gov.depth > 0:
            limit, left = self.gov.budget.max_steps, self.gov.steps_left()
            if limit is not None and limit >= 2 and left == 1:
                return "steps"
        if axis is None:
            try:
                self.gov.step()
            except BudgetExceeded as exc:
                axis = exc.axis
        return axis

    def _loop(self, sb: CorpusSandbox, outcome: Outcome) -> None:
        messages = self._first_messages()
        user = messages.pop()["content"]
        turn = 0
        feedback = ""
        pending: list[Any] = []  # the answer awaiting confirmation and its warnings, if any
        while True:
            if turn and not pending:
                self._anytime(sb, messages, feedback, turn, outcome)
            axis = self._out_of_steps()
            if axis is not None and pending:  # no step left to confirm: the answer stands
                outcome.value, outcome.stop_reason, outcome.stop_axis = pending[0], "final", axis
                outcome.warnings = pending[1]
                return
            if axis is not None:
                self._forced(sb, messages, feedback, axis, outcome)
                return
            turn += 1
            if turn > 1:
                user = prompts.turn(
                    self.s.prompt,
                    "confirm" if pending else "next",
                    turn=turn,
                    max_steps=self.max_steps if self.max_steps is not None else "unlimited",
                    feedback=feedback,
                    notice=self.gov.notice() or "",
                    question=self.question,
                )
            messages.append({"role": "user", "content": user})
            record = self.traj.iteration(prompt=[messages[-1]] if turn > 1 else list(messages))
            try:
                reply = self._call_root(messages)
            except BudgetExceeded as exc:
                messages.pop()
                self._close(record)
                record.notice = str(exc)
                self._forced(sb, messages, feedback, exc.axis, outcome)
                return
            except RlmDocsError as exc:
                self._close(record)
                outcome.stop_reason, outcome.error = "error", _error_text(exc)
                return
            _record_reply(record, reply)
            ran = self._run_code(sb, reply.text, record)
            confirming = bool(pending)
            if confirming:
                record.confirmation = True
            pending.clear()
            done, value, problem, by_answer = self._final_value(sb, reply.text, confirming)
            if done and by_answer and any(b.result.stderr for b in ran):
                done, problem = False, self._unready(sb, value)
            elif done and by_answer and not confirming and self._should_confirm(ran, reply, value):
                done, problem = False, self._confirm_text(value, self._feedback(ran))
                pending.extend([value, self._warnings(ran)])
            if done:
                record.final_answer = answer_text(value)
                self._close(record)
                outcome.value, outcome.stop_reason = value, "final"
                outcome.warnings = self._warnings(ran)
                return
            messages.append({"role": "assistant", "content": reply.text})
            feedback = self._feedback(ran) if ran or not problem else ""
            if problem:
                feedback = (feedback + "\n\n" if feedback else "") + problem
            record.notice = self.gov.notice()
            self._close(record)

    @staticmethod
    def _warnings(ran: list[CodeBlock]) -> list[str]:
        """The engine's warnings on a turn's cells, for an answer whose turn no later one
        showed the model."""
        return [w for b in ran if (w := cell_warning(b).strip())]

    def _should_confirm(self, ran: list[CodeBlock], reply: Completion, value: Any) -> bool:
        """A finishing turn gets one look at its output when that output shows something the
        model has not seen (`engine.finishing`)."""
        return self.s.confirm_final and finishing.needs_confirmation(ran, reply.text, value)

    def _confirm_text(self, value: Any, shown: str) -> str:
        """The confirmation question, quoting each of the answer's fields whole (the message
        bounded by the output cap) unless the output `shown` with it already holds it: printed
        and then quoted, a long answer came twice in one message."""
        record = value if isinstance(value, dict) else {"values": value}
        lines = []
        for key in ("values", "explanation", "caveat", "content"):
            text = answer_text(record.get(key)).strip()
            if not text or text == "[]":
                continue
            if text in shown:
                lines.append(f'answer["{key}"]: printed above (not repeated here)')
            else:
                lines.append(f'answer["{key}"] = {text}')
        content = "\n".join(lines) or 'answer["values"] = [] (no answer)'
        return bounded(render("turn_confirm", content=content), self.s.max_output_chars)

    def _spent(self) -> tuple[float, str | None]:
        """(share, axis): the largest share used of any limited axis, and which axis it is."""
        shares = [
            (row["share_used"], axis)
            for axis, row in self.gov.remaining().items()
            if axis != "depth" and row["share_used"] is not None
        ]
        return max(shares, default=(0.0, None))

    def _anytime(
        self,
        sb: CorpusSandbox,
        messages: list[dict[str, Any]],
        feedback: str,
        turn: int,
        outcome: Outcome,
    ) -> None:
        """Once a checkpoint share of the budget is spent (`anytime`), ask the model for its
        best answer so far in a side turn the conversation does not keep, recorded as its own
        stop event (an iteration with `extra["anytime"]` and an `outcome.anytime` entry), so
        one run gives the answer at several budgets. The side turn is a root call like any
        other, so the governor counts and bounds it; if the budget refuses it, the
        checkpoint is recorded with no answer and the run goes on as it would have."""
        share, axis = self._spent()
        crossed = [c for c in self._checkpoints if share >= c]
        if not crossed:
            return
        self._checkpoints = [c for c in self._checkpoints if share < c]
        text = render(
            "turn_anytime", feedback=feedback, spent=f"{share:.0%}", question=self.question
        )
        asked = [*messages, {"role": "user", "content": text}]
        record = self.traj.iteration(prompt=[asked[-1]])
        record.extra["anytime"] = crossed
        event: dict[str, Any] = {"shares": crossed, "share_used": share, "axis": axis}
        try:
            reply = self._call_root(asked, code_runs=False)
        except BudgetExceeded as exc:
            record.notice = str(exc)
            self._close(record)
            outcome.anytime.append(event | {"after_turn": turn, "answer": None})
            return
        except RlmDocsError as exc:
            record.notice = _error_text(exc)
            self._close(record)
            outcome.anytime.append(event | {"after_turn": turn, "answer": None})
            return
        _record_reply(record, reply)
        done, value, _ = self._marker_value(sb, reply.text)  # no code runs on this turn
        record.final_answer = answer_text(value if done else prose(reply.text))
        self._close(record)
        effort = self.gov.totals()
        outcome.anytime.append(
            event
            | {
                "after_turn": turn,
                "answer": record.final_answer,
                "steps": effort["root_calls"],
                "sub_calls": effort["sub_calls"],
                "input_tokens": effort["input_tokens"],
                "output_tokens": effort["output_tokens"],
                "cost_usd": effort["cost_usd"],
            }
        )

    def _forced(
        self,
        sb: CorpusSandbox,
        messages: list[dict[str, Any]],
        feedback: str,
        axis: str,
        outcome: Outcome,
    ) -> None:
        """One last turn asking for FINAL(...) now; `budget` if even that call is refused.
        `axis` (the limit that ended the loop) is the run's `stop_axis` either way."""
        outcome.stop_axis = axis
        reason = f"The {axis.replace('_', ' ')} budget is exhausted."
        text = render("turn_forced", feedback=feedback, reason=reason, question=self.question)
        messages.append({"role": "user", "content": text})
        record = self.traj.iteration(prompt=[messages[-1]])
        record.forced = True
        try:
            if self.gov.depth > 0:  # a child's forced turn is one of its steps
                self.gov.step()
            reply = self._call_root(messages, code_runs=False)
        except BudgetExceeded as exc:
            record.notice = str(exc)
            self._close(record)
            outcome.stop_reason, outcome.refusal = "budget", exc
            return
        except RlmDocsError as exc:
            self._close(record)
            outcome.stop_reason, outcome.error = "error", _error_text(exc)
            return
        _record_reply(record, reply)
        done, value, _, _ = self._final_value(sb, reply.text)
        outcome.value = value if done else prose(reply.text)  # no code runs on this turn
        record.final_answer = answer_text(outcome.value)
        self._close(record)
        outcome.stop_reason = "forced"
