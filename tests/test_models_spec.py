"""Model-string parsing: one place, clear errors naming the string."""

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.models import ModelSpec, parse_spec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("openai:gpt-5-mini", ModelSpec("openai", "gpt-5-mini")),
        ("mistral:mistral-large-latest", ModelSpec("mistral", "mistral-large-latest")),
        (
            "openai:qwen3@http://127.0.0.1:8000/v1",
            ModelSpec("openai", "qwen3", "http://127.0.0.1:8000/v1"),
        ),
        ("offline", ModelSpec("offline", "offline")),
        ("scripted:replies/run 1.json", ModelSpec("scripted", "replies/run 1.json")),
        ("  openai:org/model:tag  ", ModelSpec("openai", "org/model:tag")),
    ],
)
def test_parse_valid_specs(text: str, expected: ModelSpec) -> None:
    assert parse_spec(text) == expected


def test_spec_round_trips_to_string() -> None:
    for text in ("openai:qwen3@http://127.0.0.1:8000/v1", "offline", "mistral:m"):
        assert str(parse_spec(text)) == text


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("gpt-5-mini", "expected BACKEND:MODEL"),
        ("anthropic:claude", "expected BACKEND:MODEL"),
        ("openai:", "model name after 'openai:' is empty"),
        ("openai:m@ftp://host", "must start with http"),
        ("scripted:", "scripted needs a file"),
        ("", "expected BACKEND:MODEL"),
    ],
)
def test_parse_invalid_specs_name_the_string(text: str, fragment: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_spec(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)
