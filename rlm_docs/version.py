"""The package version, in a module of its own so every layer can read it without importing the
`rlm_docs` facade (which sits on top: it re-exports names from every layer)."""

__version__ = "0.1.0"
