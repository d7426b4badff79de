"""Fixtures many test files share: a fresh RLM_DOCS_HOME, a CLI test's working directory, no
Mistral OCR service, and what the documentation's code blocks run against. A test file that
needs more defines a fixture of the same name that requests this one."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doc_snippets import Environment, environment


@pytest.fixture
def rlm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """RLM_DOCS_HOME set to `tmp_path/home` (not created): the demo store, caches and run logs a
    test makes go there, never to the user's home. Returns that directory."""
    home = tmp_path / "home"
    monkeypatch.setenv("RLM_DOCS_HOME", str(home))
    return home


@pytest.fixture
def home(rlm_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A CLI test's world: RLM_DOCS_HOME under `tmp_path`, the response cache off (every call
    reaches the model under test) and `tmp_path` the working directory. Returns `tmp_path`."""
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def no_ocr_service(monkeypatch: pytest.MonkeyPatch) -> None:
    """No Mistral key or server in the environment: OCR is local unless a test serves one."""
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    monkeypatch.delenv("MISTRAL_BASE_URL", raising=False)


@pytest.fixture(scope="session")
def docs_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Environment]:
    """What the README's and the docs' code blocks run against (`tests/doc_snippets.py`), one
    for the whole session, so the demo store is built once for every page."""
    with environment(tmp_path_factory.mktemp("docs-env")) as env:
        yield env
