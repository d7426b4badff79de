"""`rlm-docs eval` / `report` with the decomposition baselines and the no-sub-calls ablation,
end to end with the offline model on the fixture corpus."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rlm_docs.cli import main
from tests.fixtures.eval.support import QUESTIONS, build_store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("eval") / "store")


@pytest.fixture
def env(rlm_home, tmp_path):
    return tmp_path


def _eval(store, out, *extra):
    args = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--model", "offline"]
    return main([*args, "--out", str(out), "--no-progress", *extra])


def test_every_new_system_runs_and_the_report_tells_the_ablation_apart(env, store, capsys):
    runs = {
        "long-context": ["--system", "long-context", "--context-window", "8700"],
        "map-reduce": ["--system", "map-reduce", "--chunk-tokens", "120"],
        "no-sub": ["--system", "rlm", "--no-sub-calls"],
    }
    for name, flags in runs.items():
        assert _eval(store, env / name, *flags) == 0
    rows = {
        name: [json.loads(line) for line in (env / name / "results.jsonl").read_text().splitlines()]
        for name in runs
    }
    assert all(len(r) == 6 for r in rows.values())
    assert all(r["info"]["context"]["truncated"] for r in rows["long-context"])
    assert all(r["sub_calls"] == r["info"]["map"]["chunks"] > 1 for r in rows["map-reduce"])
    assert all(r["sub_calls"] == 0 for r in rows["no-sub"])
    # the decomposition record of each, as parquet columns and in the trajectory
    tags = {"long-context": ["whole-context"], "map-reduce": ["chunked-map", "map-reduce"]}
    for name, expected in tags.items():
        table = pq.read_table(env / name / "predictions.parquet").to_pylist()
        assert all(r["strategies"] == expected for r in table)
    mapped = pq.read_table(env / "map-reduce" / "predictions.parquet").to_pylist()
    assert all(r["fanout_max"] > 1 and r["corpus_share_read"] == 1.0 for r in mapped)
    assert all(sum(r["fanouts"]) == r["sub_calls"] for r in mapped)
    long = pq.read_table(env / "long-context" / "predictions.parquet").to_pylist()
    assert all(0 < r["corpus_share_read"] < 1 and r["sub_calls"] == 0 for r in long)
    no_sub = pq.read_table(env / "no-sub" / "predictions.parquet").to_pylist()
    assert all(r["batches"] == 0 and r["cells"] >= 1 for r in no_sub)
    log = rows["no-sub"][0]["trajectory"]
    result = [json.loads(line) for line in Path(log).read_text().splitlines()][-1]
    assert result["decomposition"]["cells"] == no_sub[0]["cells"]
    manifest = json.loads((env / "no-sub" / "run.json").read_text())
    assert manifest["options"]["sub_calls"] is False
    assert main(["report", *(str(env / n) for n in runs), "--out", str(env / "report")]) == 0
    report = (env / "report" / "report.md").read_text()
    assert "rlm --no-sub-calls / offline" in report and "map-reduce / offline" in report


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--system", "static-rag", "--no-sub-calls"], "--no-sub-calls applies to --system rlm"),
        (["--system", "map-reduce", "--chunk-tokens", "10"], "--chunk-tokens must be >= 64"),
    ],
)
def test_misused_baseline_flags_exit_2_naming_the_flag(env, store, capsys, flags, message):
    assert _eval(store, env / "bad", *flags) == 2
    assert message in capsys.readouterr().err
    assert not (env / "bad").exists()


def test_retrieval_systems_and_the_rlm_record_what_they_looked_at(env, store):
    tags = {"rlm": "search-first", "bm25-agent": "search-first", "static-rag": "search-first"}
    for name, tag in tags.items():
        assert _eval(store, env / name, "--system", name) == 0
        table = pq.read_table(env / name / "predictions.parquet").to_pylist()
        assert all(tag in r["strategies"] for r in table)
        assert all(r["pages_looked"] >= 1 and 0 < r["corpus_share_read"] <= 1 for r in table)
    rlm = pq.read_table(env / "rlm" / "predictions.parquet").to_pylist()
    assert all(json.loads(r["sub_calls_by_depth"]) == {"0": r["sub_calls"]} for r in rlm)
    assert all(r["cells"] >= 1 and r["cell_errors"] == 0 for r in rlm)
