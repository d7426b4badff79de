"""The README stays a front door: short (the rest is the documentation site), and its Test
command is exactly what CI runs, so a reader who runs it sees what CI sees."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short():
    assert len(README.splitlines()) <= 300


def test_the_test_command_is_the_one_ci_runs():
    block = README.split("\n## Test\n", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    shown = [part.strip() for line in block.splitlines() for part in line.split("&&")]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    run = [line for line in ci if line.startswith(".venv/bin/") and "pip install" not in line]
    assert shown == run
    assert ".venv/bin/mkdocs build --strict" in run and ".venv/bin/python -m pytest -q" in run
