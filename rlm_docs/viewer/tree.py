"""The sub-call tree of one question, as the viewer draws it: root turns, then their code cells,
then the cells' `llm_query_batched` batches, single `llm_query` calls and child RLM runs (whose
own turns nest below them).

Every node carries `chars`, `tokens` and `cost_usd` for itself and everything below it, so a
reader sees at each level where the characters and dollars went: a turn counts its root call
(the characters of the messages added that turn, the call's input and output tokens and cost)
plus its cells; a cell, batch or child run counts the calls below it; an `llm_query` its prompt's
characters and its ledger entry's tokens and cost (the whole prompt's size when the log kept only
its head). Prompts and replies are not copied into the tree (the trajectory has them).
"""

from typing import Any

from rlm_docs.engine.records import CodeBlock, Iteration, SubCall, Trajectory


def _node(kind: str, label: str, **extra: Any) -> dict[str, Any]:
    return {"kind": kind, "label": label, "chars": 0, "tokens": 0, "cost_usd": 0.0} | extra


def _add(parent: dict[str, Any], child: dict[str, Any]) -> None:
    parent.setdefault("children", []).append(child)
    for key in ("chars", "tokens", "cost_usd"):
        parent[key] += child[key]


def _call(call: SubCall) -> dict[str, Any]:
    ledger = call.ledger or {}
    node = _node("call", call.kind, error=bool(call.error))
    node["chars"] = call.prompt_chars if call.prompt_chars is not None else len(call.prompt)
    node["tokens"] = int(ledger.get("input_tokens") or 0) + int(ledger.get("output_tokens") or 0)
    node["cost_usd"] = float(call.cost_usd or ledger.get("cost_usd") or 0.0)
    return node


def _child(call: SubCall, child: Trajectory) -> dict[str, Any]:
    node = _node("child", "rlm_query: child run", question=call.prompt[:200])
    node["chars"] = len(call.prompt)
    for it in child.iterations:
        _add(node, _turn(it))
    return node


def _cell(number: int, block: CodeBlock) -> dict[str, Any]:
    result = block.result
    node = _node(
        "cell",
        f"cell {number}",
        error=bool(result.stderr),
        restarted=result.restarted,
        omitted=result.sub_calls_omitted,
    )
    sizes = {
        pair[0]: pair[1]
        for pair in result.batches or []
        if isinstance(pair, list) and len(pair) == 2
    }
    batches: dict[int, dict[str, Any]] = {}
    for call in result.sub_calls:
        if call.kind == "rlm_query" and call.child is not None:
            _add(node, _child(call, call.child))
        elif call.batch is not None:
            if call.batch not in batches:
                size = sizes.get(call.batch)
                batches[call.batch] = _node(
                    "batch", f"llm_query_batched #{call.batch}", size=size, number=call.batch
                )
                _add(node, batches[call.batch])
            batch = batches[call.batch]
            leaf = _call(call)
            _add(batch, leaf)
            node.update({k: node[k] + leaf[k] for k in ("chars", "tokens", "cost_usd")})
        else:
            _add(node, _call(call))
    for batch in batches.values():
        batch["size"] = batch["size"] or len(batch["children"])
    return node


def _turn(it: Iteration) -> dict[str, Any]:
    node = _node("turn", f"turn {it.iteration}", forced=it.forced)
    node["chars"] = sum(len(str(m.get("content") or "")) for m in it.prompt if isinstance(m, dict))
    if it.usage is not None:
        node["tokens"] = it.usage.input_tokens + it.usage.output_tokens
        node["cost_usd"] = float(it.usage.cost_usd or 0.0)
    for i, block in enumerate(it.code_blocks, 1):
        _add(node, _cell(i, block))
    return node


def sub_call_tree(traj: Trajectory) -> dict[str, Any]:
    """The tree of `traj` (see the module docstring): a `run` node whose children are turns."""
    root = _node("run", "root run")
    for it in traj.iterations:
        _add(root, _turn(it))
    return root
