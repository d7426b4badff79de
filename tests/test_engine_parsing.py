"""Reply parsing, answer extraction and citation validation (no sandbox needed)."""

from rlm_docs.answer_parsing import heuristic_answer, parse_answer
from rlm_docs.answer_record import Answer
from rlm_docs.corpus import Corpus
from rlm_docs.engine.citation_check import validate, with_fallback
from rlm_docs.engine.parsing import Final, find_code_blocks, find_final
from rlm_docs.templates import fill


def test_code_blocks_repl_and_python_in_order_other_fences_ignored():
    reply = (
        "First:\n```repl\nx = 1\n```\nthen\n```python\nprint(x)\n```\n"
        '```json\n{"a": 1}\n```\n```py\ny = 2\n```\n```repl\n\n```'
    )
    assert find_code_blocks(reply) == ["x = 1", "print(x)", "y = 2"]


def test_final_outside_code_only_and_at_line_start():
    assert find_final("```repl\nprint('FINAL(no)')\nFINAL(42)\n```") is None
    assert find_final("I will call FINAL(x) later") is None
    assert find_final("Done.\nFINAL(The answer is 42 (approx.))") == Final(
        "text", "The answer is 42 (approx.)"
    )
    assert find_final('FINAL("quoted")') == Final("text", "quoted")
    assert find_final("FINAL(it's fine)") == Final("text", "it's fine")


def test_final_var_wins_and_accepts_quotes():
    assert find_final("```repl\nres = 1\n```\nFINAL_VAR(res)") == Final("var", "res")
    assert find_final("FINAL_VAR('res')\nFINAL(x)") == Final("var", "res")


def test_unclosed_final_takes_the_rest():
    assert find_final("FINAL(unclosed answer") == Final("text", "unclosed answer")


def test_parse_answer_json_forms():
    # MADQA's structured output: `answer` is read as the values
    assert parse_answer('{"answer": ["a", "b"], "citations": [{"file": "d", "page": 2}]}') == (
        Answer(["a", "b"], citations=[{"file": "d", "page": 2}])
    )
    assert parse_answer('Here:\n```json\n{"answer": "x", "citations": []}\n```') == Answer(["x"])
    assert parse_answer('["1", "2"]') == Answer(["1", "2"])
    assert parse_answer("just words") is None


def test_parse_answer_reads_the_record():
    text = (
        '{"values": ["0.627"], "explanation": "Gross profit $9,912 million / total assets '
        '$15,803 million", "caveat": "average total assets give 0.595", '
        '"citations": [{"file": "d", "page": 2}]}'
    )
    assert parse_answer(text) == Answer(
        ["0.627"],
        "Gross profit $9,912 million / total assets $15,803 million",
        "average total assets give 0.595",
        [{"file": "d", "page": 2}],
    )
    # a caveat written into the values (the earlier prompt's form) is moved to the caveat
    listed = '["Not answerable", "Caveat: the corpus has no survey about Lincoln"] -- d page 3'
    assert parse_answer(listed) == Answer(
        ["Not answerable"],
        caveat="the corpus has no survey about Lincoln",
        citations=[{"file": "d", "page": 3}],
    )
    assert parse_answer("Not answerable") == Answer(["Not answerable"])


def test_heuristic_answer_splits_citations_from_text():
    answer = heuristic_answer("$8.70 billion (Found in 3M_2018_10K.pdf, page 58)")
    assert answer.values == ["$8.70 billion"]
    assert answer.citations == [{"file": "3M_2018_10K", "page": 58}]
    assert heuristic_answer("") == Answer()


def test_fill_replaces_only_known_names_once():
    assert fill("{a} {b} {c}", a="{b}", b="B") == "{b} B {c}"
    assert fill('{"json": 1} {question}', question="Q") == '{"json": 1} Q'


def test_validate_and_fallback_against_corpus():
    corpus = Corpus.from_documents({"alpha": ["p1", "p2"], "beta": ["only"]})
    valid, rejected = validate(
        corpus,
        [
            {"file": "alpha.pdf", "page": 2},
            {"file": "alpha", "page": "2"},
            {"file": "alpha", "page": 3},
            {"file": "gamma", "page": 1},
            {"file": "beta", "page": None},
        ],
    )
    assert valid == [{"file": "alpha", "page": 2}]
    assert len(rejected) == 3
    cited = [{"file": "beta", "page": 1}]
    read = [{"file": "alpha", "page": 1}]
    assert with_fallback(corpus, [{"file": "zzz", "page": 1}], cited, read)[::2] == (
        [{"file": "beta", "page": 1}],
        "cite",
    )
    assert with_fallback(corpus, [], [], read)[::2] == ([{"file": "alpha", "page": 1}], "read")
    assert with_fallback(corpus, [], [], [])[::2] == ([], "none")


def test_an_unclosed_last_code_block_still_runs():
    assert find_code_blocks("Let me look.\n```repl\nx = 1\nprint(x)\n") == ["x = 1\nprint(x)"]
    closed_then_open = "```repl\na = 1\n```\ntext\n```python\nb = 2"
    assert find_code_blocks(closed_then_open) == ["a = 1", "b = 2"]
    # an unclosed block of another language is not code; an empty open block runs nothing
    assert find_code_blocks("```json\n{}\n") == []
    assert find_code_blocks("```repl\n\n") == []


def test_final_with_the_record_keeps_parentheses_and_apostrophes_inside_its_strings():
    reply = (
        'Done.\nFINAL({"values": ["$5,818 million"], "explanation": "3M\'s current assets '
        '($19,815M) less liabilities ($13,997M), FY2021.", "caveat": ""})'
    )
    final = find_final(reply)
    assert parse_answer(final.value) == Answer(
        ["$5,818 million"], "3M's current assets ($19,815M) less liabilities ($13,997M), FY2021."
    )
