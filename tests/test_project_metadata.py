"""The licence, citation and changelog files agree with the package metadata (pyproject's
licence, the package version), so a release cannot carry one licence or version in one place
and another elsewhere."""

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


def test_the_changelog_has_unreleased_changes_and_the_package_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert text.startswith("# Changelog\n") and "\n## [Unreleased]\n" in text
    assert f"\n## [{__version__}] - " in text
