"""OpenTelemetry traces of eval runs, opt-in (`--otel`, or `OTEL_EXPORTER_OTLP_ENDPOINT` set).

Each finished question becomes a trace: a span for the question, one per root turn, one per
REPL cell and one per model call, timed as the trajectory recorded them, with OpenInference
attribute names on the model-call spans so Phoenix, Langfuse or any OTLP collector shows model,
tokens (cache reads included) and cost. Needs the `otel` extra.
"""

# `trace_question` lives in `rlm_docs.tracing.spans`, which imports the otel extra: importing it
# here would make every `eval` need that extra, traced or not.
from rlm_docs.tracing.setup import QuestionTracer, open_tracing, tracing_requested

__all__ = ["QuestionTracer", "open_tracing", "tracing_requested"]
