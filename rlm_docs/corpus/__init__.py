"""Corpus model: documents of 1-based pages, the Parquet store, rendering and search."""

from rlm_docs.corpus.corpus import Corpus
from rlm_docs.corpus.document import DocInfo, Document, Hit

__all__ = ["Corpus", "DocInfo", "Document", "Hit"]
