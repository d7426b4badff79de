"""docs/models.md runs as written: its Python snippet saved as `my_models.py` runs (a client of
one's own answers through `RLM`), and its shell snippet evaluates with `py:my_models:shouting`."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "models.md"


def _blocks(language: str) -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def test_the_client_snippet_and_the_py_model_string_run(tmp_path):
    (python,) = _blocks("python")
    (shell,) = _blocks("bash")
    (tmp_path / "my_models.py").write_text(python, encoding="utf-8")
    (tmp_path / "corpus").mkdir()
    shutil.copy(ROOT / "corpus" / "questions.jsonl", tmp_path / "corpus")
    bin_dir = str(Path(sys.executable).parent)
    env = os.environ | {
        "RLM_DOCS_HOME": str(tmp_path / "home"),
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
    }
    ran = subprocess.run(
        [sys.executable, "my_models.py"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    assert "['I read nothing, but I answer loudly'] final" in ran.stdout
    evaluated = subprocess.run(
        ["bash", "-c", shell], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert evaluated.returncode == 0, evaluated.stderr
    assert "rlm: 2 questions (2 run now)" in evaluated.stdout
    assert (tmp_path / "runs" / "mine" / "results.jsonl").read_text().count("\n") == 2
