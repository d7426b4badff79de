"""Code the offline root sends to the sandbox, written as real modules.

Each module here is plain Python for the sandbox's restricted dialect (`sandbox.policy`): only
allow-listed imports (`re`, `collections`), no names starting with `_`, no classes, and every
helper it uses (`search`, `page`, `filings`, `cite`, the sub-call reader ...) passed in as an
argument rather than read from globals, so tests can import and call the functions directly
against `make_helpers(corpus)`. `rlm_docs.offline.ship` sends a module's source to the sandbox
with its type annotations stripped, followed by one call line.
"""
