"""Turning tracing on: the OTLP exporter, the tracer, and what an eval hands each question to.

Opt-in: `--otel`, or the standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or its `_TRACES_` variant)
set in the environment. The exporter is the SDK's OTLP/HTTP one, so the standard `OTEL_*`
variables (endpoint, headers, service name, resource attributes) configure it as they do any
OpenTelemetry program; spans go out in batches from a background thread, and closing the
tracer flushes what is left.
"""

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rlm_docs.errors import ConfigError

ENDPOINT_VARS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
EXTRA_HINT = "pip install 'rlm-docs[otel]'"


def tracing_requested(flag: bool) -> bool:
    """`--otel` given, or an OTLP endpoint set in the environment."""
    return flag or any(os.environ.get(name, "").strip() for name in ENDPOINT_VARS)


class QuestionTracer:
    """Emits each finished question's spans (`record` is one `results.jsonl` line)."""

    def __init__(self, tracer: Any, provider: Any = None) -> None:
        self.tracer = tracer
        self.provider = provider

    def __call__(self, record: Mapping[str, Any]) -> None:
        from rlm_docs.engine.trajectory import load_trajectory
        from rlm_docs.errors import DatasetError
        from rlm_docs.tracing.spans import trace_question

        path = record.get("trajectory")
        try:
            trajectory = load_trajectory(path) if path and Path(path).is_file() else None
        except DatasetError:
            trajectory = None
        trace_question(self.tracer, record, trajectory)

    def close(self) -> None:
        """Flush and stop the exporter (spans still queued are sent)."""
        if self.provider is not None:
            self.provider.shutdown()


def open_tracing(flag: bool) -> QuestionTracer | None:
    """The tracer to hand `run_eval`, or None when tracing is off.

    With `--otel` a missing extra is an error; with only the environment variable set it is a
    warning (the variable may be there for another program) and the run goes on untraced.
    """
    if not tracing_requested(flag):
        return None
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        import rlm_docs.tracing.spans  # noqa: F401  (needs openinference too)
    except ImportError:
        if flag:
            raise ConfigError(f"--otel needs the `otel` extra: {EXTRA_HINT}") from None
        print(
            f"warning: {ENDPOINT_VARS[0]} is set but the `otel` extra is not installed "
            f"({EXTRA_HINT}); no traces are sent",
            file=sys.stderr,
        )
        return None
    from rlm_docs.version import __version__

    attributes = {"service.version": __version__}
    if not os.environ.get("OTEL_SERVICE_NAME", "").strip():  # the standard variable wins
        attributes[SERVICE_NAME] = "rlm-docs"
    resource = Resource.create(attributes)
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return QuestionTracer(provider.get_tracer("rlm_docs", __version__), provider)
