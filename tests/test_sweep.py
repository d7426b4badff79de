"""`rlm-docs sweep`: grid expansion, spec errors, the dry-run bound, resume and Ctrl-C."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.cli.sweep_spec import load_sweep
from rlm_docs.eval.report import load_runs
from rlm_docs.eval.rundir import EvalRunDir
from tests.fixtures.cli import run_without_ray
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model, server_env
from tests.servers.chat import ChatServer

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "docs" / "sweep-example.toml"

pytestmark = pytest.mark.usefixtures(server_env.__name__)  # test key, private home, no cache


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("sweep") / "store")


def _spec(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_grid_expands_into_named_cells_with_eval_command_lines(tmp_path, store):
    spec = _spec(
        tmp_path / "grid.toml",
        f"""
[sweep]
workers = 3
executor = "thread"
[grid]
system = ["rlm", "static-rag"]
model = "offline"
max-steps = [2, 8]
no-confirm-final = [false, true]
[[data]]
name = "fixture"
dataset = "{QUESTIONS}"
corpus = "{store}"
limit = 2
[[workload]]
kind = "needle"
tokens = [2048, 4096]
seeds = [0, 1]
questions = 3
""",
    )
    sweep = load_sweep(spec, tmp_path / "out")
    names = [c.name for c in sweep.cells]
    assert len(names) == len(set(names)) == 5 * 2 * 2 * 2  # 1 file + 2 seeds x 2 lengths
    assert names[:4] == [
        "fixture__rlm__max-steps-2",
        "fixture__rlm__max-steps-2__no-confirm-final",
        "fixture__rlm__max-steps-8",
        "fixture__rlm__max-steps-8__no-confirm-final",
    ]
    assert "needle-s1-4096__static-rag__max-steps-8__no-confirm-final" in names
    assert [w.dirname for w in sweep.workloads] == ["needle-s0", "needle-s1"]
    argv = sweep.cells[1].eval_argv(tmp_path / "out", sweep.run_flags)
    assert argv[:6] == ["--dataset", str(QUESTIONS), "--corpus", str(store), "--limit", "2"]
    assert "--no-confirm-final" in argv and argv[argv.index("--max-steps") + 1] == "2"
    assert argv[argv.index("--workers") + 1] == "3"
    assert argv[argv.index("--executor") + 1] == "thread"  # eval's own option
    ray = load_sweep(spec, tmp_path / "out", executor="ray")  # --executor overrides the spec
    assert ray.cells[0].eval_argv(tmp_path, ray.run_flags).count("ray") == 1
    assert argv[-2:] == ["--out", str(tmp_path / "out" / names[1])]
    needle = next(c for c in sweep.cells if c.name.startswith("needle-s1-2048"))
    assert needle.data.dataset == tmp_path / "out/workloads/needle-s1/2048/questions.jsonl"
    assert needle.data.question_count() == 3
    assert sweep.cells[0].data.question_count() == 2
    # the same spec gives the same names (they find the run directories on a rerun)
    assert [c.name for c in load_sweep(spec, tmp_path / "out").cells] == names


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('[grid]\nsystem = "rlm"\nmodel = "offline"\nmax-steps = [0]\n', "[grid] max-steps"),
        ('[grid]\nsystem = "rlm"\nmodel = "offline"\ntop-kk = 3\n', "[grid] top-kk"),
        ('[grid]\nsystem = ["rag"]\nmodel = "offline"\n', "[grid] system"),
        ('[grid]\nsystem = "rlm"\nmodel = "offline"\nworkers = 2\n', "[grid] workers"),
        ('[grid]\nsystem = "rlm"\n', "[grid] model"),
        ('[grid]\nsystem = "static-rag"\nmodel = "offline"\nno-sub-calls = true\n', "cell "),
        ('[sweep]\nworkers = 0\n[grid]\nsystem = "rlm"\nmodel = "offline"\n', "[sweep] workers"),
        (
            '[sweep]\nexecutor = "slurm"\n[grid]\nsystem = "rlm"\nmodel = "offline"\n',
            "[sweep] executor",
        ),
        ('[grid]\nsystem = "rlm"\nmodel = "offline"\n[[workload]]\nkind = "x"\n', "[[workload]]"),
        ("[grid\n", "not valid TOML"),
    ],
)
def test_bad_spec_is_one_line_naming_file_and_key(tmp_path, capsys, body, where):
    data = '\n[[data]]\ndataset = "q.jsonl"\ncorpus = "demo"\n' if "[[" not in body else ""
    spec = _spec(tmp_path / "bad.toml", body + data)
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"rlm-docs sweep: error: {spec}: ") and where in err
    assert not (tmp_path / "o").exists()


def _plan_figures(out: str) -> dict[str, tuple[int, int, float]]:
    """{cell: (questions, calls bound, dollars bound)} from the dry run's table."""
    rows = {}
    for line in out.splitlines():
        found = re.fullmatch(r"(\S+__\S+)\s+(\d+)\s+([\d,]+)\s+\$([\d.,]+)", line.strip())
        if found:
            name, n, calls, usd = found.groups()
            rows[name] = (int(n), int(calls.replace(",", "")), float(usd.replace(",", "")))
    return rows


def test_dry_run_bounds_calls_and_dollars_of_a_priced_sweep(tmp_path, store, capsys):
    with ChatServer(reply=fake_model) as server:
        spec = _spec(
            tmp_path / "priced.toml",
            f"""
[grid]
system = ["static-rag", "bm25-agent", "rlm"]
model = "openai:gpt-5-mini@{server.base_url}"
max-steps = [1, 3]
max-input-tokens = 40000
max-output-tokens = 3000
[[data]]
name = "fixture"
dataset = "{QUESTIONS}"
corpus = "{store}"
""",
        )
        out = tmp_path / "sweep"
        argv = ["sweep", str(spec), "--out", str(out), "--no-progress"]
        assert main([*argv, "--dry-run"]) == 0
        plan = _plan_figures(capsys.readouterr().out)
        assert not out.exists()  # a dry run writes and spends nothing
        assert len(server.requests) == 0
        assert len(plan) == 6
        assert main(argv) == 0
        assert len(server.requests) > 0
    total_calls = 0
    for name, (n, calls_bound, usd_bound) in plan.items():
        ledger = [json.loads(x) for x in (out / name / "ledger.jsonl").read_text().splitlines()]
        spent = sum(e["cost_usd"] for e in ledger)
        assert n == 6 and 0 < len(ledger) <= calls_bound, name
        assert 0 < spent <= usd_bound, name
        total_calls += len(ledger)
    assert total_calls == len(server.requests)
    # rlm with a model that never writes code uses every root turn and the forced turn: the
    # root part of the bound (steps + 1) is reached, not just respected; the forced turn's
    # free text then needs one extraction call per question, recorded under its own role
    ledger = (out / "fixture__rlm__max-steps-3" / "ledger.jsonl").read_text().splitlines()
    roles = [json.loads(x)["role"] for x in ledger]
    assert roles.count("root") == 6 * (3 + 1)
    assert roles.count("extract") == 6 and len(roles) == 6 * (3 + 1) + 6
    assert (out / "report" / "report.md").exists()


def test_dry_run_says_which_flag_bounds_an_unbounded_cell(tmp_path, store, capsys):
    spec = _spec(
        tmp_path / "open.toml",
        f"""
[grid]
system = "static-rag"
model = ["openai:gpt-5-mini", "offline"]
[[data]]
dataset = "{QUESTIONS}"
corpus = "{store}"
""",
    )
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "questions__offline" in out and "$0.0000" in out
    assert "12 questions; at most 12 model calls and unbounded" in out
    assert (
        "questions__openai_gpt-5-mini: dollars unbounded (bounded by --max-cost, "
        "or --max-input-tokens with --max-output-tokens)" in out
    )


def _many_questions(path: Path, n: int) -> Path:
    base = [json.loads(x) for x in QUESTIONS.read_text().splitlines()]
    path.write_text(
        "".join(json.dumps({**base[i % 6], "id": f"m{i:02d}"}) + "\n" for i in range(n))
    )
    return path


def test_ctrl_c_leaves_every_cell_resumable_and_a_rerun_repeats_nothing(tmp_path, store):
    many = _many_questions(tmp_path / "many.jsonl", 12)
    out = tmp_path / "sweep"
    with ChatServer(reply=fake_model, latency_s=0.2) as slow:
        spec = _spec(
            tmp_path / "slow.toml",
            f"""
[sweep]
workers = 2
[grid]
system = "static-rag"
model = "openai:fake@{slow.base_url}"
top-k = [3, 4, 5]
[[data]]
name = "many"
dataset = "{many}"
corpus = "{store}"
""",
        )
        argv = [sys.executable, "-m", "rlm_docs", "sweep", str(spec), "--out", str(out)]
        proc = subprocess.Popen(
            [*argv, "--no-progress"], cwd=REPO, env=dict(os.environ), stderr=subprocess.PIPE
        )
        first, second = out / "many__top-k-3", out / "many__top-k-4"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            results = second / "results.jsonl"
            if results.exists() and results.read_bytes().count(b"\n") >= 3:
                break
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err
        err = err.decode()
        assert "Traceback" not in err and "every cell in" in err and "resumable" in err
        assert f"rlm-docs sweep {spec}" in err
        finished = (first / "results.jsonl").read_bytes()
        partial = len(EvalRunDir(second).read_results())
        assert len(finished.splitlines()) == 12 and 3 <= partial < 12
        assert not (out / "many__top-k-5" / "predictions.parquet").exists()
        requests_before = len(slow.requests)

        assert main(argv[3:]) == 0
        # the finished cell was skipped, the partial one ran only what it lacked
        assert (first / "results.jsonl").read_bytes() == finished
        assert len(slow.requests) - requests_before <= 12 - partial + 12
    for cell in ("top-k-3", "top-k-4", "top-k-5"):
        lines = (out / f"many__{cell}" / "results.jsonl").read_text().splitlines()
        ids = [json.loads(x)["id"] for x in lines]
        assert sorted(ids) == [f"m{i:02d}" for i in range(12)], cell


def test_shipped_example_runs_and_a_rerun_skips_every_cell(tmp_path, capsys):
    out = tmp_path / "example"
    argv = ["sweep", str(EXAMPLE), "--out", str(out), "--no-progress"]
    assert main([*argv, "--dry-run"]) == 0
    assert "12 cells, 32 questions" in capsys.readouterr().out
    assert main(argv) == 0
    first = capsys.readouterr().out
    assert "demo__rlm__max-steps-1" in first and "needle-s0-4096__bm25-agent__max-steps-4" in first
    report = (out / "report" / "report.md").read_text()
    assert "different data sets" in report and "| needle-s0-2048__rlm__max-steps-4 | 2 |" in report
    # one curve per system and budget across lengths, named by the setting that differs
    cells = sorted(p for p in out.iterdir() if p.name.startswith("needle-"))
    series = {run.series for run in load_runs(cells)}
    assert series == {
        f"{system} / offline · max-steps {n}" for system in ("rlm", "bm25-agent") for n in (1, 4)
    }
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert again.count("finished, skipped") == 12 and "generating" not in again


def test_the_sweep_guide_shows_the_shipped_example():
    readme = (REPO / "docs" / "guide" / "sweeps.md").read_text(encoding="utf-8")
    block = readme.split("`docs/sweep-example.toml` (runs offline, in the test suite too):")[1]
    block = block.split("```toml\n", 1)[1].split("```", 1)[0]
    assert EXAMPLE.read_text(encoding="utf-8").endswith("\n\n" + block)


@pytest.mark.parametrize("dry_run", [True, False])
def test_ray_without_the_extra_is_refused_before_anything_is_written(tmp_path, dry_run):
    spec = _spec(
        tmp_path / "spec.toml",
        f'[sweep]\nexecutor = "ray"\n[grid]\nsystem = "rlm"\nmodel = "offline"\n'
        f'[[data]]\nname = "q"\ndataset = "{QUESTIONS}"\ncorpus = "demo"\n',
    )
    out = tmp_path / "out"
    argv = ["sweep", str(spec), "--out", str(out)] + (["--dry-run"] if dry_run else [])
    proc = run_without_ray(argv, tmp_path / "home")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"rlm-docs sweep: error: {spec}: [sweep] executor: --executor ray needs Ray, which is "
        'not installed: pip install -e ".[ray]"'
    ]
    assert proc.stdout == "" and not out.exists()
