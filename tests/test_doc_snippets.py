"""Every fenced code block of README.md and docs/**/*.md runs as written (`tests/doc_snippets.py`
says how blocks are run and how a page marks output and blocks that are not run).

A page is run here unless a test of its own runs it and asserts more than that it runs
(`ELSEWHERE`); a page whose examples need an optional extra is skipped, naming it, when the
extra is not installed.
"""

import shutil
from pathlib import Path

import pytest

from tests.doc_snippets import ROOT, Environment, blocks, lay_out, pages, run_page, runnable

# page -> the test that runs its blocks and checks what they print or write
ELSEWHERE = {
    "docs/attribution.md": "tests/test_docs_research_features.py",
    "docs/benchmark-data.md": "tests/test_docs_interop.py",
    "docs/benchmarks.md": "tests/test_bench_anchors.py",
    "docs/budget.md": "tests/test_docs_research_features.py",
    "docs/data.md": "tests/test_data_sets.py",
    "docs/export.md": "tests/test_docs_interop.py",
    "docs/ingest.md": "tests/test_docs_ingest.py",
    "docs/memory.md": "tests/test_docs_research_features.py",
    "docs/models.md": "tests/test_docs_models.py",
    "docs/proxy.md": "tests/test_docs_rlms_proxy.py",
    "docs/rlms.md": "tests/test_docs_rlms_proxy.py",
    "docs/tracing.md": "tests/test_docs_interop.py",
}
HERE = [page for page in pages() if page not in ELSEWHERE]


def test_every_block_is_run_output_or_marked():
    counted = {page: len(blocks(page)) for page in pages()}  # raises naming an unmarked block
    assert counted["README.md"] >= 3


def test_pages_run_elsewhere_are_run_there():
    for page, test in ELSEWHERE.items():
        assert (ROOT / page).is_file(), f"{page} is gone: drop it from ELSEWHERE"
        source = (ROOT / test).read_text(encoding="utf-8")
        assert Path(page).name in source, (test, page)
        if "run_page(" not in source:  # that test runs the page's one command its own way
            assert len(runnable(page)) == 1, f"{page}: {test} runs only its first block"


@pytest.mark.parametrize("page", HERE)
def test_page_blocks_run(page: str, docs_env: Environment, tmp_path: Path) -> None:
    if not any(b.language in ("python", "bash") and b.marker != "not run" for b in blocks(page)):
        return
    work = lay_out(tmp_path / "work")
    run_page(page, work, docs_env.env)
    shutil.rmtree(work)
