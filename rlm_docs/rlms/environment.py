"""`SandboxEnv`: rlms' environment protocol (`BaseEnv`: `setup`, `load_context`,
`execute_code` -> `REPLResult`) over the rlm-docs sandbox.

rlms' default `local` environment runs model code with `exec` in the host process; here it runs
in a confined worker process (RestrictedPython, no network, resource limits: see
`sandbox`). `llm_query`, `llm_query_batched`, `rlm_query` and `rlm_query_batched` are
host functions: the worker asks the host, and the host sends the request to rlms' LM handler
over its socket protocol, so the worker never holds a socket or a key. rlms passes a recursion
callback only to its own `local` / `ipython` / `docker` environments, so here `rlm_query`
falls back to `llm_query`, as rlms documents for environments without recursion.

The answer protocol is rlms': code sets `answer["content"]` and `answer["ready"] = True`; after
each cell the host reads `answer` and returns its content as `REPLResult.final_answer`.
"""

import time
from dataclasses import fields
from typing import Any

from rlm.core.comms_utils import LMRequest, send_lm_request, send_lm_request_batched
from rlm.core.types import REPLResult, RLMChatCompletion
from rlm.environments.base_env import NonIsolatedEnv

from rlm_docs.errors import ConfigError
from sandbox import Limits, Sandbox

_FRESH_ANSWER = {"content": "", "ready": False}
# Makes `answer` JSON-able for the host when code stored something else in it.
_PLAIN_ANSWER = (
    'answer = {"content": str(answer.get("content", "")), "ready": bool(answer.get("ready"))} '
    'if isinstance(answer, dict) else {"content": "", "ready": False}'
)


def _limits(value: Limits | dict[str, Any] | None) -> Limits:
    if value is None or isinstance(value, Limits):
        return value or Limits()
    known = {f.name for f in fields(Limits)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise ConfigError(f"sandbox limits: unknown field {unknown[0]!r} (known: {sorted(known)})")
    return Limits(**value)


class SandboxEnv(NonIsolatedEnv):
    """An rlms environment whose code runs in the rlm-docs sandbox (see module docstring).

    `limits`: the sandbox's `Limits` (or a dict of its fields); the other arguments are the
    ones rlms passes to every environment. `custom_tools` are refused: host callables would
    run model-chosen arguments outside the sandbox, which this environment exists to prevent.
    """

    def __init__(
        self,
        lm_handler_address: tuple[str, int] | None = None,
        context_payload: dict | list | str | None = None,
        setup_code: str | None = None,
        persistent: bool = False,
        depth: int = 1,
        limits: Limits | dict[str, Any] | None = None,
        custom_tools: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if persistent:
            raise ConfigError("the rlm-docs sandbox environment does not support persistent=True")
        if custom_tools:
            raise ConfigError(
                "the rlm-docs sandbox environment takes no custom_tools: they would run "
                "outside the sandbox"
            )
        kwargs.pop("custom_sub_tools", None)
        kwargs.pop("subcall_fn", None)
        super().__init__(persistent=persistent, depth=depth, **kwargs)
        self.lm_handler_address = lm_handler_address
        self.limits = _limits(limits)
        self._pending: list[RLMChatCompletion] = []
        self._context: dict | list | str | None = None
        self.sandbox: Sandbox | None = None
        self.setup()
        if context_payload is not None:
            self.load_context(context_payload)
        if setup_code:
            self.execute_code(setup_code)

    # -- host functions (run in the host, called by code in the worker) -----------------------

    def _llm_query(self, prompt: str, model: str | None = None) -> str:
        if not self.lm_handler_address:
            return "Error: No LM handler configured"
        try:
            request = LMRequest(prompt=prompt, model=model, depth=self.depth)
            response = send_lm_request(self.lm_handler_address, request)
        except Exception as exc:  # noqa: BLE001 - reported to the model, as rlms does
            return f"Error: LM query failed - {exc}"
        if not response.success or response.chat_completion is None:
            return f"Error: {response.error}"
        self._pending.append(response.chat_completion)
        return response.chat_completion.response

    def _llm_query_batched(self, prompts: list[str], model: str | None = None) -> list[str]:
        if not isinstance(prompts, list):
            raise TypeError("llm_query_batched takes a list of prompts")
        if not self.lm_handler_address:
            return ["Error: No LM handler configured"] * len(prompts)
        try:
            responses = send_lm_request_batched(
                self.lm_handler_address, prompts, model=model, depth=self.depth
            )
        except Exception as exc:  # noqa: BLE001
            return [f"Error: LM query failed - {exc}"] * len(prompts)
        out = []
        for response in responses:
            if not response.success or response.chat_completion is None:
                out.append(f"Error: {response.error}")
            else:
                self._pending.append(response.chat_completion)
                out.append(response.chat_completion.response)
        return out

    # -- rlms' environment protocol -----------------------------------------------------------

    def setup(self) -> None:
        """Start the sandbox worker with the host functions and an empty `answer`."""
        self.sandbox = Sandbox(
            self.limits,
            functions={
                "llm_query": self._llm_query,
                "llm_query_batched": self._llm_query_batched,
                "rlm_query": self._llm_query,
                "rlm_query_batched": self._llm_query_batched,
            },
        )
        self.sandbox.set("answer", dict(_FRESH_ANSWER))

    def load_context(self, context_payload: dict | list | str) -> None:
        """Bind `context` in the worker (a copy: JSON-able values only, as rlms' isolated
        environments require)."""
        assert self.sandbox is not None
        try:
            self.sandbox.set("context", context_payload)
        except TypeError as exc:
            raise ConfigError(f"rlms context: {exc}") from None
        self._context = context_payload

    def _final_answer(self) -> str | None:
        assert self.sandbox is not None
        try:
            value = self.sandbox.get("answer")
        except KeyError:
            value = None
        except ValueError:  # not JSON-able: make it so in the worker, then read again
            self.sandbox.run(_PLAIN_ANSWER)
            value = self.sandbox.get("answer")
        if not isinstance(value, dict):
            self.sandbox.set("answer", dict(_FRESH_ANSWER))
            return None
        if not value.get("ready"):
            return None
        self.sandbox.set("answer", dict(_FRESH_ANSWER))
        content = value.get("content", "")
        return content if isinstance(content, str) else str(content)

    def execute_code(self, code: str) -> REPLResult:
        """Run one cell in the worker; its sub-calls and any final answer come back with it."""
        assert self.sandbox is not None
        started = time.perf_counter()
        self._pending = []
        cell = self.sandbox.run(code)
        stderr = cell.error or ""
        if cell.restarted:  # a timeout or a crash: the new worker gets rlms' names back
            self.sandbox.set("answer", dict(_FRESH_ANSWER))
            if self._context is not None:
                self.sandbox.set("context", self._context)
            stderr += " (`context` and `answer` were bound again)"
        final = self._final_answer()
        return REPLResult(
            stdout=cell.stdout,
            stderr=stderr,
            locals={},
            execution_time=time.perf_counter() - started,
            rlm_calls=list(self._pending),
            final_answer=final,
        )

    def cleanup(self) -> None:
        """Stop the worker (rlms calls this when a completion ends)."""
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
