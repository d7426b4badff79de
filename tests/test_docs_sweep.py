"""docs/sweep.md runs as written: its Python example (`run_sweep` over `EvalSettings` cells)
prints exactly the text block after it, offline over the demo corpus."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _block(language: str) -> str:
    text = (ROOT / "docs" / "sweep.md").read_text(encoding="utf-8")
    (block,) = re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    return block


def test_the_run_sweep_example_prints_what_the_page_says(tmp_path):
    ran = subprocess.run(
        [sys.executable, "-c", _block("python")],
        cwd=tmp_path,
        env=os.environ | {"RLM_DOCS_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == _block("text")
