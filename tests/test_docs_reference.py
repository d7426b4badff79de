"""The reference pages are the code's: docs/cli.md holds every command's `--help` as the parsers
write it, and docs/configuration.md names every environment variable the packages (`rlm_docs`,
`sandbox`) read."""

import re
from pathlib import Path

from rlm_docs.cli.reference import BEGIN, END, cli_reference

ROOT = Path(__file__).resolve().parents[1]
# read by code that runs an agent command, not set by a user: documented in docs/proxy.md
_AGENT = re.compile(r"RLM_DOCS_AGENT_\w+")


def test_the_cli_page_is_the_parsers_help():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert shown == cli_reference(), "run `python -m rlm_docs.cli.reference --write`"
    for command in ("ingest", "corpus search", "ask", "eval", "report", "serve", "proxy"):
        assert f"## `rlm-docs {command}`" in shown


def _read_variables() -> set[str]:
    """Every RLM_DOCS_* and provider variable named in the source of both packages."""
    found: set[str] = set()
    for path in [*(ROOT / "rlm_docs").rglob("*.py"), *(ROOT / "sandbox").rglob("*.py")]:
        text = path.read_text(encoding="utf-8")
        found |= set(
            re.findall(r"\b(RLM_DOCS_[A-Z_]+|(?:OPENAI|MISTRAL)_(?:API_KEY|BASE_URL))\b", text)
        )
    return {name for name in found if not _AGENT.fullmatch(name)}


def test_the_configuration_page_names_every_variable_the_package_reads():
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    table = page.split("| env var | meaning |", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`([A-Z][A-Z_]+)`", table))
    missing = _read_variables() - listed
    assert not missing, f"document these in docs/configuration.md: {sorted(missing)}"
    notebooks = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "notebooks").glob("*.ipynb"))
    stale = {n for n in listed if n not in _read_variables() and n not in notebooks}
    assert not stale, f"docs/configuration.md lists variables nothing reads: {sorted(stale)}"
