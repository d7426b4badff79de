"""The `offline` model's policy: deterministic, non-neural, no key and no weights.

It lets the quickstart, the demo and many tests run the whole RLM machinery for real (sandbox,
governor, trajectories) with no network; `make_client("offline")` wraps it as a model client
(`rlm_docs.models.offline`). `policy.reply(messages, purpose)` answers by the call's purpose
(`policy`): the root writes REPL code (`root`, `workloads`) whose body is the real modules of
`repl`, shipped to the sandbox from their source (`ship`); sub-calls get the extractive reader
(`reader`) or the TREC rules (`trec`); the baseline systems get `baselines`, and the document
agents `deepread`, `docdancer` and `sleuth` (their declarations register these policies by
name). Nothing in the policy is keyed to a data set's questions; accuracy is whatever it
honestly scores (weak on open-ended questions, which need judgement rather than extraction).

It imports only lower layers (answer parsing, the TREC labels, the call's purpose, the corpus's
name parsing and page marks; the corpus itself is reached through the sandbox helpers the REPL
code is given), so models, engine and benchmarks may use it and it uses none of them.
"""

from rlm_docs.offline.policy import detect_role, reply

__all__ = ["detect_role", "reply"]
