"""docs/budget.md, docs/memory.md and docs/attribution.md run as written: each Python example
prints exactly the text block after it, and each shell example runs offline over the demo
corpus and prints what the page says."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _blocks(doc: str, language: str) -> list[str]:
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def _env(tmp_path: Path) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return os.environ | {
        "RLM_DOCS_HOME": str(tmp_path / "home"),
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
    }


@pytest.mark.parametrize("doc", ["budget.md", "memory.md"])
def test_the_python_example_prints_what_the_page_says(doc, tmp_path):
    (python,) = _blocks(doc, "python")
    (expected,) = _blocks(doc, "text")
    ran = subprocess.run(
        [sys.executable, "-c", python],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == expected


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ("budget.md", re.compile(r"^demo-0\d 0\.25$", re.M)),
        (
            "memory.md",
            re.compile(r"^memory: first question [\d,]+ tokens .*sub-calls reused$", re.M),
        ),
        (
            "attribution.md",
            re.compile(
                r"^ +1 +0 +no +1\.0 -> 1\.0 .*\n(.*\n)* +1 +0 +yes +1\.0 -> 0\.0 .*\n"
                r"(.*\n)*\d+ of \d+ sub-calls changed the answer",
                re.M,
            ),
        ),
    ],
)
def test_the_shell_example_runs_offline(doc, says, tmp_path):
    (shell,) = _blocks(doc, "bash")
    (tmp_path / "corpus").mkdir()
    shutil.copy(ROOT / "corpus" / "questions.jsonl", tmp_path / "corpus")
    ran = subprocess.run(
        ["bash", "-c", shell],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    assert says.search(ran.stdout), ran.stdout
