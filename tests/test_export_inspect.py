"""`rlm-docs export RUN --format inspect`: the run as an Inspect eval log, read back with
Inspect's own reader (so the file is one `inspect view` opens)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="the `inspect` extra (inspect_ai) is not installed")

from inspect_ai.event import ModelEvent, SpanBeginEvent, SpanEndEvent, ToolEvent  # noqa: E402
from inspect_ai.log import read_eval_log, resolve_sample_attachments  # noqa: E402

from rlm_docs.engine.trajectory import load_trajectory  # noqa: E402
from tests.fixtures.scripted_run import ANSWER, eval_argv, prices_env  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _cli(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rlm_docs", *argv],
        cwd=ROOT,
        env=os.environ | env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    where = tmp_path_factory.mktemp("scripted")
    env = {"RLM_DOCS_HOME": str(where / "home"), "RLM_DOCS_CACHE": "off", **prices_env(where)}
    done = _cli(eval_argv(where, where / "run"), env)
    assert done.returncode == 0, done.stderr
    return where / "run", env


def test_export_reads_back_with_inspects_reader(run, tmp_path):
    run_dir, env = run
    out = tmp_path / "logs" / "run.eval"
    done = _cli(["export", str(run_dir), "--format", "inspect", "--out", str(out)], env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {out}"

    log = read_eval_log(str(out))
    result = json.loads((run_dir / "results.jsonl").read_text().splitlines()[0])
    assert log.status == "success" and log.eval.task == "rlm-docs/rlm"
    assert log.eval.dataset.sample_ids == ["q1"] and log.results.completed_samples == 1
    means = {s.name: s.metrics["mean"].value for s in log.results.scores}
    assert means == {"score": 1.0, "anls": 1.0, "page_f1": 1.0, "doc_f1": 1.0}

    (sample,) = log.samples
    sample = resolve_sample_attachments(sample)  # the writer stores long texts once, by hash
    assert sample.id == "q1" and sample.input == "What was Acme revenue for fiscal 2022?"
    assert sample.target == ["$4.2 billion", "4.2 billion"]
    assert sample.output.completion == "$4.2 billion"
    score = sample.scores["rlm_docs"]
    assert score.value["correct"] == 1.0 and score.value["page_f1"] == 1.0
    assert score.metadata["citations"] == ANSWER["citations"]
    # model usage: the ledger's four calls (3 root turns incl. the child's, 1 sub-call)
    (usage,) = sample.model_usage.values()
    assert usage.input_tokens == result["input_tokens"] == 3 * 1200 + 300
    assert usage.output_tokens == 3 * 80 + 20
    assert usage.input_tokens_cache_read == 3 * 700
    assert usage.total_cost == pytest.approx(result["cost_usd"]) and usage.total_cost > 0

    events = sample.events
    spans = {e.id: e for e in events if isinstance(e, SpanBeginEvent)}
    assert len(spans) == sum(isinstance(e, SpanEndEvent) for e in events)
    assert all(e.span_id is None or e.span_id in spans for e in events)  # every parent exists
    names = [(spans[e.span_id].name if e.span_id else None, e.name) for e in spans.values()]
    assert names == [
        (None, "turn 1"),
        ("turn 1", "cell 1"),
        ("cell 1", "rlm_query (depth 1)"),
        ("rlm_query (depth 1)", "turn 1"),
        ("turn 1", "cell 1"),
        (None, "turn 2"),
        ("turn 2", "cell 1"),
    ]
    models = [e for e in events if isinstance(e, ModelEvent)]
    assert [e.role for e in models] == ["root", "llm_query", "root", "root"]
    root = models[0]
    assert root.output.usage.input_tokens_cache_read == 700
    assert root.output.usage.total_cost == pytest.approx(result["ledger"][0]["cost_usd"])
    sub = models[1]
    assert sub.input[0].text == "Acme revenue fiscal 2022?"
    assert sub.output.completion == "Revenue was $4.2 billion"
    assert sub.output.usage.input_tokens == 300 and spans[sub.span_id].name == "cell 1"
    trajectory = load_trajectory(result["trajectory"])
    tools = [e for e in events if isinstance(e, ToolEvent)]
    assert tools[0].function == "repl"
    assert tools[0].arguments["code"] == trajectory.iterations[0].code_blocks[0].code
    assert "Revenue was $4.2 billion" in tools[0].result


def test_unfinished_run_exports_as_cancelled_with_missing_samples(run, tmp_path):
    run_dir, env = run
    partial = tmp_path / "partial"
    partial.mkdir()
    manifest = json.loads((run_dir / "run.json").read_text())
    manifest["questions"].append({**manifest["questions"][0], "id": "q-never-run"})
    (partial / "run.json").write_text(json.dumps(manifest))
    (partial / "trajectories").mkdir()
    record = json.loads((run_dir / "results.jsonl").read_text())
    trajectory = Path(record["trajectory"])
    (partial / "trajectories" / trajectory.name).write_bytes(trajectory.read_bytes())
    record["trajectory"] = f"/moved/away/trajectories/{trajectory.name}"  # the run was moved
    (partial / "results.jsonl").write_text(json.dumps(record) + "\n")
    out = tmp_path / "partial.json"
    done = _cli(["export", str(partial), "--format", "inspect", "--out", str(out)], env)
    assert done.returncode == 0, done.stderr
    log = read_eval_log(str(out))
    assert log.status == "cancelled" and log.results.completed_samples == 1
    samples = {s.id: s for s in log.samples}
    missing = samples["q-never-run"]
    assert missing.events == [] and missing.scores["rlm_docs"].value["correct"] == 0.0
    # the answered question's trajectory is found in the moved run directory
    assert sum(isinstance(e, ModelEvent) for e in samples["q1"].events) == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--format", "inspect", "--out", "{tmp}/x.txt"], "an Inspect log ends in .eval or .json"),
        (["--format", "csv", "--out", "{tmp}/x.eval"], "argument --format: invalid choice"),
    ],
)
def test_user_mistakes_are_one_line(run, tmp_path, argv, message):
    run_dir, env = run
    argv = [a.format(tmp=tmp_path) for a in argv]
    done = _cli(["export", str(run_dir), *argv], env)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and message in done.stderr


def test_not_a_run_directory(tmp_path):
    done = _cli(["export", str(tmp_path), "--format", "inspect", "--out", str(tmp_path / "o.eval")],
                {"RLM_DOCS_HOME": str(tmp_path / "home")})  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"rlm-docs export: error: {tmp_path}: not a run directory (no run.json)"
    )
