"""`rlm-docs eval` and `report` run on the generated workloads with every registered system,
and the rows carry the workload scorers' results."""

import json
import shlex
import sys
from pathlib import Path

import pytest

from rlm_docs.bench.make import make_bench
from rlm_docs.cli import main
from rlm_docs.corpus import Corpus
from rlm_docs.systems import SYSTEM_NAMES

FIXTURE = Path(__file__).parent / "fixtures" / "bench" / "trec_small.jsonl"
# `agent` runs a program per question: one that asks the (offline) model through the proxy.
ASK = (
    "import openai, os, sys; q = sys.stdin.read(); print(openai.OpenAI().chat.completions.create("
    "model=os.environ['RLM_DOCS_AGENT_MODEL'], messages=[{'role': 'user', 'content': q}])"
    ".choices[0].message.content)"
)
EXTRA = {"agent": ["--agent-command", shlex.join([sys.executable, "-c", ASK])]}


@pytest.fixture(scope="module")
def workloads(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bench")
    make_bench("oolong-pairs", root / "pairs", tokens=[2048], questions=2, data=FIXTURE)
    pages = ["The board met on Tuesday to review the harbour dredging budget.\n" * 30] * 20
    filler = Corpus.from_documents({"minutes": pages}).save(root / "filler")
    make_bench("needle", root / "needle", tokens=[4096], questions=2, needles=2, filler=filler)
    return {"oolong-pairs": root / "pairs" / "2048", "needle": root / "needle" / "4096"}


@pytest.mark.parametrize("workload", ["oolong-pairs", "needle"])
def test_every_system_evaluates_and_reports(
    workload: str, workloads, tmp_path: Path, capsys
) -> None:
    part = workloads[workload]
    runs = []
    for system in SYSTEM_NAMES:
        out = tmp_path / system
        args = [
            "eval",
            "--dataset",
            str(part / "questions.jsonl"),
            "--corpus",
            str(part / "corpus"),
        ]
        args += ["--system", system, "--model", "offline", "--out", str(out), "--no-progress"]
        args += EXTRA.get(system, [])
        assert main([*args, "--workers", "1"]) == 0, system
        rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        assert len(rows) == 2 and all(r["stage"] in (workload, "empty") for r in rows), system
        runs.append(str(out))
    capsys.readouterr()
    assert main(["report", *runs, "--out", str(tmp_path / "report")]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert all(f"| {name} / offline" in report for name in SYSTEM_NAMES)
