"""docs/budget.md, docs/memory.md and docs/attribution.md run as written (`tests/doc_snippets.py`:
each Python example prints exactly the text block marked as its output), and each shell
example, offline over the demo corpus, prints what the page says."""

import re
from pathlib import Path

import pytest

from tests.doc_snippets import Environment, lay_out, run_page


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
def test_the_page_runs_and_its_shell_example_prints_what_it_says(
    doc: str, says: re.Pattern[str], tmp_path: Path, docs_env: Environment
) -> None:
    ran = run_page(f"docs/{doc}", lay_out(tmp_path / "work"), docs_env.env)
    shell = [r for r in ran if r.block.language == "bash"]
    assert len(shell) == 1
    assert says.search(shell[0].stdout), shell[0].stdout
