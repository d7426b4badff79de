"""Self-contained HTML viewer of eval runs and trajectory logs (`rlm-docs view`)."""

from rlm_docs.viewer.load import load_source
from rlm_docs.viewer.page import build_html, write_viewer

__all__ = ["build_html", "load_source", "write_viewer"]
