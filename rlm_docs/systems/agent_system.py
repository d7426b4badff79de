"""`agent`: any program as an eval system, measured by the metering proxy.

`rlm-docs eval --system agent --agent-command "python my_agent.py" --model M [--sub-model M]`
runs the command once per question. It reads the question on stdin and prints its answer on
stdout (MADQA's JSON `{"answer": [...], "citations": [{"file", "page"}]}`, or free text, which
goes through MADQA's extraction step). Its model calls go to a metering proxy on 127.0.0.1 that
spends against the question's governor, so the question's budget refuses calls before they are
sent (the agent reads a 400 `budget_exceeded` error naming the axis) and its effort fields,
Kuiper curves and the report are those of any system. A call to the root URL is a step, a call
to the sub URL a sub-call; `max_steps` is enforced by the proxy.

The command gets, besides its own environment:
- `OPENAI_BASE_URL` (the root URL) and `OPENAI_API_KEY` (a placeholder: the API keys of the
  host are removed, so every call goes through the proxy);
- `RLM_DOCS_AGENT_URL`, `RLM_DOCS_AGENT_SUB_URL`: the root and sub base URLs;
- `RLM_DOCS_AGENT_MODEL`, `RLM_DOCS_AGENT_SUB_MODEL`: the model names to ask for;
- `RLM_DOCS_AGENT_QUESTION`, `RLM_DOCS_AGENT_QUESTION_ID`, `RLM_DOCS_AGENT_CORPUS` (the store).

A non-zero exit is an `error` stop (the end of its stderr as the error); running past the wall
budget kills it (`budget` stop on `wall_s`); an agent that answered after the proxy refused one
of its calls is a `budget` stop on that call's axis. The trajectory holds one turn per root call (the
messages added since the previous root call, the reply, its usage); sub-calls are in the ledger.
"""

import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from rlm_docs.engine import Prediction
from rlm_docs.engine.records import Iteration, Metadata, Trajectory, TurnUsage
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, Governor
from rlm_docs.models import Completion
from rlm_docs.models.factory import secret_env
from rlm_docs.proxy import MeteringProxy
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
from rlm_docs.systems.proxied import finish, setup
from rlm_docs.systems.registry import register

STDERR_CHARS = 2_000
PLACEHOLDER_KEY = "rlm-docs-proxy"


@dataclass(frozen=True)
class AgentOptions:
    command: str | None = option(
        None,
        flag="--agent-command",
        metavar="CMD",
        recorded="always",
        strict=True,
        help="the program run per question (question on stdin, answer on stdout, model "
        "calls through a metering proxy at OPENAI_BASE_URL; see docs/proxy.md)",
    )


class AgentSystem:
    """An outside program per question behind the metering proxy (see module docstring)."""

    name = "agent"

    def __init__(self, config: SystemConfig) -> None:
        command = DECLARATION.typed(config.options).command
        if not isinstance(command, str) or not command.strip():
            raise ConfigError("system agent: give the program to run with --agent-command")
        try:
            self.argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigError(f"--agent-command {command!r}: {exc}") from None
        self.config = config
        proxied = setup(config, "system agent: model {spec}: a person cannot be proxied")
        self.root, self.sub, self.extractor = proxied.root, proxied.sub, proxied.extractor

    def _env(self, proxy: MeteringProxy, qid: str, question: Question) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in secret_env()}
        root, sub = proxy.question_url(qid, "root"), proxy.question_url(qid, "sub")
        return env | {
            "OPENAI_BASE_URL": root,
            "OPENAI_API_KEY": PLACEHOLDER_KEY,
            "RLM_DOCS_AGENT_URL": root,
            "RLM_DOCS_AGENT_SUB_URL": sub,
            "RLM_DOCS_AGENT_MODEL": self.root.model,
            "RLM_DOCS_AGENT_SUB_MODEL": self.sub.model,
            "RLM_DOCS_AGENT_QUESTION": question.question,
            "RLM_DOCS_AGENT_QUESTION_ID": question.id,
            "RLM_DOCS_AGENT_CORPUS": str(self.config.corpus.path or ""),
        }

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Run the program once for `question`; its failures are predictions, not crashes."""
        start = time.perf_counter()
        qid = question.id or "question"
        prediction = Prediction(question=question.question, question_id=question.id)
        proxy = MeteringProxy([self.root, self.sub], ledger=governor.ledger, record=True)
        proxy.meter.attach(qid, governor)
        value = ""
        with proxy:
            left = governor.deadline()
            try:
                done = subprocess.run(
                    self.argv,
                    input=question.question,
                    env=self._env(proxy, qid, question),
                    capture_output=True,
                    text=True,
                    timeout=None if left is None else max(left - time.monotonic(), 0.0),
                )
            except subprocess.TimeoutExpired as exc:
                prediction.stop_reason, prediction.stop_axis = "budget", "wall_s"
                value = _text(exc.stdout)
            except OSError as exc:
                raise ConfigError(f"--agent-command {shlex.join(self.argv)}: {exc}") from None
            else:
                value = done.stdout
                if done.returncode != 0:
                    prediction.stop_reason = "error"
                    tail = done.stderr.strip()[-STDERR_CHARS:]
                    prediction.error = f"AgentFailed: exit code {done.returncode}: {tail}"
        refused = proxy.meter.refusals.get(qid)
        if refused is not None and prediction.stop_reason == "final":
            prediction.stop_reason, prediction.stop_axis = "budget", refused
        exchanges = (proxy.meter.exchanges or {}).get(qid, [])
        traj = self._trajectory(question, exchanges)
        return finish(
            self.config, self.extractor, question, governor, prediction, value, traj, start
        )

    def _trajectory(
        self, question: Question, exchanges: list[tuple[str, list[dict], Completion]]
    ) -> Trajectory:
        meta = Metadata(
            root_model=self.root.spec,
            max_depth=0,
            backend=self.root.backend,
            environment_type=self.name,
            environment_kwargs={"command": shlex.join(self.argv)},
            sub_model=self.sub.spec,
            question=question.question,
            question_id=question.id,
            system=self.name,
            budget=vars(self.config.budget),
        )
        traj = Trajectory(meta)
        seen: list[dict] = []
        for role, messages, completion in exchanges:
            if role != "root":
                continue
            new = messages[len(seen) :] if messages[: len(seen)] == seen else messages
            seen = [*messages, {"role": "assistant", "content": completion.text}]
            usage = completion.usage
            traj.iterations.append(
                Iteration(
                    iteration=len(traj.iterations) + 1,
                    prompt=new,
                    response=completion.text,
                    usage=TurnUsage(usage.input_tokens, usage.output_tokens, completion.cost_usd),
                )
            )
        return traj


def _text(data: Any) -> str:
    if isinstance(data, bytes):
        return data.decode("utf-8", "replace")
    return data or ""


def _calls(budget: Budget, options: AgentOptions) -> Bound:
    """Its root calls are steps (refused past --max-steps by the proxy), the extraction call,
    plus its sub-calls."""
    return root_bound(budget, 1) + sub_call_bound(budget)


DECLARATION = register(
    Declaration(
        name=AgentSystem.name,
        summary="any program run per question (question on stdin, answer on stdout), its "
        "model calls through a metering proxy that spends the question's budget",
        settings="whatever the program does; steps and sub-calls as the proxy counts them",
        factory=AgentSystem,
        options=AgentOptions,
        calls=_calls,
        reading=CELLS,
        offline="the program's own (with --model offline, the offline model answers its calls)",
        prompts=("extract",),
    )
)
