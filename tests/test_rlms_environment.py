"""The official rlms package on the rlm-docs harness: its `RLM` with the sandbox environment,
metered by the proxy in front of a real loopback chat server (exact totals, budgets that stop
it before the server sees the call), and red-team escape probes inside the environment."""

import pytest

pytest.importorskip("rlm", reason="the 'rlms' extra (the rlms package) is not installed")
pytest.importorskip("uvicorn", reason="the 'serve' extra (fastapi, uvicorn) is not installed")

import openai  # noqa: E402
from rlm import RLM  # noqa: E402
from rlm.environments import LocalREPL  # noqa: E402
from rlm.logger import RLMLogger  # noqa: E402

import rlm_docs.rlms as rlms_hook  # noqa: E402
from rlm_docs.corpus import Corpus  # noqa: E402
from rlm_docs.errors import ConfigError  # noqa: E402
from rlm_docs.governor import Budget  # noqa: E402
from rlm_docs.proxy import MeteringProxy  # noqa: E402
from rlm_docs.rlms import ENVIRONMENT, register  # noqa: E402
from rlm_docs.rlms.environment import SandboxEnv  # noqa: E402
from tests.fixtures.eval.support import DOCS  # noqa: E402
from tests.fixtures.rlms_model import rlms_model  # noqa: E402
from tests.servers.chat import ChatServer  # noqa: E402
from tests.test_sandbox_redteam import ESCAPES  # noqa: E402

CONTEXT = Corpus.from_documents(DOCS).render()
QUESTION = "What was Acme revenue for fiscal 2022?"
PROBES = [
    e for e in ESCAPES if e[0] in ("update_wrapper", "str_subclass_getattr", "from_re_import_sre")
]


def _rlm(proxy: MeteringProxy, logger: RLMLogger | None = None, **kwargs) -> RLM:
    register()
    return RLM(
        backend="openai",
        backend_kwargs={"model_name": "root", "base_url": proxy.question_url("q"), "api_key": "x"},
        other_backends=["openai"],
        other_backend_kwargs=[
            {"model_name": "sub", "base_url": proxy.question_url("q", "sub"), "api_key": "x"}
        ],
        environment=ENVIRONMENT,
        max_iterations=4,
        logger=logger,
        **kwargs,
    )


def _proxy(server: ChatServer, budget: Budget | None = None) -> MeteringProxy:
    ups = [f"openai:root@{server.base_url}", f"openai:sub@{server.base_url}"]
    return MeteringProxy(ups, budget=budget, cache=False)


def test_rlms_completes_through_the_proxy_with_the_servers_exact_totals(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    with ChatServer(reply=rlms_model) as server, _proxy(server) as proxy:
        logger = RLMLogger()
        done = _rlm(proxy, logger).completion(CONTEXT, root_prompt=QUESTION)
        served = server.served_usage()
        entries = proxy.ledger.entries
    assert "$4.2 billion" in done.response and done.response.endswith("[acme_2022_10k page 2]")
    assert [(e.role, e.model) for e in entries] == [
        ("root", "root"),
        ("sub", "sub"),
        ("root", "root"),
    ]
    assert sum(e.input_tokens for e in entries) == served["prompt_tokens"]
    assert sum(e.output_tokens for e in entries) == served["completion_tokens"]
    usage = done.usage_summary  # rlms' own count, from the usage the proxy returned
    assert usage.total_input_tokens == served["prompt_tokens"]
    assert usage.total_output_tokens == served["completion_tokens"]
    effort = proxy.effort("q")
    assert (effort["steps"], effort["sub_calls"]) == (2, 1)
    cell = logger.get_trajectory()["iterations"][0]["code_blocks"][0]["result"]
    assert cell["stdout"].startswith("acme_2022_10k 2 Results of operations.")


def test_a_proxy_budget_stops_rlms_before_the_server_sees_the_call(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-key-000000000000000000")
    # No sub-calls: the llm_query in the model's code gets the refusal as its text.
    with ChatServer(reply=rlms_model) as server, _proxy(server, Budget(max_sub_calls=0)) as proxy:
        logger = RLMLogger()
        _rlm(proxy, logger).completion(CONTEXT, root_prompt=QUESTION)
        assert [r.body["model"] for r in server.requests] == ["root", "root"]
    cell = logger.get_trajectory()["iterations"][0]["code_blocks"][0]["result"]
    assert "sub-call budget exhausted: 0/0 used" in cell["stdout"]
    # An input-token limit the second root turn would pass: rlms stops with the refusal.
    with (
        ChatServer(reply=rlms_model) as server,
        _proxy(server, Budget(max_input_tokens=1500)) as proxy,
    ):
        with pytest.raises(openai.BadRequestError) as refused:
            _rlm(proxy).completion(CONTEXT, root_prompt=QUESTION)
        assert refused.value.body["axis"] == "input_tokens"
        assert [r.body["model"] for r in server.requests] == ["root", "sub"]
        assert server.served_usage()["prompt_tokens"] == proxy.effort("q")["input_tokens"] <= 1500


@pytest.mark.parametrize(("code", "fragment"), [p[1:] for p in PROBES], ids=[p[0] for p in PROBES])
def test_escape_probes_fail_inside_the_environment(code, fragment):
    env = SandboxEnv(context_payload="the context")
    try:
        result = env.execute_code(code)
        assert fragment in result.stderr, result.stderr
        follow_up = env.execute_code("print(len(context))")
        assert follow_up.stdout == "11\n" and follow_up.stderr == ""
    finally:
        env.cleanup()


def test_what_rlms_local_environment_allows_the_sandbox_refuses(tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host data")
    probe = f"print(open({str(secret)!r}).read())"
    local = LocalREPL(context_payload="x")
    try:
        assert local.execute_code(probe).stdout == "host data\n"  # in-process exec
    finally:
        local.cleanup()
    env = SandboxEnv(context_payload="x")
    try:
        for code in (probe, "import os", "import socket", "import subprocess"):
            result = env.execute_code(code)
            assert result.stderr and "host data" not in result.stdout, code
    finally:
        env.cleanup()


def test_a_cell_that_runs_over_restarts_the_worker_with_context_bound_again():
    env = SandboxEnv(context_payload="abc", limits={"wall_s": 1})
    try:
        pid = env.sandbox.pid
        stuck = env.execute_code("while True:\n    pass")
        assert "TimeoutError" in stuck.stderr and "bound again" in stuck.stderr
        assert env.sandbox.pid != pid
        assert env.execute_code("print(context, answer)").stdout == (
            "abc {'content': '', 'ready': False}\n"
        )
    finally:
        env.cleanup()


def test_answer_dict_and_refused_options():
    env = SandboxEnv(context_payload=["a", "b"])
    try:
        assert env.execute_code('answer["content"] = 7').final_answer is None
        done = env.execute_code('answer["content"] = len(context) * 21\nanswer["ready"] = True')
        assert done.final_answer == "42"
        assert env.execute_code("print(answer)").stdout == "{'content': '', 'ready': False}\n"
    finally:
        env.cleanup()
    with pytest.raises(ConfigError, match="outside the sandbox"):
        SandboxEnv(custom_tools={"f": print})


def test_register_leaves_other_environments_alone_and_checks_the_version(monkeypatch):
    import rlm.core.rlm as core

    register()
    hooked = core.get_environment
    register()
    assert core.get_environment is hooked  # idempotent
    local = core.get_environment("local", {})
    assert isinstance(local, LocalREPL)
    local.cleanup()
    monkeypatch.setattr(rlms_hook.metadata, "version", lambda name: "0.9.0")
    with pytest.raises(
        ConfigError, match=r"rlms 0\.9\.0 is installed; rlm-docs works with rlms 0\.1\.3"
    ):
        register()
