"""The finishing rule on records alone: which finishing outputs earn a confirmation turn."""

from rlm_docs.engine.finishing import needs_confirmation, unseen
from rlm_docs.engine.records import CellResult, CodeBlock

REPLY = "```repl\nprint('growth:', g)\nanswer['values'] = ['12.3%']\nanswer['ready'] = True\n```"


def block(stdout: str = "", stderr: str = "", **extra: str) -> CodeBlock:
    return CodeBlock("...", CellResult(stdout=stdout, stderr=stderr, extra=dict(extra)))


def test_output_of_labels_and_the_answer_is_seen():
    assert not needs_confirmation([block("growth: 12.3\n")], REPLY, {"values": ["12.3%"]})
    assert not needs_confirmation([block("GROWTH: 12.3%")], REPLY, ["12.3%"])
    assert not needs_confirmation([block("")], REPLY, {"values": ["12.3%"]})


def test_a_value_that_differs_from_the_answer_is_new():
    assert unseen([block("growth: 12.3456")], REPLY, {"values": ["12.3%"]}) == {"12.3456"}
    assert needs_confirmation([block("growth: 12.3456")], REPLY, {"values": ["12.3%"]})
    assert needs_confirmation([block("1,234")], REPLY, {"values": ["1234"]})


def test_words_neither_in_the_reply_nor_in_the_answer_are_new():
    assert unseen([block("growth: 12.3 (restated)")], REPLY, {"values": ["12.3%"]}) == {"restated"}
    assert not needs_confirmation(
        [block("growth: 12.3 (restated)")], REPLY, {"values": ["12.3%"], "caveat": "restated"}
    )


def test_an_error_or_a_warning_is_always_confirmed():
    answer = {"values": ["12.3%"]}
    assert needs_confirmation([block("growth: 12.3", stderr="ValueError: x")], REPLY, answer)
    assert needs_confirmation(
        [block("", warning="\n[note: cited without reading it]\n")], REPLY, answer
    )
    assert needs_confirmation([block(), block("12.3", warning="[note]")], REPLY, answer)
