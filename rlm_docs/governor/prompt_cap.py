"""A hard cap on the size of one call's prompt, checked in O(messages) before tokenizing.

Model code decides what it sends to `llm_query`; without a cap a 10 MB prompt costs the host
seconds of tokenizing (even when the budget then refuses it) and memory in the trajectory.
2,000,000 characters (about 500k tokens) is above every supported model's context window, so
the cap refuses only prompts no provider would accept anyway.
"""

from typing import Any

from rlm_docs.errors import ModelError

MAX_PROMPT_CHARS = 2_000_000


class PromptTooLarge(ModelError):
    """A prompt over MAX_PROMPT_CHARS; raised before the prompt is tokenized or sent."""

    def __init__(self, chars: int, limit: int = MAX_PROMPT_CHARS) -> None:
        self.chars = chars
        self.limit = limit
        super().__init__(
            f"prompt too large: {chars:,} characters > the per-call limit of {limit:,}; "
            "split the text and query the parts"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.chars, self.limit))


def check_prompt_size(messages: list[dict[str, Any]], limit: int = MAX_PROMPT_CHARS) -> None:
    """Raise PromptTooLarge when the messages' text content is over `limit` characters."""
    total = 0
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):  # content parts: only their text counts
            texts = (part.get("text") for part in content if isinstance(part, dict))
            total += sum(len(text) for text in texts if isinstance(text, str))
    if total > limit:
        raise PromptTooLarge(total, limit)
