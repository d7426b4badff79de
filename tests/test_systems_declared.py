"""A system declared in this module alone runs through `eval`, `sweep --dry-run`, `report` and
the decomposition record; a declaration missing a piece fails when it is registered."""

import dataclasses
import json
import time
from dataclasses import dataclass

import pytest

from rlm_docs import systems
from rlm_docs.call_purpose import Purpose
from rlm_docs.cli import main
from rlm_docs.corpus.render import page_block
from rlm_docs.engine.prediction import Prediction
from rlm_docs.errors import ConfigError
from rlm_docs.governor import Budget
from rlm_docs.models import make_client
from rlm_docs.offline.baselines import baseline_reply, static_rag_reply
from rlm_docs.systems import SystemConfig
from rlm_docs.systems.base import answer_call, finish, new_trajectory
from rlm_docs.systems.declaration import Bound, Declaration, Reading, option
from rlm_docs.systems.registry import declaration, register, unregister
from rlm_docs.systems.replies import answer_format
from tests.fixtures.eval.support import QUESTIONS, build_store

NAME = "toy-pages"


@dataclass(frozen=True)
class ToyOptions:
    pages: int = option(1, flag="--toy-pages", recorded="always", help="pages shown")


class ToyPages:
    """Shows the top `pages` search hits and answers in one call."""

    name = NAME

    def __init__(self, config: SystemConfig) -> None:
        self.config = config
        self.options = TOY.typed(config.options)
        self.client = make_client(config.model, cache=config.cache)

    def answer(self, question, governor):
        start = time.perf_counter()
        corpus = self.config.corpus
        hits = corpus.search(question.question, k=self.options.pages)
        blocks = [
            page_block(h.document, h.page, corpus.page(h.document, h.page), 4000) for h in hits
        ]
        prompt = "\n\n".join(blocks)
        prompt += f"\nQuestion: {question.question}\n{answer_format('the page label')}"
        trajectory = new_trajectory(self.config, NAME, question)
        record = trajectory.iteration([{"role": "user", "content": prompt}])
        record.extra["search"] = {"results": [[h.document, h.page] for h in hits]}
        prediction = Prediction(question=question.question, question_id=question.id)
        messages = [{"role": "user", "content": prompt}]
        purpose = Purpose("root", NAME, NAME, question.question)
        answer_call(
            self.client, trajectory, governor, messages, record, prediction, purpose=purpose
        )
        return finish(self.config, trajectory, governor, prediction, start)


def _toy_offline(messages: list[dict]) -> str:
    return static_rag_reply(messages)


TOY = Declaration(
    name=NAME,
    summary="the top pages of one search, one answering call",
    factory=ToyPages,
    options=ToyOptions,
    calls=lambda budget, options: Bound(1),
    reading=Reading(search_first="first-turn"),
    offline={NAME: _toy_offline},
)


@pytest.fixture
def toy(rlm_home, monkeypatch, tmp_path):
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    register(TOY)
    yield TOY
    unregister(NAME)


def test_a_declared_system_runs_through_eval_sweep_report_and_decomposition(toy, tmp_path, capsys):
    assert NAME in systems.SYSTEM_NAMES
    store = build_store(tmp_path / "store")
    run = tmp_path / "run"
    argv = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--system", NAME,
            "--model", "offline", "--out", str(run), "--no-progress", "--toy-pages", "2"]  # fmt: skip
    assert main(argv) == 0
    assert f"{NAME}: 6 questions (6 run now)" in capsys.readouterr().out
    settings = json.loads((run / "run.json").read_text())
    assert settings["system"] == NAME and settings["options"] == {"pages": 2}
    ledger = (run / "ledger.jsonl").read_text().splitlines()
    assert len(ledger) == 6  # one answering call per question
    rows = {r["id"]: r for r in map(json.loads, (run / "results.jsonl").read_text().splitlines())}
    # the offline policy declared above read the shown pages
    assert rows["q1"]["answer"] == ["$4.2 billion"] and rows["q1"]["correct"]
    trajectory = sorted((run / "trajectories").glob("*.jsonl"))[0]
    record = json.loads(trajectory.read_text().splitlines()[-1])["decomposition"]
    assert record["strategies"] == ["search-first"]
    assert 1 <= record["pages_looked"] <= 2 and record["cells"] == 0

    spec = tmp_path / "toy.toml"
    spec.write_text(
        f'[grid]\nsystem = ["{NAME}", "static-rag"]\nmodel = "offline"\n'
        f'[[data]]\nname = "d"\ndataset = "{QUESTIONS}"\ncorpus = "{store}"\n'
    )
    assert main(["sweep", str(spec), "--out", str(tmp_path / "sw"), "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert f"d__{NAME}" in plan and "12 questions; at most 12 model calls" in plan

    rep = tmp_path / "rep"
    assert main(["report", str(run), "--out", str(rep)]) == 0
    assert f"| {NAME} / offline" in (rep / "report.md").read_text()


def test_the_options_recorded_are_the_declared_ones(toy):
    assert declaration(NAME).typed({"pages": 3}).pages == 3
    with pytest.raises(ConfigError, match="unknown option.*bogus.*known: pages"):
        declaration(NAME).typed({"bogus": 1})


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"calls": None}, "needs a call bound"),
        ({"calls": lambda budget, options: 1}, "must return a Bound"),
        ({"reading": None}, "needs a Reading"),
        ({"reading": Reading(tags=("",))}, "reading.tags are non-empty strings"),
        ({"offline": {}}, "needs an offline policy"),
        ({"summary": ""}, "needs a summary"),
        ({"prompts": ("no_such_template",)}, "no_such_template.txt not found"),
        ({"options": dict}, "options must be a dataclass"),
        ({"settings": "{nope} pages"}, "settings names no option field"),
    ],
)
def test_a_declaration_missing_a_piece_fails_when_registered(change, message):
    class Broken(ToyPages):
        name = "broken-toy"

    broken = dataclasses.replace(TOY, name="broken-toy", factory=Broken, **change)
    with pytest.raises(ConfigError, match=message):
        register(broken)
    with pytest.raises(ConfigError, match="expected one of"):
        declaration("broken-toy")


def test_options_without_a_default_and_taken_names_are_refused(toy):
    @dataclass(frozen=True)
    class NoDefault:
        pages: int

    class Thief(ToyPages):
        name = "thief"

    stolen = {"static-rag": _toy_offline}

    with pytest.raises(ConfigError, match="option pages needs a default"):
        register(dataclasses.replace(TOY, options=NoDefault))
    with pytest.raises(ConfigError, match="factory's name 'toy-pages' differs"):
        register(dataclasses.replace(TOY, name="renamed"))
    with pytest.raises(ConfigError, match="already registered"):
        register(dataclasses.replace(TOY, offline={"other-toy": _toy_offline}))
    with pytest.raises(ConfigError, match="offline policy 'static-rag' is already taken"):
        register(dataclasses.replace(TOY, name="thief", factory=Thief, offline=stolen))


def test_a_policy_name_with_no_policy_is_an_error_not_another_policy():
    with pytest.raises(ValueError, match="no offline policy named 'nobody'"):
        baseline_reply([{"role": "user", "content": "Question: x"}], "nobody")


def test_the_bounds_of_the_built_in_systems_come_from_their_declarations():
    b = Budget(max_steps=4, max_sub_calls=10)
    assert declaration("bm25-agent").calls(b, declaration("bm25-agent").typed({})).value == 5
    assert declaration("rlm").options().prompt == "docs"
