"""docs/ranking.md runs as written: its Python example prints exactly the text block after it."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_python_example_prints_what_the_page_says(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "ranking.md").read_text(encoding="utf-8")
    (python,) = re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    (expected,) = re.findall(r"^```text\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    ran = subprocess.run(
        [sys.executable, "-c", python], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == expected
