"""Upper bounds on the model calls and dollars of one question, from its budget alone.

`rlm-docs sweep --dry-run` prints these before anything is spent, so they must hold whatever
the model does. What bounds each quantity (see `rlm_docs.governor` and the systems):

Calls. Each system's declaration bounds its own calls (`Declaration.calls`). `--max-steps N`
counts root turns tree-wide (child RLMs included, their forced turns too); the top-level run
may add one forced answering turn, and `rlm` one extraction call. `--max-sub-calls` counts
`llm_query` calls tree-wide (children get a share of what is left). So `rlm` makes at most N +
2 + sub-calls; `bm25-agent` min(T, N) + 1 (T = `--max-iterations`); `map-reduce` sub-calls +
1; `static-rag` and `long-context` one. A judge adds at most one.

Dollars. The governor refuses any call that could pass `--max-cost`, so a question spends at
most that. Without it, `--max-input-tokens` and `--max-output-tokens` together bound the
question's tokens, hence its dollars at the dearest of its models' prices. Otherwise one reply
may be as long as the provider allows: unbounded. A judge's call runs outside the question's
budget, so a priced judge makes dollars unbounded. Free models (offline) cost nothing.

The one overshoot the governor allows (a provider counting more prompt tokens than tiktoken,
on the calls in flight) is not in these figures; the dry run says so.
"""

from typing import Any

from rlm_docs.governor import Budget
from rlm_docs.models.prices import FREE, Price, load_prices
from rlm_docs.models.spec import parse_spec
from rlm_docs.systems.declaration import Bound
from rlm_docs.systems.registry import declaration

__all__ = ["Bound", "calls_per_question", "dollars_per_question", "model_price"]


def model_price(spec: str) -> Price | None:
    """The price table's price of a model string (offline free; None when not listed)."""
    parsed = parse_spec(spec)
    if parsed.backend == "offline":
        return FREE
    return load_prices().lookup(parsed.model)


def calls_per_question(system: str, budget: Budget, options: dict[str, Any], judged: bool) -> Bound:
    """The most model calls one question of `system` can make under `budget`: the bound its
    declaration gives (`rlm_docs.systems.declaration`), plus the judge's call."""
    decl = declaration(system)
    return decl.calls(budget, decl.typed(options)) + Bound(int(judged))


def dollars_per_question(budget: Budget, models: list[str], judge: str | None) -> Bound:
    """The most dollars one question can cost with these models (root, sub-model) and judge."""
    prices: list[Price] = []
    for spec in models:
        price = model_price(spec)
        if price is None:
            return Bound(None, f"no price for {spec} in the price table (RLM_DOCS_PRICES)")
        prices.append(price)
    judge_cost = Bound(0)
    if judge is not None:
        price = model_price(judge)
        if price is None or price.input or price.output:
            judge_cost = Bound(None, "the judge's calls are outside the question budget")
    if all(p.input == 0 and p.output == 0 for p in prices):
        return Bound(0) + judge_cost
    limits = [] if budget.max_cost_usd is None else [budget.max_cost_usd]
    if budget.max_input_tokens is not None and budget.max_output_tokens is not None:
        limits.append(
            (
                budget.max_input_tokens * max(p.input for p in prices)
                + budget.max_output_tokens * max(p.output for p in prices)
            )
            / 1e6
        )
    if not limits:
        return Bound(None, "--max-cost, or --max-input-tokens with --max-output-tokens")
    return Bound(min(limits)) + judge_cost
