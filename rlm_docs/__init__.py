"""rlm-docs: recursive language models over document collections."""

__version__ = "0.1.0"
