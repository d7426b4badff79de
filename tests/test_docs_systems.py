"""docs/systems.md: its table is the registry's (`rlm_docs.systems.table`), and its snippet,
saved as a module, declares a system that `eval` then runs on the demo corpus offline."""

import os
import re
import subprocess
import sys
from pathlib import Path

from rlm_docs.systems.table import systems_table

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "systems.md"


def test_the_table_is_the_registrys():
    text = DOC.read_text(encoding="utf-8")
    found = re.search(
        r"<!-- systems table: begin -->\n(.*?)<!-- systems table: end -->", text, re.S
    )
    assert found is not None
    assert found.group(1) == systems_table()
    names = ("rlm", "bm25-agent", "static-rag", "long-context", "map-reduce", "deepread",
             "docdancer", "sleuth", "rlms", "agent")  # fmt: skip
    for name in names:
        assert f"| `{name}` |" in found.group(1)


def test_the_declaring_snippet_registers_a_system_eval_runs(tmp_path):
    (python,) = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.MULTILINE | re.DOTALL)
    (tmp_path / "first_pages.py").write_text(python, encoding="utf-8")
    run = (
        "import first_pages\nfrom rlm_docs.cli import main\n"
        f"raise SystemExit(main(['eval', '--dataset', {str(ROOT / 'corpus' / 'questions.jsonl')!r}, "
        "'--corpus', 'demo', '--system', 'first-pages', '--first-pages', '2', '--model', "
        "'offline', '--out', 'run', '--limit', '2', '--no-progress']))\n"
    )
    env = os.environ | {"RLM_DOCS_HOME": str(tmp_path / "home"), "RLM_DOCS_CACHE": "off"}
    ran = subprocess.run(
        [sys.executable, "-c", run], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert ran.returncode == 0, ran.stderr
    assert "registered: rlm, bm25-agent" in ran.stdout and "first-pages" in ran.stdout
    assert "first-pages: 2 questions (2 run now)" in ran.stdout
    assert '"pages": 2' in (tmp_path / "run" / "run.json").read_text()


def test_the_order_does_not_depend_on_which_system_was_imported_first():
    code = (
        "import rlm_docs.systems.map_reduce\nfrom rlm_docs.systems.table import systems_table\n"
        "print(systems_table(), end='')"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout == systems_table()
