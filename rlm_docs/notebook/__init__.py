"""Notebook exploration: a hands-on sandbox `Session`, rich displays, IPython magics
(`%load_ext rlm_docs`, see `rlm_docs.notebook.magics`)."""

from rlm_docs.notebook.display import Rich, register, show
from rlm_docs.notebook.session import Session
from rlm_docs.notebook.trajectory_view import TrajectoryView

__all__ = ["Rich", "Session", "TrajectoryView", "register", "show"]

register()  # the rich views of corpora, hits, predictions, ledgers and cell results
