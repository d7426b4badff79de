"""Data sets are found without a source checkout: `--data`, or a data directory named by
RLM_DOCS_DATA; when neither has the file, the error names the paths tried and where the file
comes from. The package runs from a copy laid out as `pip install` lays it out (no
pyproject.toml beside it), from a working directory that is not a checkout."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "bench" / "trec_small.jsonl"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """site-packages-like directory holding a copy of the wheel's packages (`rlm_docs` and
    `sandbox`), prompts and corpus bundled."""
    site = tmp_path_factory.mktemp("site-packages")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for package in project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]:
        shutil.copytree(ROOT / package, site / package, ignore=shutil.ignore_patterns("__py*"))
    for name in ("prompts", "corpus"):
        shutil.copytree(ROOT / name, site / "rlm_docs" / "_bundled" / name)
    return site


def _run(
    installed: Path, cwd: Path, args: list[str], data: Path | None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("RLM_DOCS_DATA", "PYTHONPATH")}
    env.update({"PYTHONPATH": str(installed), "RLM_DOCS_HOME": str(cwd / "home")})
    if data is not None:
        env["RLM_DOCS_DATA"] = str(data)
    return subprocess.run(
        [sys.executable, "-m", "rlm_docs", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_bench_make_finds_the_trec_file_in_rlm_docs_data(installed, tmp_path):
    data = tmp_path / "data"
    (data / "oolong-trec").mkdir(parents=True)
    shutil.copy(FIXTURE, data / "oolong-trec" / "trec_coarse_validated.jsonl")
    work = tmp_path / "work"
    work.mkdir()
    args = ["bench", "make", "oolong", "--out", "b", "--tokens", "2^11", "--questions", "2"]
    done = _run(installed, work, args, data)
    assert done.returncode == 0, done.stderr
    assert (work / "b" / "2048" / "questions.jsonl").is_file()
    given = _run(installed, work, [*args[:4], "c", *args[5:], "--data", str(FIXTURE)], None)
    assert given.returncode == 0, given.stderr


def test_missing_trec_file_says_where_to_get_it(installed, tmp_path):
    args = ["bench", "make", "oolong", "--out", "b", "--tokens", "2^11"]
    unset = _run(installed, tmp_path, args, None)
    assert unset.returncode == 2
    assert unset.stderr.strip() == (
        "rlm-docs bench make: error: TREC-coarse file not found (RLM_DOCS_DATA is not set); "
        "get it from the OOLONG repository (github.com/abertsch72/oolong, MIT): "
        "src/data_gen/oolong-synth/validated_data/trec_coarse_validated.jsonl, then pass "
        "--data PATH or set RLM_DOCS_DATA=DIR with DIR/oolong-trec/trec_coarse_validated.jsonl"
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    wrong = _run(installed, tmp_path, args, empty)
    assert wrong.returncode == 2
    assert f"({empty}/oolong-trec/trec_coarse_validated.jsonl)" in wrong.stderr
    assert "lib/python" not in wrong.stderr and "shared/datasets" not in wrong.stderr
    assert not (tmp_path / "b").exists()


def test_data_guide_commands_run(installed, tmp_path):
    """The shell lines of docs/data.md, as written, with the fixture as the downloaded file."""
    text = (ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    shutil.copy(FIXTURE, tmp_path / "trec_coarse_validated.jsonl")
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "rlm-docs").write_text(f'#!/bin/sh\nexec {sys.executable} -m rlm_docs "$@"\n')
    (shim / "rlm-docs").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "RLM_DOCS_DATA"}
    env.update(
        {
            "PATH": f"{shim}:{env['PATH']}",
            "PYTHONPATH": str(installed),
            "RLM_DOCS_HOME": str(tmp_path / "home"),
        }
    )
    done = subprocess.run(
        ["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "bench" / "oolong" / "manifest.json").is_file()
    assert (tmp_path / "bench" / "oolong2" / "manifest.json").is_file()
