"""API keys go only where the user sent them: a provider's own endpoint, or one named on the
command line or in the environment; never to a server a sweep spec names, unless allowed.

Every server here is a real loopback chat server that answers all requests and records whether
each one carried the key (`ChatServer(api_key=KEY, refuse=False)`)."""

import json
from pathlib import Path

import pytest

from rlm_docs.cli import main
from rlm_docs.models import AuthError, endpoints, make_client
from tests.fixtures.eval.support import QUESTIONS, build_store, fake_model
from tests.servers.chat import ChatServer

KEY = "sk-secret-key-that-must-stay-home-0000"


@pytest.fixture
def env(rlm_home, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    for name in ("OPENAI_BASE_URL", "RLM_DOCS_MODEL", "RLM_DOCS_SUB_MODEL", endpoints.ALLOW_ENV):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("keys") / "store")


def _servers(n: int) -> list[ChatServer]:
    return [ChatServer(reply=fake_model, api_key=KEY, refuse=False).start() for _ in range(n)]


def _spec(path: Path, store: Path, root: str, sub: str, judge: str) -> Path:
    path.write_text(
        f"""
[grid]
system = "map-reduce"
model = "openai:fake@{root}"
sub-model = "openai:fake@{sub}"
judge = "openai:fake@{judge}"
context-window = 2000
chunk-tokens = 500
[[data]]
name = "keys"
dataset = "{QUESTIONS}"
corpus = "{store}"
limit = 2
""",
        encoding="utf-8",
    )
    return path


def _port(server: ChatServer) -> str:
    return server.url.removeprefix("http://")


def test_a_sweep_spec_cannot_send_the_key_to_its_servers(env, store, capsys):
    servers = _servers(3)
    try:
        spec = _spec(env / "spec.toml", store, *(s.base_url for s in servers))
        argv = ["sweep", str(spec), "--out", str(env / "out"), "--no-progress"]
        assert main([*argv, "--dry-run"]) == 0
        plan = capsys.readouterr().out
        for role, server in zip(("model", "sub-model", "judge"), servers, strict=True):
            assert f"{role} openai:fake@{server.base_url} -> {server.base_url} (no key" in plan
            assert f"--allow-endpoint {_port(server)} sends OPENAI_API_KEY" in plan
        assert main(argv) == 0
        for server in servers:  # root, sub-model and judge each served, none got the key
            assert server.requests, server.url
            assert not any(r.authorized for r in server.requests), server.url
        # a rerun (every cell resumed from its run directory) sends no key either
        assert main(argv) == 0
        assert not any(r.authorized for s in servers for r in s.requests)
    finally:
        for server in servers:
            server.stop()


def test_allowed_or_command_line_servers_get_the_key(env, store, capsys):
    servers = _servers(3)
    try:
        urls = [s.base_url for s in servers]
        spec = _spec(env / "spec.toml", store, *urls)
        allow = [a for s in servers for a in ("--allow-endpoint", _port(s))]
        argv = ["sweep", str(spec), "--out", str(env / "allowed"), "--no-progress", *allow]
        assert main([*argv, "--dry-run"]) == 0
        assert capsys.readouterr().out.count("(OPENAI_API_KEY sent)") == 3
        assert main(argv) == 0
        assert all(s.requests and all(r.authorized for r in s.requests) for s in servers)
        for server in servers:
            server.requests.clear()
        # the same servers named on eval's command line get the key
        model, sub, judge = (f"openai:fake@{u}" for u in urls)
        cli = ["eval", "--dataset", str(QUESTIONS), "--corpus", str(store), "--limit", "2",
               "--system", "map-reduce", "--context-window", "2000", "--chunk-tokens", "500",
               "--model", model,
               "--sub-model", sub, "--judge", judge, "--out", str(env / "cli"), "--no-progress"]  # fmt: skip
        assert main(cli) == 0
        assert all(s.requests and all(r.authorized for r in s.requests) for s in servers)
    finally:
        for server in servers:
            server.stop()


def test_the_environment_names_endpoints_too(env, monkeypatch):
    with ChatServer(api_key=KEY, refuse=False) as server:
        with endpoints.named_by_user([]):
            make_client(f"openai:m@{server.base_url}", cache=False).complete(
                [{"role": "user", "content": "hi"}]
            )
            monkeypatch.setenv(endpoints.ALLOW_ENV, f"example.org,{_port(server)}")
            make_client(f"openai:m@{server.base_url}", cache=False).complete(
                [{"role": "user", "content": "hi"}]
            )
            monkeypatch.delenv(endpoints.ALLOW_ENV)
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            make_client("openai:m", cache=False).complete([{"role": "user", "content": "hi"}])
        assert [r.authorized for r in server.requests] == [False, True, True]


def test_a_refused_withheld_key_says_how_to_allow_it(env):
    with ChatServer(api_key=KEY) as server, endpoints.named_by_user([]):
        client = make_client(f"openai:m@{server.base_url}", cache=False)
        with pytest.raises(AuthError, match="OPENAI_API_KEY was not sent to") as caught:
            client.complete([{"role": "user", "content": "hi"}])
        assert f"--allow-endpoint {_port(server)}" in str(caught.value)
        assert KEY not in str(caught.value)


@pytest.mark.parametrize(
    ("url", "official"),
    [
        ("https://api.openai.com/v1", True),
        ("https://api.openai.com:443/v1", True),
        ("http://api.openai.com/v1", False),  # not TLS
        ("https://api.openai.com.evil.example/v1", False),
        ("https://evil.example/api.openai.com/v1", False),
        ("https://user@evil.example/v1?api.openai.com", False),
    ],
)
def test_only_the_providers_own_endpoint_counts_as_official(url, official):
    assert endpoints.is_official("openai", url) is official
    with endpoints.named_by_user([]):
        assert endpoints.key_may_go("openai", url) is official


def test_ray_clusters_named_in_a_file_get_no_keys(env):
    from rlm_docs.eval.ray_executor import client_env

    with endpoints.named_by_user([]):
        assert client_env(None)[1] == {"OPENAI_API_KEY": KEY}  # a new local Ray
        assert client_env("auto")[1] == {"OPENAI_API_KEY": KEY}
        plain, secrets = client_env("10.0.0.7:6379")
        assert secrets == {} and KEY not in json.dumps(plain)
    with endpoints.named_by_user(["10.0.0.7:6379"]):
        assert client_env("10.0.0.7:6379")[1] == {"OPENAI_API_KEY": KEY}


def test_the_security_page_shows_what_a_dry_run_prints(env, capsys):
    import re
    import shutil

    page = (Path(__file__).resolve().parents[1] / "docs" / "security.md").read_text()
    spec = re.search(r"```toml\n(.*?)```", page, re.DOTALL).group(1)
    shown = re.search(r"```text\n(.*?)```", page, re.DOTALL).group(1)
    (env / "served.toml").write_text(spec, encoding="utf-8")
    shutil.copy(QUESTIONS, env / "questions.jsonl")
    argv = ["sweep", str(env / "served.toml"), "--out", str(env / "sweep"), "--dry-run"]
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    for line in shown.splitlines():
        assert line in printed, line
    assert main([*argv, "--allow-endpoint", "127.0.0.1:8000"]) == 0
    assert capsys.readouterr().out.count("(OPENAI_API_KEY sent)") == 2
