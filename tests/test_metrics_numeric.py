import pytest

from rlm_docs.eval.numeric import bare_quantity, numeric_verdict, quantities


@pytest.mark.parametrize(
    ("answer", "gold", "verdict"),
    [
        # wrong numbers ANLS* passed and right ones it failed
        ("$1.33", "$2.35", False),
        ("$2.00", "$5409.00", False),
        ("$12,645 million", "12645.00", True),
        ("93.86 days", "93.86", True),
        # the gold's rounding: 4.6 covers 4.55..4.65
        ("4.55", "4.6", True),
        ("4.65", "4.6", True),
        ("4.66", "4.6", False),
        ("0.012", "0.01", True),  # 0.01 covers 0.005..0.015
        # relative 1% (wider than the rounding of a .00 gold)
        ("$11,500", "$11588.00", True),
        ("$11,400", "$11588.00", False),
        ("12", "12", True),
        ("12.5", "12", False),  # integer golds get only the 1%
        # scale words when the gold carries none (the question named the unit)
        ("$12.645 billion", "12645.00", True),
        ("$8.7 billion", "$8.70", True),
        ("$5.4B", "5409", True),
        ("2,018", "$2,018mn", True),
        ("10k", "10000", True),
        ("$12,645 million", "12.645", True),
        ("$12,645 million", "12.9", False),
        # both sides scaled: compared as amounts
        ("$1.2 billion", "$1,200 million", True),
        ("$1.2 million", "$1.2 billion", False),
        # negatives: sign, unicode minus, accounting parentheses, "decreased by"
        ("-3.7", "-3.7", True),
        ("−3.7%", "-3.7%", True),
        ("(3.7)", "-3.7", True),
        ("3.7", "-3.7", False),
        ("Margin decreased by 3.7 points", "-3.7", True),
        # percent and bps
        ("30.8%", "30.8%", True),
        ("0.308", "30.8%", True),
        ("30.8", "30.8%", True),
        ("30.8 percent", "30.8%", True),
        ("50 bps", "0.5%", True),
        ("2.7 days", "2.7%", False),  # unit kinds differ
        # multiples
        ("2.7x", "2.7", True),
        ("2.7 times", "2.7x", True),
        # prose answers: years, form names and fiscal labels are not the number
        ("Net PPNE was $8.7 billion in FY2018 (see the 10-K)", "$8.70", True),
        ("In 2019 the ratio was 0.83", "0.83", True),
        ("In 2019 the ratio was 0.91", "0.83", False),
        ("2019", "2019", True),
        # no number at all against a numeric gold is wrong
        ("Not answerable", "12", False),
        ("Customer deposits", "$5409.00", False),
    ],
)
def test_numeric_verdict(answer, gold, verdict):
    assert numeric_verdict([answer], [[gold]]) is verdict


def test_text_golds_and_hedges_are_left_to_the_string_stage():
    assert numeric_verdict(["5%"], [["Yes. It decreased."]]) is None
    assert numeric_verdict(["$400,000,000"], [["$400,000,000 increase."]]) is None
    # a mixed gold: a miss on the number falls through for the text variant
    assert numeric_verdict(["about 5"], [["4"], ["four or more"]]) is None
    assert numeric_verdict(["4.0"], [["4"], ["four or more"]]) is True
    # listing many values with one right is a hedge, not an answer
    assert numeric_verdict(["1, 2, 3, 4 or 5"], [["3"]]) is None
    assert numeric_verdict(["1, 2, 4, 6 or 7"], [["3"]]) is False


@pytest.mark.parametrize(
    ("answer", "gold", "verdict"),
    [
        # number words
        (["There are three of them"], ["3"], True),
        (["eight"], ["8"], True),
        (["one million dollars"], ["$1,000,000"], True),
        (["seven"], ["8"], False),
        # list golds: every item, in any order, each by its own quantity
        (["25", "16", "19"], ["16", "19", "25"], True),
        (["16, 19 and 25"], ["16", "19", "25"], True),
        (["16", "19"], ["16", "19", "25"], False),
        (["0"], ["0", "0"], False),
        (["0 and 0"], ["0", "0"], True),
        (["90%, 42%, 39%"], ["90%", "42%", "39%"], True),
        (["2005 and 2006"], ["2005", "2006"], True),
    ],
)
def test_number_words_and_list_golds(answer, gold, verdict):
    assert numeric_verdict(answer, [gold]) is verdict


def test_quantity_reading():
    (q,) = quantities("($1,234.50 million)")
    assert (q.mantissa, q.scale, q.currency, q.decimals) == (-1234.5, 1e6, True, 2)
    assert bare_quantity("USD 5.2 billion").value == pytest.approx(5.2e9)
    assert bare_quantity("approx. 4%").unit == "percent"
    assert bare_quantity("JnJ sold its inventory 2.7 times in FY2022.") is None
    assert [q.value for q in quantities("COVID-19 cost $3 mn in Q3 2021")] == [19, 3e6, 2021]
