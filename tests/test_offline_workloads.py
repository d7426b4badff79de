"""The offline model on the generated workloads: its TREC rules, its reading of the questions,
and its decomposition through the real engine (sandbox, governor), whose sub-calls grow with
the context length."""

import json
import math
from pathlib import Path

import pytest

from rlm_docs.bench import pairs
from rlm_docs.bench.make import make_bench
from rlm_docs.corpus import Corpus
from rlm_docs.engine import RLM
from rlm_docs.eval.dataset import parse_question
from rlm_docs.eval.scoring import score_prediction
from rlm_docs.offline.trec import classify
from rlm_docs.offline.workloads import CHUNK_LINES, classification_reply, parse_task

FIXTURE = Path(__file__).parent / "fixtures" / "bench" / "trec_small.jsonl"


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("What does NATO stand for ?", "abbreviation"),
        ("What is SVHS ?", "abbreviation"),
        ("How many moons does Mars have ?", "numeric value"),
        ("When was the Magna Carta signed ?", "numeric value"),
        ("Who killed Gandhi ?", "human being"),
        ("What 's the name of Tom Sawyer 's aunt ?", "human being"),
        ("What U.S. state has the longest coastline ?", "location"),
        ("Where is Basque country located ?", "location"),
        ("Why does it snow ?", "description and abstract concept"),
        ("What is a Guild ?", "description and abstract concept"),
        ("What films featured the character Popeye Doyle ?", "entity"),
    ],
)
def test_trec_rules(question: str, label: str) -> None:
    assert classify(question) == label


def test_classification_prompt_is_answered_line_by_line() -> None:
    from rlm_docs.offline.workloads import CLASSIFY_HEAD

    prompt = CLASSIFY_HEAD + "\n\n1: Who killed Gandhi ?\n2: Why does it snow ?"
    assert classification_reply(prompt) == "1: human being\n2: description and abstract concept"
    assert classification_reply("Question: what is revenue?\n\npage text") is None


def test_every_pair_task_is_read_as_the_generator_defines_it() -> None:
    for number, (_, rule) in enumerate(pairs.TASKS, 1):
        got = parse_task(pairs.question(number))
        assert got is not None and got["kind"] == "pairs"
        expected = {
            key: [value[0], value[1], value[2].isoformat()]
            if key == "dated"
            else [list(x) if isinstance(x, tuple) else x for x in value]
            for key, value in rule.items()
        }
        assert got["rule"] == expected, number


@pytest.fixture(scope="module")
def oolong(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "oolong"
    make_bench("oolong", out, seed=4, tokens=[4096, 32768], questions=30, data=FIXTURE)
    return out


def _questions(path: Path) -> list:
    lines = path.read_text().splitlines()
    return [parse_question(json.loads(line), f"{path}:{i}") for i, line in enumerate(lines, 1)]


def test_aggregation_is_map_reduce_whose_sub_calls_grow_with_length(oolong: Path) -> None:
    manifest = json.loads((oolong / "manifest.json").read_text())
    calls = {}
    for part in manifest["parts"]:
        corpus = Corpus.load(oolong / part["corpus"])
        questions = _questions(oolong / part["questions"])
        assert all(parse_task(q.question) for q in questions)
        rlm = RLM(corpus, model="offline")
        # One question of every type on the short window, two on the long one.
        first = {q.question_type: q for q in reversed(questions)}
        chosen = list(first.values()) if part["tokens"] == 4096 else questions[:2]
        if part["tokens"] == 4096:
            assert {"top_user", "top_user_for_label", "count_by_range"} <= set(first)
        for q in chosen:
            prediction = rlm.ask(q.question, question_id=q.id)
            # The fixture's questions are all classified right, so every answer is exact.
            scored = score_prediction(q, prediction.to_madqa())
            assert scored["score"] == 1.0, (q.question, prediction.answer)
            if q.question_type == "top_user":  # user ids are in the lines: no labels needed
                assert prediction.sub_calls == 0
                continue
            assert prediction.sub_calls == math.ceil(part["entries"] / CHUNK_LINES)
            calls[part["tokens"]] = prediction.sub_calls
    assert calls[32768] >= 3 * calls[4096] >= 3


def test_pairs_answer_is_the_full_pair_list(tmp_path: Path) -> None:
    out = tmp_path / "pairs"
    make_bench("oolong-pairs", out, seed=1, tokens=[4096], data=FIXTURE)
    corpus = Corpus.load(out / "4096" / "corpus")
    questions = _questions(out / "4096" / "questions.jsonl")
    rlm = RLM(corpus, model="offline")
    for q in (questions[0], questions[14]):
        prediction = rlm.ask(q.question, question_id=q.id)
        assert score_prediction(q, prediction.to_madqa())["score"] == 1.0
        assert prediction.sub_calls == 1


def test_needle_is_found_by_grep_without_sub_calls(tmp_path: Path) -> None:
    text = "The harbour board met to discuss dredging, tariffs and the new pilot boats.\n" * 40
    filler = Corpus.from_documents({"minutes": [text] * 30}).save(tmp_path / "filler")
    out = tmp_path / "needle"
    make_bench("needle", out, seed=2, tokens=[16384], questions=2, needles=3, filler=filler)
    corpus = Corpus.load(out / "16384" / "corpus")
    rlm = RLM(corpus, model="offline")
    for q in _questions(out / "16384" / "questions.jsonl"):
        prediction = rlm.ask(q.question, question_id=q.id)
        record = prediction.to_madqa()
        assert sorted(prediction.answer) == sorted(q.answer_variants[0])
        assert score_prediction(q, record)["page_f1"] == 1.0
        assert prediction.sub_calls == 0


def test_aggregation_stops_at_the_sub_call_budget_and_still_answers(oolong: Path) -> None:
    from rlm_docs.governor import Budget

    part = json.loads((oolong / "manifest.json").read_text())["parts"][1]
    chunks = math.ceil(part["entries"] / CHUNK_LINES)
    assert chunks >= 3
    question = next(q for q in _questions(oolong / part["questions"]) if q.question_type == "count")
    rlm = RLM(Corpus.load(oolong / part["corpus"]), model="offline", budget=Budget(max_sub_calls=2))
    prediction = rlm.ask(question.question, question_id=question.id)
    assert prediction.sub_calls == 2
    # Two chunks of the entries counted: an answer, but not the full count.
    assert prediction.answer and prediction.answer[0].startswith("Answer: ")
    assert int(prediction.answer[0].split(": ")[1]) < int(question.answer_variants[0][0])
