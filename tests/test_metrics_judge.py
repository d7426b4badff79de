import pytest

from rlm_docs.errors import ConfigError
from rlm_docs.eval.correction import rogan_gladen
from rlm_docs.eval.judge import judge_prompt, parse_verdict


@pytest.mark.parametrize(
    ("reply", "judgment", "score"),
    [
        ("Step 1 ...\nJUDGMENT: partial\nMAIN_ISSUE: list_format\nEXPLANATION: x", "partial", 0.5),
        ('{"judgment": "correct", "main_issue": "none"}', "correct", 1.0),
        ("**Judgment:** Incorrect", "incorrect", 0.0),
        ("I looked carefully.\nThe answer is incorrect.", "incorrect", 0.0),
    ],
)
def test_parse_verdict(reply, judgment, score):
    v = parse_verdict(reply)
    assert (v.judgment, v.score) == (judgment, score)


def test_unparseable_or_ambiguous_reply_is_an_error_scoring_zero():
    assert parse_verdict("no idea").judgment == "error"
    assert parse_verdict("correct or incorrect?").judgment == "error"


def test_issue_and_explanation_are_kept():
    v = parse_verdict("JUDGMENT: incorrect\nMAIN_ISSUE: missing_unit\nEXPLANATION: no millions")
    assert v.main_issue == "missing_unit" and v.explanation == "no millions"


def test_prompt_is_madqa_judge_prompt_filled_in():
    text = judge_prompt("What is X?", ["4"], [["four"], ["4.0"]])
    assert "Question: What is X?" in text
    assert 'Predicted Answer: ["4"]' in text
    assert 'Gold Answer Variants: [["four"], ["4.0"]]' in text
    assert "Missing scale qualifiers" in text and "{question}" not in text


def test_rogan_gladen_hand_computed():
    r = rogan_gladen(0.7, 100, sensitivity=0.9, specificity=0.95)
    # (0.7 + 0.95 - 1) / (0.9 + 0.95 - 1) = 0.65 / 0.85
    assert r.estimate == pytest.approx(0.65 / 0.85)
    half = 1.959964 * (0.21 / 100) ** 0.5 / 0.85
    assert r.low == pytest.approx(0.65 / 0.85 - half, abs=1e-5)
    assert r.high == pytest.approx(0.65 / 0.85 + half, abs=1e-5)


def test_rogan_gladen_clips_and_validates():
    assert rogan_gladen(0.01, 50, sensitivity=0.9, specificity=0.9).estimate == 0.0
    with pytest.raises(ConfigError, match="must exceed 1"):
        rogan_gladen(0.5, 10, sensitivity=0.5, specificity=0.5)
