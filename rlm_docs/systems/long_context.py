"""`long-context`: the whole corpus in one call (the RLM paper's "base model" baseline).

The rendered corpus goes into a single root call. When it does not fit, the largest
page-aligned prefix that does is sent instead, ending with a truncation note; how much was kept
is recorded in the prediction's `info["context"]` and the trajectory. The window is the model's
`context_window` from the price/model table (or the `context_window` option), less a reply
allowance; a `max_input_tokens` budget shrinks it further, and so does the governor's cap on
prompt characters (`MAX_PROMPT_CHARS`, below a 1M-token window), so the governor is never asked
for a call it must refuse on size. Dollar limits stay hard: a refused call is a `budget` stop.
A corpus cut to fit `max_input_tokens` is the budget's doing: the answer is a `forced` stop on
`input_tokens`; a cut to fit the model's window is recorded (`info["context"]`) but no budget's.
"""

import time
from dataclasses import dataclass
from typing import Any

from rlm_docs.call_purpose import Purpose
from rlm_docs.engine.citation_check import validate
from rlm_docs.engine.prediction import Prediction
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget, Governor
from rlm_docs.governor.prompt_cap import MAX_PROMPT_CHARS
from rlm_docs.models import context_window_of, make_client
from rlm_docs.offline.baselines import long_context_reply
from rlm_docs.questions import Question
from rlm_docs.systems.base import SystemConfig, answer_call, finish, new_trajectory
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option
from rlm_docs.systems.registry import register
from rlm_docs.systems.replies import answer_format
from rlm_docs.systems.windows import fit_prefix
from rlm_docs.templates import render
from rlm_docs.tokens import count_message_tokens

REPLY_TOKENS = 8192
# count_message_tokens adds 4 per message + 3; joining the prompt's parts may merge a token.
MESSAGE_OVERHEAD = 8


def context_window_option() -> Any:
    """The `--context-window` field of every system that fits text into the model's window
    (a fresh dataclass field each call: a field belongs to one class)."""
    return option(
        None,
        flag="--context-window",
        minimum=64,
        metavar="TOKENS",
        help="the model's window (default: the price/model table)",
    )


@dataclass(frozen=True)
class LongContextOptions:
    context_window: int | None = context_window_option()
    reply_tokens: int = option(REPLY_TOKENS)


def model_window(client: Any, given: int | None, flag: str = "--context-window") -> int:
    """The window to plan with: `given` (the option) if set, else the model table's;
    ConfigError if neither is known (naming the model and how to fix it)."""
    window = given or context_window_of(client)
    if not window:
        raise ConfigError(
            f"model {client.spec}: context window unknown; add 'context_window' to its "
            f"price-table entry (RLM_DOCS_PRICES) or pass {flag} N"
        )
    return int(window)


class LongContext:
    """Everything (or the prefix that fits) in one call."""

    name = "long-context"

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.corpus = config.corpus
        self.client = make_client(
            config.model, cache=config.cache
        )  # offline recognises baseline prompts
        options = DECLARATION.typed(config.options)
        self.window = model_window(self.client, options.context_window)
        self.reply_tokens = options.reply_tokens
        if self.reply_tokens >= self.window:
            raise ConfigError(
                f"long-context: reply allowance {self.reply_tokens} must be below the context "
                f"window {self.window}"
            )

    def _prompt(self, question: str, context: str, truncation: str) -> str:
        return render(
            "long_context",
            num_documents=len(self.corpus.documents),
            num_pages=self.corpus.total_pages,
            truncation=truncation,
            context=context,
            question=question,
            answer_format=answer_format("the [FILE: ...] marker"),
        )

    def _fit(self, question: str) -> tuple[str, str, dict[str, Any]]:
        """The prompt with the largest context that fits, the same prompt with the context
        elided (for the trajectory), and the record of what was kept."""
        limit, limited_by = self.window - self.reply_tokens, "context_window"
        max_input = self.config.budget.max_input_tokens
        if max_input is not None and max_input < limit:
            limit, limited_by = max_input, "max_input_tokens"
        note = (
            " Only the first {kept} of {total} pages fit in your context window; the rest of "
            "the corpus is cut off where the text says so."
        )
        pages = self.corpus.total_pages
        shell = self._prompt(question, "", note.format(kept=pages, total=pages))
        available = limit - count_message_tokens([{"content": shell}]) - MESSAGE_OVERHEAD
        room = MAX_PROMPT_CHARS - len(shell)  # the governor refuses longer prompts outright
        prefix = fit_prefix(self.corpus, max(available, 0), max_chars=max(room, 0))
        if prefix.truncated_by == "chars":
            limited_by = "max_prompt_chars"
        truncation = note.format(kept=prefix.pages, total=prefix.total_pages)
        truncation = truncation if prefix.truncated else ""
        prompt = self._prompt(question, prefix.text, truncation)
        elided = f"[... rendered corpus: {prefix.pages} pages, {prefix.tokens} tokens ...]"
        info = {
            "context_window": self.window,
            "limit_tokens": limit,
            "limited_by": limited_by,
            "corpus_tokens": self.corpus.total_tokens,
            "context_tokens": prefix.tokens,
            "pages_kept": prefix.pages,
            "pages_total": prefix.total_pages,
            "truncated": prefix.truncated,
            "last_page": prefix.last if prefix.truncated else None,
        }
        return prompt, self._prompt(question, elided, truncation), info

    def answer(self, question: Question, governor: Governor) -> Prediction:
        """Fit, call once, parse; a refused or failed call is a `budget` / `error` stop."""
        start = time.perf_counter()
        prompt, logged, context = self._fit(question.question)
        messages = [{"role": "user", "content": prompt}]
        trajectory = new_trajectory(self.config, self.name, question, context=context)
        record = trajectory.iteration([{"role": "user", "content": logged}])
        record.extra["context"] = context
        prediction = Prediction(
            question=question.question, question_id=question.id, info={"context": context}
        )
        purpose = Purpose("root", self.name, "long-context", question.question)
        reply = answer_call(
            self.client, trajectory, governor, messages, record, prediction, purpose=purpose
        )
        if reply is not None:
            prediction.citations, _ = validate(self.corpus, reply.answer.citations)
            if context["truncated"] and context["limited_by"] == "max_input_tokens":
                prediction.stop_reason, prediction.stop_axis = "forced", "input_tokens"
        return finish(self.config, trajectory, governor, prediction, start)


def _calls(budget: Budget, options: LongContextOptions) -> Bound:
    return Bound(1)  # one answering call


DECLARATION = register(
    Declaration(
        name=LongContext.name,
        summary="the whole rendered corpus (or the largest page-aligned prefix that fits the "
        "window) in one answering call",
        settings="window: the model table's (--context-window), less {reply_tokens} tokens "
        "for the reply",
        factory=LongContext,
        options=LongContextOptions,
        calls=_calls,
        reading=Reading(search_first=None, whole_context=True),
        offline={"long-context": long_context_reply},
        prompts=("long_context", "answer_format"),
    )
)
