"""The shell examples of docs/ingest.md run as written: `scans/` holds an image-only PDF and
`notes/` Windows-1252 text, and both come out readable."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from tests.fixtures.ingest.scan import scanned_pdf

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract not installed")
def test_ingest_guide_commands_run(tmp_path):
    text = (ROOT / "docs" / "ingest.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```bash\n")[1:]]
    assert len(blocks) == 2
    (tmp_path / "scans").mkdir()
    (tmp_path / "scans" / "letter.pdf").write_bytes(scanned_pdf(["Dear reader\nTotal 1,250"]))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "menu.txt").write_bytes("Café … £100\f".encode("cp1252"))
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "rlm-docs").write_text(f'#!/bin/sh\nexec {sys.executable} -m rlm_docs "$@"\n')
    (shim / "rlm-docs").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("MISTRAL_API_KEY", "RLM_DOCS_OCR_LANG")}
    env.update({"PATH": f"{shim}:{env['PATH']}", "RLM_DOCS_HOME": str(tmp_path / "home")})
    for block, doc, expected in zip(
        blocks, ("letter", "menu"), ("Total 1,250", "Café … £100"), strict=True
    ):
        done = subprocess.run(
            ["bash", "-e", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert expected in Corpus.load(tmp_path / "mystore").page(doc, 1)
