"""Retry policy: full-jitter bounds, Retry-After parsing, attempt and time limits."""

import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.models import ModelUnavailableError, RetryPolicy
from rlm_docs.models.errors import parse_context_numbers
from rlm_docs.models.retry import TransientError, call_with_retries, retry_after_seconds


def test_full_jitter_stays_within_exponential_cap() -> None:
    policy = RetryPolicy(base_delay_s=0.1, max_delay_s=1.0)
    for attempt, cap in [(1, 0.1), (2, 0.2), (3, 0.4), (4, 0.8), (5, 1.0), (9, 1.0)]:
        waits = [policy.backoff(attempt, None) for _ in range(300)]
        assert all(0.0 <= w <= cap for w in waits)
        assert max(waits) > cap * 0.8 and min(waits) < cap * 0.2  # really jittered
    assert policy.backoff(1, 7.5) == 7.5  # the server's word wins


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "150", "retry-after": "9"}, 0.15),
        ({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_header_parsing(headers, expected) -> None:
    assert retry_after_seconds(headers) == expected


def test_stops_after_max_attempts_and_counts_them() -> None:
    waits: list[float] = []
    calls = []

    def flaky(timeout_s: float | None) -> str:
        calls.append(1)
        if len(calls) < 3:
            raise TransientError("HTTP 503")
        return "ok"

    policy = RetryPolicy(max_attempts=3, base_delay_s=0.0, sleep=waits.append)
    assert call_with_retries(flaky, policy, "openai:m") == ("ok", 3)
    assert len(waits) == 2

    calls.clear()
    policy = RetryPolicy(max_attempts=2, base_delay_s=0.0, sleep=waits.append)
    with pytest.raises(ModelUnavailableError, match=r"openai:m: gave up after 2 attempt"):
        call_with_retries(flaky, policy, "openai:m")


def test_total_time_bound_refuses_a_too_long_retry_after() -> None:
    def always(timeout_s: float | None) -> str:
        raise TransientError("HTTP 429", retry_after_s=60.0)

    policy = RetryPolicy(max_total_s=5.0, sleep=lambda s: pytest.fail("must not sleep 60 s"))
    with pytest.raises(ModelUnavailableError, match="gave up after 1 attempt"):
        call_with_retries(always, policy, "mistral:m")


def test_non_transient_errors_pass_through_unretried() -> None:
    calls = []

    def broken(timeout_s: float | None) -> str:
        calls.append(1)
        raise ValueError("bug")

    with pytest.raises(ValueError):
        call_with_retries(broken, RetryPolicy(), "x")
    assert len(calls) == 1


@pytest.mark.parametrize("kwargs", [{"max_attempts": 0}, {"base_delay_s": -1}])
def test_policy_validation(kwargs: dict) -> None:
    with pytest.raises(ConfigError):
        RetryPolicy(**kwargs)


def test_context_numbers_from_provider_wordings() -> None:
    assert parse_context_numbers(
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens"
    ) == (9000, 8192)
    assert parse_context_numbers("input is too long") == (None, None)
