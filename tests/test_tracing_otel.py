"""OpenTelemetry traces of an eval: spans per question, turn, cell and model call with
OpenInference attribute names, read back from the SDK's in-memory exporter; `--otel` end to
end against an OTLP/HTTP receiver on 127.0.0.1; and no secret in any attribute."""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the `otel` extra is not installed")
pytest.importorskip("openinference.semconv", reason="the `otel` extra is not installed")

from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

from rlm_docs.eval.runner import EvalSettings, run_eval  # noqa: E402
from rlm_docs.models import parse_spec  # noqa: E402, F401
from rlm_docs.tracing import QuestionTracer  # noqa: E402
from rlm_docs.tracing.spans import trace_question  # noqa: E402
from tests.fixtures.eval.support import QUESTIONS, build_store  # noqa: E402
from tests.fixtures.scripted_run import eval_argv, prices_env, write_scripts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OPENAI_SECRET = "sk-proj-THISISTHEOPENAIKEY0123456789"
MISTRAL_SECRET = "mistral-key-without-sk-shape-42"
HEADER_SECRET = "otel-collector-token-77"


@pytest.fixture
def spans(rlm_home, tmp_path, monkeypatch):
    """The finished spans of the scripted one-question eval, traced in process."""
    monkeypatch.setenv("RLM_DOCS_CACHE", "off")
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_SECRET)
    monkeypatch.setenv("MISTRAL_API_KEY", MISTRAL_SECRET)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", f"Authorization=Bearer {HEADER_SECRET}")
    for key, value in prices_env(tmp_path).items():
        monkeypatch.setenv(key, value)
    root, sub = write_scripts(tmp_path, leak=f"{OPENAI_SECRET} {MISTRAL_SECRET}")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = EvalSettings(
        dataset=QUESTIONS,
        corpus=build_store(tmp_path / "store"),
        system="rlm",
        model=f"scripted:{root}",
        sub_model=f"scripted:{sub}",
        out=tmp_path / "run",
        limit=1,
        workers=1,
        progress=False,
        options={"prompt": "docs", "confirm_final": False},
    )
    run_eval(settings, on_record=QuestionTracer(provider.get_tracer("test")))
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text())
    return exporter.get_finished_spans(), record


def _tree(spans) -> list[tuple[str, str | None]]:
    by_id = {s.context.span_id: s for s in spans}
    return [
        (s.name, by_id[s.parent.span_id].name if s.parent else None)
        for s in sorted(spans, key=lambda s: (s.start_time, s.end_time))
    ]


def test_one_span_per_question_turn_cell_and_model_call(spans):
    finished, record = spans
    assert record["correct"] is True
    assert sorted(_tree(finished)) == sorted(
        [
            ("question", None),
            ("turn 1", "question"),
            ("llm root", "turn 1"),
            ("cell 1", "turn 1"),
            ("llm llm_query", "cell 1"),
            ("rlm_query", "cell 1"),
            ("turn 1", "rlm_query"),
            ("llm root", "turn 1"),
            ("cell 1", "turn 1"),
            ("turn 2", "question"),
            ("llm root", "turn 2"),
            ("cell 1", "turn 2"),
        ]
    )
    assert len({s.context.trace_id for s in finished}) == 1  # one trace per question
    by_id = {s.context.span_id: s for s in finished}
    for s in finished:  # every span lies inside its parent, on the recorded clock
        if s.parent:
            parent = by_id[s.parent.span_id]
            assert parent.start_time <= s.start_time <= s.end_time <= parent.end_time, s.name
    question = next(s for s in finished if s.name == "question")
    a = question.attributes
    assert a["openinference.span.kind"] == "AGENT" and a["rlmdocs.question.id"] == "q1"
    assert a["input.value"] == "What was Acme revenue for fiscal 2022?"
    assert a["rlmdocs.correct"] is True and a["rlmdocs.steps"] == record["steps"]
    assert a["rlmdocs.cost_usd"] == pytest.approx(record["cost_usd"])


def test_llm_spans_carry_openinference_model_tokens_cache_reads_and_cost(spans):
    finished, record = spans
    llm = sorted((s for s in finished if s.name.startswith("llm ")), key=lambda s: s.start_time)
    ledger = sorted(record["ledger"], key=lambda e: e["started_at"])
    assert [s.name for s in llm] == ["llm root", "llm llm_query", "llm root", "llm root"]
    for span, entry in zip(llm, ledger, strict=True):
        a = span.attributes
        assert a["openinference.span.kind"] == "LLM"
        assert a["llm.provider"] == entry["backend"] == "scripted"
        assert a["llm.token_count.prompt"] == entry["input_tokens"]
        assert a["llm.token_count.completion"] == entry["output_tokens"]
        assert a["llm.token_count.total"] == entry["input_tokens"] + entry["output_tokens"]
        assert a["llm.token_count.prompt_details.cache_read"] == entry["cached_tokens"]
        assert a["llm.cost.total"] == pytest.approx(entry["cost_usd"]) and entry["cost_usd"] > 0
    sub = llm[1].attributes
    assert sub["llm.model_name"] == "scripted" and sub["rlmdocs.role"] == "llm_query"
    assert sub["input.value"] == "Acme revenue fiscal 2022?"
    # the ledger's own clock (to the microsecond a datetime keeps)
    assert abs(llm[1].start_time - ledger[1]["started_at"] * 1e9) < 2_000
    assert llm[0].attributes["llm.token_count.prompt_details.cache_read"] == 700
    cells = [s.attributes for s in finished if s.name == "cell 1"]
    assert {c["tool.name"] for c in cells} == {"repl"}
    assert any(c["input.value"].startswith("note = llm_query(") for c in cells)


def test_no_secret_in_any_attribute(spans):
    finished, _ = spans
    text = json.dumps(
        [
            {**dict(s.attributes), "resource": dict(s.resource.attributes), "name": s.name}
            for s in finished
        ],
        default=str,
    )
    # the scripted models echoed both keys into a reply and a cell's output
    assert "[REDACTED]" in text
    for secret in (OPENAI_SECRET, MISTRAL_SECRET, HEADER_SECRET):
        assert secret not in text


def test_a_record_quoting_a_key_is_redacted_at_the_span(spans, monkeypatch):
    from rlm_docs.engine.trajectory import load_trajectory

    _, record = spans
    monkeypatch.setenv("MISTRAL_API_KEY", MISTRAL_SECRET)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    leaked = {**record, "question": f"my key is {MISTRAL_SECRET}", "answer": [OPENAI_SECRET]}
    trace_question(provider.get_tracer("t"), leaked, load_trajectory(record["trajectory"]))
    question = next(s for s in exporter.get_finished_spans() if s.name == "question")
    assert question.attributes["input.value"] == "my key is [REDACTED]"
    assert OPENAI_SECRET not in question.attributes["output.value"]


class _Collector(BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_eval_otel_sends_spans_to_an_otlp_endpoint(tmp_path):
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    server = HTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        env = os.environ | prices_env(tmp_path) | {
            "RLM_DOCS_HOME": str(tmp_path / "home"),
            "RLM_DOCS_CACHE": "off",
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_port}",
            "OTEL_SERVICE_NAME": "rlm-test",
        }  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-m", "rlm_docs", *eval_argv(tmp_path, tmp_path / "run")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        server.shutdown()
    names, services = [], set()
    for body in _Collector.bodies:
        request = ExportTraceServiceRequest.FromString(body)
        for rs in request.resource_spans:
            services |= {a.value.string_value for a in rs.resource.attributes
                         if a.key == "service.name"}  # fmt: skip
            names += [s.name for ss in rs.scope_spans for s in ss.spans]
    assert services == {"rlm-test"}
    assert sorted(names) == sorted(
        ["question", "turn 1", "turn 1", "turn 2", "llm root", "llm root", "llm root",
         "cell 1", "cell 1", "cell 1", "llm llm_query", "rlm_query"]
    )  # fmt: skip


def _without_otel(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    code = (
        "import sys; sys.modules['opentelemetry.exporter.otlp.proto.http.trace_exporter'] = None\n"
        f"from rlm_docs.cli import main\nsys.exit(main({argv!r}))"
    )
    return subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=os.environ | env,
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_missing_extra_with_flag_is_one_line_and_with_env_only_a_warning(tmp_path):
    env = {"RLM_DOCS_HOME": str(tmp_path / "home"), "RLM_DOCS_CACHE": "off",
           **prices_env(tmp_path)}  # fmt: skip
    argv = eval_argv(tmp_path, tmp_path / "run")
    done = _without_otel([*argv, "--otel"], env)
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "rlm-docs eval: error: --otel needs the `otel` extra: pip install 'rlm-docs[otel]'"
    )
    assert not (tmp_path / "run").exists()
    done = _without_otel(argv, env | {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"})
    assert done.returncode == 0, done.stderr
    assert "OTEL_EXPORTER_OTLP_ENDPOINT is set but the `otel` extra is not installed" in (
        done.stderr
    )
