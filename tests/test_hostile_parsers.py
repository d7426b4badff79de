"""Every parser that reads model or document text is linear: 1 MB adversarial inputs.

Each input is built to trigger the backtracking that made these parsers quadratic (a final
answer of backticks and newlines, one long word before a citation, long runs of spaces,
digits and commas). The suite's per-test timeout guards them; the results are also checked,
so a parser made fast by giving up is caught too. Timings are in benchmarks/bench_hostile.py.
"""

import pytest

from rlm_docs.answer_parsing import cited_pages, heuristic_answer, parse_answer
from rlm_docs.engine.parsing import find_code_blocks, find_final
from rlm_docs.eval.judge import parse_verdict
from rlm_docs.eval.workload_scoring import numbers, pair_set
from rlm_docs.systems.replies import read_reply

MB = 1_000_000


@pytest.mark.parametrize(
    "text",
    [
        "```" + "\n" * MB,
        "`\n" * (MB // 2),
        "```json\n" * (MB // 8),
        "a" * MB,
        "a" + " " * MB + "x",
        "[" * MB,
        "1" + ",111" * (MB // 4),
        "SEARCH: a" + " " * MB + "b",
        "FINAL(" * (MB // 6),
    ],
    ids=[
        "backticks-newlines",
        "ticks",
        "json-fences",
        "long-word",
        "spaces",
        "deep-json",
        "commas",
        "search-spaces",
        "final-open",
    ],
)
def test_model_text_parsers_survive_one_megabyte(text: str) -> None:
    find_code_blocks(text)
    find_final(text)
    parse_answer(text)
    heuristic_answer(text)
    read_reply(text)
    parse_verdict(text)
    pair_set(text)
    numbers(text)


def test_results_are_still_right_after_the_adversarial_part() -> None:
    word = "x" * MB
    assert cited_pages(f"{word} see acme_10k.pdf, page 12") == [{"file": "acme_10k", "page": 12}]
    fenced = "noise " * 1000 + '```json\n{"answer": ["$5"], "citations": [["memo", 2]]}\n```'
    assert parse_answer("```" + "\n" * MB + "```\n" + fenced) is not None
    parsed = parse_answer(fenced)
    assert (parsed.values, parsed.citations) == (["$5"], [{"file": "memo", "page": 2}])
    assert find_final("`\n" * (MB // 2) + "FINAL(42)").value == "42"
    reply = read_reply("\n" * MB + "SEARCH:   net sales 2019   \n")
    assert reply.query == "net sales 2019"
    assert numbers("total 1" + ",111" * 1000 + " units") == {"1" + "111" * 1000}


@pytest.mark.parametrize(
    "text",
    [
        "a" * MB,
        "fy" * (MB // 2),
        "defined as " * (MB // 11),
        "average " * (MB // 8),
        "percent change in " + "a " * (MB // 2),
        "year " + "a " * (MB // 2),
    ],
)
def test_question_parsers_survive_one_megabyte(text: str) -> None:
    # the offline model parses callers' questions on the host (MCP `ask`, serve)
    from rlm_docs.offline.computation import computation
    from rlm_docs.offline.question import asked_decimals, asked_unit

    assert asked_decimals(text) is None and asked_unit(text) == ""
    assert computation(text) is None
    tail = " What was the gross margin? Round to two decimal places."
    assert asked_decimals(text + tail) == 2
    margin = computation(text + " what is the gross % margin")
    assert (margin is None) == ("average" in text)  # a margin "average" asks for is not one
