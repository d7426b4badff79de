"""API keys are secrets by declaration: every HTTP backend's key variable (`endpoints.KEY_ENV`)
is masked in logged trajectories and kept from agent programs, whatever its value looks like."""

from rlm_docs.engine.trajectory import redact
from rlm_docs.models import endpoints
from rlm_docs.models.factory import secret_env


def test_a_newly_declared_backend_key_is_masked_in_logs(monkeypatch):
    # The key has no `sk-` prefix, so only its declaration can get it masked.
    monkeypatch.setitem(endpoints.KEY_ENV, "acme", "ACME_API_KEY")
    monkeypatch.setenv("ACME_API_KEY", "acme-0123456789")
    assert "ACME_API_KEY" in secret_env()
    logged = redact({"prompt": "use acme-0123456789 please", "calls": ["acme-0123456789"]})
    assert logged == {"prompt": "use [REDACTED] please", "calls": ["[REDACTED]"]}


def test_an_undeclared_variable_is_not_a_secret(monkeypatch):
    monkeypatch.setenv("ACME_API_KEY", "acme-0123456789")
    assert "ACME_API_KEY" not in secret_env()
    assert redact("use acme-0123456789") == "use acme-0123456789"


def test_every_declared_key_is_masked(monkeypatch):
    for i, name in enumerate(secret_env()):
        monkeypatch.setenv(name, f"value-{i}-abcdefgh")
    text = " ".join(f"value-{i}-abcdefgh" for i in range(len(secret_env())))
    assert redact(text) == " ".join(["[REDACTED]"] * len(secret_env()))
