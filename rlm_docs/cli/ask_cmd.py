"""`rlm-docs ask "question"`: one RLM run, printed as answer, citations and a cost line.

With no flags it answers over the bundled demo corpus with the `offline` model, so it works
without keys or network. The trajectory goes to `--log-dir` (default `RLM_DOCS_HOME/runs`).
Its budget, timeout, `--anytime` and `--memory` flags are the ones `eval` has (`cli.flags`).
"""

import argparse
import os
from typing import Any

from rlm_docs.cli.flags import (
    add_budget_args,
    add_confirm_arg,
    add_rlm_run_args,
    add_timeout_arg,
    apply_timeout,
    budget_from_args,
    rlm_run_kwargs,
)
from rlm_docs.cli.retry_notices import retry_notices
from rlm_docs.engine.records import Iteration, SubCall
from rlm_docs.number_flags import plural
from rlm_docs.resources import home_dir
from rlm_docs.terminal_text import json_text


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ask",
        help="answer one question over a corpus with a recursive language model",
        description=(
            "Answer a question with cited pages. Defaults: the bundled demo corpus and the "
            "offline model (no key needed)."
        ),
    )
    p.add_argument("question", help="the question to answer")
    p.add_argument(
        "--corpus", metavar="STORE", help="corpus store, or `demo` (default: the demo corpus)"
    )
    p.add_argument(
        "--model", help="root model, e.g. openai:gpt-5-mini (default: RLM_DOCS_MODEL or offline)"
    )
    p.add_argument(
        "--sub-model", help="model for llm_query (default: RLM_DOCS_SUB_MODEL or the root model)"
    )
    p.add_argument(
        "--prompt",
        choices=("docs", "madqa"),
        default="docs",
        help="root prompt: docs (default: corpus helpers, answer dict, cite) or madqa (MADQA's "
        "prompt, only `context` and sub-calls); `eval` has the same default",
    )
    p.add_argument(
        "--log-dir",
        metavar="DIR",
        help="where the trajectory JSONL goes (default: RLM_DOCS_HOME/runs, which keeps the "
        "newest 100)",
    )
    p.add_argument("--json", action="store_true", help="print the prediction as JSON")
    p.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="show each turn on stderr as it ends: its full code, REPL output and each "
        "sub-call's prompt and reply (clipped)",
    )
    add_confirm_arg(p)
    add_timeout_arg(p)
    add_budget_args(p)
    add_rlm_run_args(p)
    p.set_defaults(func=run, needs_home=True)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.engine import RLM
    from rlm_docs.engine.trajectory import prune_trajectories
    from rlm_docs.ingest.demo import resolve_store
    from rlm_docs.output_paths import check_output_dir
    from rlm_docs.repl import context_cache

    # One question: a start-up cache of a large store's context would only serve later
    # processes, at hundreds of megabytes; RLM_DOCS_CONTEXT_CACHE=on keeps it.
    os.environ.setdefault(context_cache.ENV, "off")
    log_dir = check_output_dir(args.log_dir or home_dir() / "runs", "--log-dir")
    apply_timeout(args)
    budget = budget_from_args(args)
    rlm = RLM(
        resolve_store(args.corpus),
        model=args.model,
        sub_model=args.sub_model,
        budget=budget,
        prompt=args.prompt,
        log_dir=log_dir,
        on_turn=print_turn if args.verbose else None,
        confirm_final=not args.no_confirm_final,
        **rlm_run_kwargs(args),
    )
    with retry_notices("ask", args.verbose):
        pred = rlm.ask(args.question)
    if args.log_dir is None:
        prune_trajectories(log_dir)
    if args.json:
        print(json_text(pred.to_madqa(), indent=2))
    else:
        _print(pred)
    if pred.stop_reason == "error":
        return 1
    return 2 if pred.stop_reason == "budget" and pred.error else 0  # refused: a budget too small


SHOW_LINES = 12
CALL_LINES = 3
CALL_CHARS = 300


def _clip(text: str, lines: int = SHOW_LINES, chars: int | None = None) -> str:
    """`text` cut to `lines` lines (and `chars` characters), saying how much was left out."""
    rows = text.rstrip("\n").splitlines()
    shown = "\n".join(rows[:lines])
    notes = [f"{len(rows) - lines} more lines"] if len(rows) > lines else []
    if chars is not None and len(shown) > chars:
        notes.insert(0, f"{len(shown) - chars:,} more characters")
        shown = shown[:chars]
    return shown + (f" ... [{', '.join(notes)}]" if notes else "")


def _sub_call_lines(call: SubCall) -> list[str]:
    """A sub-call as two short lines: its prompt and its reply (or error), both clipped."""
    reply = call.error or call.response or ""
    prompt = _clip(call.prompt, CALL_LINES, CALL_CHARS)
    answer = _clip(str(reply), CALL_LINES, CALL_CHARS)
    return [
        f"  ↳ {call.kind}: " + prompt.replace("\n", "\n      "),
        "    → " + answer.replace("\n", "\n      "),
    ]


def print_turn(depth: int, record: Iteration) -> None:
    """One finished turn on stderr: header, each code block in full, its output (clipped), and
    each sub-call's prompt and reply (clipped); child runs print their own turns."""
    from rich.markup import escape

    from rlm_docs.terminal_text import console

    err = console(stderr=True)
    where = f" (child run, depth {depth})" if depth else ""
    forced = ", forced final turn" if record.forced else ""
    seconds = record.iteration_time or 0.0
    err.print(f"[bold cyan]── turn {record.iteration}{where}{forced}: {seconds:.1f}s[/]")
    for block in record.code_blocks:
        result = block.result
        err.print(f"[dim]{escape(block.code.rstrip())}[/dim]")
        if result.stdout:
            err.print(escape(_clip(result.stdout)))
        if result.stderr:
            err.print(f"[red]{escape(_clip(result.stderr, 4))}[/red]")
        calls = result.sub_calls
        if calls:
            err.print(f"[dim]{len(calls)} sub-call(s):[/dim]")
        for call in calls:
            prompt, reply = _sub_call_lines(call)
            err.print(f"[magenta]{escape(prompt)}[/magenta]")
            err.print(escape(reply))
    if record.final_answer is not None:
        err.print(f"[green]final: {escape(_clip(str(record.final_answer), 4))}[/green]")
    if record.notice:
        err.print(f"[yellow]{escape(record.notice)}[/yellow]")


def _print(pred: Any) -> None:
    from rich.markup import escape

    from rlm_docs.governor import axes
    from rlm_docs.terminal_text import console

    out = console()
    answers = "; ".join(pred.answer) if pred.answer else "(no answer)"
    out.print(f"[bold]Answer:[/bold] {escape(answers)}")
    cites = ", ".join(f"{c['file']} p.{c['page']}" for c in pred.citations) or "(none)"
    out.print(f"[bold]Citations:[/bold] {escape(cites)}")
    if pred.explanation:
        out.print(f"[bold]Explanation:[/bold] {escape(pred.explanation)}")
    if pred.caveat:
        out.print(f"[bold]Caveat:[/bold] {escape(pred.caveat)}")
    effort = pred.effort()
    shown = [a.brief(effort[a.name]) for a in axes.axes() if a.recorded]
    out.print(f"[dim]{', '.join(shown)}, stop: {pred.stop_reason}[/dim]")
    for checkpoint in pred.anytime:  # --anytime: the answer asked for at each share
        shares = ", ".join(f"{share:.0%}" for share in checkpoint["shares"])
        said = "; ".join(checkpoint["answer"]) if checkpoint["answer"] else "(no answer)"
        out.print(f"[dim]at {shares} of the budget: {escape(said)}[/dim]")
    memory = pred.info.get("memory")
    if memory:  # --memory: what this question took from earlier ones
        out.print(
            f"[dim]memory: question {memory['sequence']} of this corpus, "
            f"{plural(memory['reused_sub_calls'], 'sub-call')} reused, "
            f"{plural(memory['notes_before'], 'note')} from earlier questions[/dim]"
        )
    if pred.error:
        console(stderr=True).print(f"[red]error:[/red] {escape(pred.error)}")
    if pred.trajectory:
        out.print(f"[dim]trajectory: {escape(pred.trajectory)}[/dim]")
