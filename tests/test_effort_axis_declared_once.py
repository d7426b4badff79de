"""An effort measure is declared once (`governor.axes.AXES`) and every part that counts,
records or shows effort picks it up: the governor's totals, the results row, the report's
Kuiper table and the notebook display. The measure below is added in this module only."""

import json

import pytest

from rlm_docs.cli import main
from rlm_docs.engine.prediction import Prediction
from rlm_docs.engine.records import Result
from rlm_docs.eval.report import build_report
from rlm_docs.eval.results_row import columns
from rlm_docs.eval.rundir import load_run
from rlm_docs.governor import Budget, Governor, axes
from rlm_docs.governor.axes import Axis
from rlm_docs.models import ScriptedClient
from rlm_docs.notebook.display import show
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.servers.chat import ChatServer

REPLY_CHARS = Axis(
    "reply_chars",
    "reply characters",
    "reply-character",
    "count",
    "call",
    read=lambda completion, role: len(completion.text),
)


@pytest.fixture
def declared(monkeypatch):
    monkeypatch.setattr(axes, "AXES", (*axes.AXES, REPLY_CHARS))


def test_a_new_axis_is_counted_by_the_governor(declared) -> None:
    gov = Governor(Budget())
    client = ScriptedClient(["four", "seven!!"])
    gov.call(client, [{"role": "user", "content": "q"}], role="root")
    kid = gov.child()
    kid.call(client, [{"role": "user", "content": "q"}], role="sub")
    assert gov.totals()["reply_chars"] == 4 + 7  # the child's call counts in its parent
    assert kid.totals()["reply_chars"] == 7


def test_a_new_axis_is_in_the_row_the_report_and_the_notebook(declared, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    monkeypatch.setenv("RLM_DOCS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    store, out = build_store(tmp_path / "store"), tmp_path / "run"
    with ChatServer(reply=fake_model) as srv:
        argv = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--no-progress"]
        argv += ["--model", f"openai:fake@{srv.base_url}", "--out", str(out)]
        assert main([*argv, "--system", "static-rag"]) == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(row["reply_chars"] > 0 for row in rows)
    assert set(rows[0]) - {"reply_chars"} <= set(columns())  # every other column declared
    assert list(rows[0]).index("reply_chars") == list(rows[0]).index("max_depth") + 1
    _, loaded = load_run(out)
    assert {r["id"]: r["reply_chars"] for r in loaded} == {r["id"]: r["reply_chars"] for r in rows}

    build_report([out], tmp_path / "report")
    report = (tmp_path / "report" / "report.md").read_text()
    table = report.split("## Kuiper K/N per effort measure")[1].split("\n\n")[1].splitlines()
    header = [cell.strip() for cell in table[0].split("|")]
    values = [cell.strip() for cell in table[2].split("|")]
    assert header[-2] == "reply characters"
    assert values[-2][0].isdigit()  # its K/N [CI], computed like every other measure

    pred = Prediction(question="q", steps=1)
    pred.set_effort({"reply_chars": 42})
    assert pred.to_madqa()["reply_chars"] == 42
    assert "reply characters" in show(pred)._repr_html_()
    assert "42 reply characters" in repr(show(pred))


def test_the_trajectory_result_has_a_field_per_builtin_recorded_axis() -> None:
    """The result record of a trajectory documents each recorded effort field; an axis
    declared beyond them is kept in its `extra` (written back unchanged)."""
    documented = set(Result.__dataclass_fields__)
    assert set(axes.recorded()) <= documented
    record = Result.from_dict({"answer": ["x"], "reply_chars": 3})
    assert record.to_dict()["reply_chars"] == 3
