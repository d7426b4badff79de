"""The licence and citation files agree with the package metadata (pyproject's licence, the
package version), so a release cannot carry one licence in one place and another elsewhere."""

import tomllib
from pathlib import Path

import yaml

from rlm_docs.version import __version__

ROOT = Path(__file__).resolve().parent.parent


def test_license_file_is_the_license_pyproject_names():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n\nCopyright (c) ")
    assert "Permission is hereby granted, free of charge" in text


def test_citation_file_matches_the_package():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["type"] == "software"
    assert str(citation["version"]) == __version__
    assert citation["license"] == "MIT"
    assert citation["title"].startswith("rlm-docs") and citation["authors"][0]["name"]
