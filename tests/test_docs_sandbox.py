"""The ```python snippets of docs/sandbox.md run as written, in order, in one directory: a
snippet whose first line is `# NAME.py` is the module the next ones import, so it is saved
under that name (the sandbox's fork server imports the preload factory from it)."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "sandbox.md"
_SNIPPET = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)
_MODULE = re.compile(r"# (\w+\.py)\n")
# Appended to each snippet: the sandbox ran without importing rlm_docs into the host.
_NO_RLM_DOCS = "\nimport sys\nassert not [m for m in sys.modules if m.startswith('rlm_docs')]\n"


def test_the_standalone_example_runs(tmp_path: Path) -> None:
    snippets = _SNIPPET.findall(DOC.read_text(encoding="utf-8"))
    assert len(snippets) == 2 and _MODULE.match(snippets[0])
    env = dict(os.environ) | {"PYTHONPATH": str(ROOT), "RLM_DOCS_HOME": str(tmp_path / "home")}
    for code in snippets:
        if named := _MODULE.match(code):
            (tmp_path / named.group(1)).write_text(code, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-c", code + _NO_RLM_DOCS],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"docs/sandbox.md:\n{code}\n{done.stderr[-3000:]}"
    assert "rlm_docs" not in DOC.read_text(encoding="utf-8").split("```python", 1)[1]


def test_a_failing_factory_is_a_preload_error_naming_its_exception(tmp_path: Path) -> None:
    """A preload whose module does not exist: the sandbox does not start, and says why."""
    code = (
        "from sandbox import Preload, PreloadError, Sandbox\n"
        "try:\n"
        "    Sandbox(preload=Preload('no_such_module_here:load'))\n"
        "except PreloadError as exc:\n"
        "    print(exc.kind, '|', exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=dict(os.environ) | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ModuleNotFoundError | sandbox failed to start:"), done.stdout
    assert "no_such_module_here" in done.stdout
