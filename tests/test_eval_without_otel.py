"""`eval` runs without the `otel` extra (a plain `pip install`, where OpenInference is absent):
tracing is opt-in, so its packages are imported only when a run is traced."""

import subprocess
import sys
from pathlib import Path

from tests.fixtures.eval.support import QUESTIONS


def test_eval_runs_where_opentelemetry_is_not_installed(tmp_path):
    argv = ["eval", "--dataset", str(QUESTIONS), "--corpus", "demo", "--system", "static-rag",
            "--model", "offline", "--limit", "1", "--out", str(tmp_path / "run"), "--no-progress"]  # fmt: skip
    code = (
        "import sys\n"
        "sys.modules['openinference'] = None  # import fails, as without the extra\n"
        f"from rlm_docs.cli import main\nsys.exit(main({argv!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
        env={"RLM_DOCS_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "static-rag: 1 questions (1 run now)" in done.stdout
