"""Evaluation: MADQA metrics, question sets, the resumable runner and the comparison report.

Metrics (`anls_star`, `page_f1`, `doc_f1`, `kuiper`, `rogan_gladen`, ...) never import the
engine. Names are imported lazily so `import rlm_docs.eval` stays cheap.
"""

from importlib import import_module
from typing import Any

_EXPORTS = {
    "anls_star": "rlm_docs.eval.anls",
    "page_f1": "rlm_docs.eval.citation_f1",
    "doc_f1": "rlm_docs.eval.citation_f1",
    "kuiper": "rlm_docs.eval.effort",
    "kuiper_bootstrap": "rlm_docs.eval.effort",
    "KuiperResult": "rlm_docs.eval.effort",
    "effort_correlations": "rlm_docs.eval.effort",
    "wasted_effort_ratio": "rlm_docs.eval.effort",
    "rogan_gladen": "rlm_docs.eval.correction",
    "error_type": "rlm_docs.eval.taxonomy",
    "Question": "rlm_docs.questions",
    "load_questions": "rlm_docs.eval.dataset",
    "score_prediction": "rlm_docs.eval.scoring",
    "summarize": "rlm_docs.eval.aggregate",
    "by_group": "rlm_docs.eval.aggregate",
    "EvalSettings": "rlm_docs.eval.runner",
    "run_eval": "rlm_docs.eval.runner",
    "run_sweep": "rlm_docs.eval.sweep",
    "SweepCell": "rlm_docs.eval.sweep",
    "load_run": "rlm_docs.eval.rundir",
    "build_report": "rlm_docs.eval.report",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rlm_docs.eval' has no attribute {name!r}")
