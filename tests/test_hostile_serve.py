"""`rlm-docs serve` against hostile requests: every one is a 400 naming the field (or the body),
never a 500 or a traceback; budgets must be finite; a dollar limit needs a priced model; the
OpenAPI schema is behind the token."""

import json

import pytest

pytest.importorskip("fastapi", reason="the 'serve' extra (fastapi, uvicorn) is not installed")

import httpx  # noqa: E402

from tests.test_serve import KEY, QUESTION, Served, store  # noqa: E402, F401 (a fixture)

UNPRICED = "openai:no-price-model@http://127.0.0.1:9/v1"  # never contacted: refused first


@pytest.fixture(scope="module")
def server(store, tmp_path_factory):  # noqa: F811 (the fixture imported above)
    srv = Served(
        ["--corpus", str(store), "--api-key-env", "SERVE_KEY", "--max-wall", "3"]
        + ["--allow-model", UNPRICED],
        tmp_path_factory.mktemp("hostile-serve"),
    )
    yield srv
    srv.stop()


def _post(server: Served, body: str | bytes) -> httpx.Response:
    return httpx.post(
        server.url + "/v1/chat/completions",
        content=body,
        headers={"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"},
        timeout=60,
    )


def _body(**extra) -> dict:
    return {"model": "rlm-docs", "messages": [{"role": "user", "content": QUESTION}]} | extra


@pytest.mark.parametrize(
    ("budget", "field"),
    [
        ('{"max_wall_s": NaN}', "rlm_docs.budget.max_wall_s: expected a finite number"),
        ('{"max_wall_s": Infinity}', "rlm_docs.budget.max_wall_s: expected a finite number"),
        ('{"max_wall_s": 1e999}', "rlm_docs.budget.max_wall_s: expected a finite number"),
        ('{"max_cost_usd": -Infinity}', "rlm_docs.budget.max_cost_usd: expected a finite"),
        ('{"max_steps": ' + "9" * 4000 + "}", "rlm_docs.budget.max_steps: expected a finite"),
        ('{"max_steps": ' + "9" * 5000 + "}", "request body is not JSON"),
    ],
)
def test_non_finite_budgets_are_400_naming_the_field(server, budget, field):
    raw = json.dumps(_body(rlm_docs={"budget": "@"})).replace('"@"', budget)
    resp = _post(server, raw)
    assert resp.status_code == 400, resp.text
    assert field in resp.json()["error"]["message"]


def test_a_dollar_limit_on_an_unpriced_model_is_400_naming_both(server):
    options = {"model": UNPRICED, "budget": {"max_cost_usd": 0.5}}
    resp = _post(server, json.dumps(_body(rlm_docs=options)))
    assert resp.status_code == 400, resp.text
    message = resp.json()["error"]["message"]
    assert "rlm_docs.budget.max_cost_usd" in message and "no-price-model" in message


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (json.dumps(_body(stream=True, stream_options=["include_usage"])), "stream_options"),
        (json.dumps(_body(stream_options=[1])), "stream_options"),
        (json.dumps(_body(rlm_docs={"model": ["offline"]})), "rlm_docs.model"),
        (json.dumps(_body(rlm_docs={"sub_model": {"a": 1}})), "rlm_docs.sub_model"),
        (json.dumps(_body(rlm_docs={"budget": {"max_steps": [1]}})), "rlm_docs.budget.max_steps"),
        (b'{"model": "rlm-docs", "messages": "\xff"}', "not JSON"),
    ],
)
def test_hostile_bodies_are_400_naming_the_field(server, body, field):
    resp = _post(server, body)
    assert resp.status_code == 400, resp.text
    assert field in resp.json()["error"]["message"]


def test_the_server_logged_no_traceback_and_still_answers(server):
    # runs after the hostile requests above (module order)
    resp = _post(server, json.dumps(_body(rlm_docs={"budget": {"max_wall_s": 2.5}})))
    assert resp.status_code == 200, resp.text
    assert resp.json()["rlm_docs"]["budget"]["max_wall_s"] == 2.5
    assert "Traceback" not in server.text() and " 500" not in server.text()


def test_the_openapi_schema_needs_the_token(server):
    assert httpx.get(server.url + "/openapi.json").status_code == 401
    wrong = httpx.get(server.url + "/openapi.json", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    ok = httpx.get(server.url + "/openapi.json", headers={"Authorization": f"Bearer {KEY}"})
    assert ok.status_code == 200 and "/v1/chat/completions" in ok.json()["paths"]
    assert httpx.get(server.url + "/docs").status_code in (401, 404)
    assert httpx.get(server.url + "/health").status_code == 200  # the one open route


def test_the_cli_refuses_non_finite_budget_flags(capsys):
    from rlm_docs.cli import main

    for flag in ("--max-wall", "--max-cost"):
        for value in ("inf", "nan", "1e999"):
            with pytest.raises(SystemExit) as stopped:
                main(["ask", "q", flag, value])
            assert stopped.value.code == 2
            err = capsys.readouterr().err
            assert flag in err and "finite" in err, err
