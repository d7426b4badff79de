"""`rlm-docs eval`: run one system over a MADQA-schema question set, resumably.

Writes RUN_DIR (see `rlm_docs.eval.rundir`) and prints a one-line summary; `--resume` continues
an interrupted run with the same settings, `--resume --retry-failed` also runs the questions
that failed again. Exit codes: 0 every question was answered (right or wrong), 2 a user error
(nothing run), 3 the run finished but some questions failed (listed by cause on stderr; their
rows count as wrong), 130 interrupted (resumable).
"""

import argparse
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_docs.cli.flags import (
    add_budget_args,
    add_confirm_arg,
    add_timeout_arg,
    apply_timeout,
    budget_from_args,
)
from rlm_docs.cli.interrupt import Interrupted
from rlm_docs.cli.system_options import add_option_flags, options_from_args
from rlm_docs.number_flags import fraction, positive_int, step_limits
from rlm_docs.systems.registry import declarations

if TYPE_CHECKING:
    from rlm_docs.eval.runner import EvalSettings

# The run finished, but some questions failed (a model outage, a broken store): not a user
# error (2), not a clean run (0), so scripts and sweeps can tell and retry.
FAILED_QUESTIONS = 3


def register(subparsers: argparse._SubParsersAction) -> None:
    systems = [d.name for d in declarations()]
    p = subparsers.add_parser(
        "eval",
        help="evaluate a system (" + ", ".join(systems) + ") on a question set",
        description=(
            "Answer every question of QUESTIONS.jsonl with one system, score it (numeric stage, "
            "ANLS*, optional LLM judge, page/doc F1, error type) and append results to RUN_DIR "
            "as they finish."
        ),
    )
    p.add_argument("--dataset", required=True, metavar="QUESTIONS.jsonl", help="MADQA-schema file")
    p.add_argument(
        "--corpus", required=True, metavar="STORE", help="corpus store directory, or `demo`"
    )
    p.add_argument(
        "--system",
        required=True,
        choices=systems,
        help="system to evaluate (see docs/systems.md)",
    )
    p.add_argument("--model", required=True, help="root model, e.g. offline, openai:gpt-5-mini")
    p.add_argument(
        "--sub-model", help="sub-model of the rlm and rlms systems (default: the root model)"
    )
    p.add_argument(
        "--judge",
        metavar="MODEL",
        help="LLM judge model (default: numeric, exact and ANLS* stages; questions with prose "
        "golds are then left undecided: score them later with `rlm-docs rescore --judge`)",
    )
    p.add_argument("--out", required=True, metavar="RUN_DIR", help="run directory")
    p.add_argument(
        "--workers",
        type=positive_int,
        default=4,
        help="questions in parallel (default 4); with --executor ray, on each Ray node",
    )
    p.add_argument(
        "--executor",
        choices=("thread", "ray"),
        default="thread",
        help="where questions run: threads of this process (default) or a Ray cluster, one "
        'actor per node (needs the ray extra: pip install -e ".[ray]")',
    )
    p.add_argument(
        "--ray-address",
        metavar="auto|HOST:PORT",
        help="the Ray cluster to join (auto: the one started on this machine with `ray start`; "
        "default: a new local Ray)",
    )
    p.add_argument(
        "--ray-ship-corpus",
        action="store_true",
        help="send the corpus store to every Ray node through Ray's object store (default: "
        "every node reads it at the same path)",
    )
    p.add_argument("--limit", type=positive_int, help="only the first N questions")
    p.add_argument(
        "--where",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="only questions whose FIELD equals VALUE (repeatable, all must hold), e.g. "
        "text_answerable=true, question_type=cross-page",
    )
    p.add_argument("--resume", action="store_true", help="continue the run in RUN_DIR")
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="with --resume: run the questions that failed (status failed) again, replacing "
        "their rows",
    )
    p.add_argument(
        "--judge-sensitivity", type=fraction, default=0.98, help="for Rogan-Gladen (default 0.98)"
    )
    p.add_argument(
        "--judge-specificity", type=fraction, default=1.0, help="for Rogan-Gladen (default 1.0)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument(
        "--otel",
        action="store_true",
        help="send each question's spans (question, turns, cells, model calls) over OTLP/HTTP "
        "to OTEL_EXPORTER_OTLP_ENDPOINT (default http://localhost:4318); also on when that "
        "variable is set (extra `otel`)",
    )
    add_confirm_arg(p)
    add_option_flags(p)
    add_timeout_arg(p)
    add_budget_args(
        p,
        steps=(
            step_limits,
            "root turns (default 20); a comma list (1,2,4,8,16) runs the exact accuracy-vs-step-"
            "limit curve: one run per limit in RUN_DIR/steps-N, shared prefixes from the cache",
        ),
    )
    p.set_defaults(func=run, needs_home=True)


def _is_human(spec: str | None) -> bool:
    """`human` / `human:NAME`: a person types the replies (see `rlm_docs.models.human`)."""
    from rlm_docs.models import parse_spec

    return spec is not None and parse_spec(spec).backend == "human"


def _resume_hint(args: argparse.Namespace, *flags: str) -> str:
    """The command that continues this run (the user's own argv, plus --resume and `flags`)."""
    argv = list(getattr(args, "argv", None) or [])
    for flag in ("--resume", *flags):
        if flag not in argv:
            argv.append(flag)
    return "rlm-docs " + shlex.join(argv)


def run(args: argparse.Namespace) -> int:
    from rlm_docs.output_paths import check_output_dir

    check_output_dir(args.out, "--out")
    apply_timeout(args)
    limits = args.max_steps or []
    settings = settings_from_args(args)
    try:
        if len(limits) > 1:
            return _step_limits(settings, limits, args)
        s = traced(settings, args.otel)
    except KeyboardInterrupt:
        done = _finished(Path(args.out))
        raise Interrupted(
            f"{done} finished question(s) are kept in {args.out}; continue with:\n"
            f"  {_resume_hint(args)}"
        ) from None
    print_summary(args, s)
    return failed_exit([s], args)


def settings_from_args(args: argparse.Namespace) -> "EvalSettings":
    """The run's settings from eval's parsed flags (ConfigError for flags refused together);
    a `--max-steps` list leaves its longest limit as the budget shown."""
    from rlm_docs.errors import ConfigError
    from rlm_docs.eval.runner import EvalSettings
    from rlm_docs.ingest.demo import resolve_store

    if args.retry_failed and not args.resume:
        raise ConfigError("--retry-failed continues a run: add --resume")
    limits = args.max_steps or []
    args.max_steps = limits[-1] if limits else None  # the longest limit is the budget shown
    if getattr(args, "memory", None) and args.executor == "ray":  # a file cannot span nodes
        raise ConfigError("--memory needs --executor thread: Ray nodes cannot share its file")
    person = _is_human(args.model) or _is_human(args.sub_model)
    if person and args.executor != "thread":
        raise ConfigError("a human model answers at this terminal: use --executor thread")
    return EvalSettings(
        dataset=Path(args.dataset),
        corpus=resolve_store(args.corpus),
        system=args.system,
        model=args.model,
        out=Path(args.out),
        sub_model=args.sub_model,
        judge=args.judge,
        budget=budget_from_args(args),
        options=options_from_args(args),
        limit=args.limit,
        where=args.where,
        workers=1 if person else args.workers,  # one person answers one question at a time
        executor=args.executor,
        ray_address=args.ray_address,
        ship_corpus=args.ray_ship_corpus,
        resume=args.resume,
        retry_failed=args.retry_failed,
        progress=not (args.no_progress or person),  # a redrawn bar would cover the prompts
        sensitivity=args.judge_sensitivity,
        specificity=args.judge_specificity,
    )


def print_summary(args: argparse.Namespace, s: dict) -> None:
    """The run's one-line summary (and its coverage and memory lines) on stdout."""
    from rlm_docs.eval.aggregate import citation_f1_text, decided_text, headline_accuracy

    acc, how = headline_accuracy(s)
    decided = decided_text(s, shlex.quote(str(args.out)))
    print(
        f"{args.system}: {s['n']} questions ({s['ran_now']} run now), accuracy "
        f"{_pct(acc['value'])} [{_pct(acc['low'])}, {_pct(acc['high'])}] ({how})"
        f"{'; ' + decided if decided else ''}, ANLS* accuracy {_pct(s['anls_accuracy']['value'])}, "
        f"{citation_f1_text(s)}, ${s['total_cost_usd']:.4f}, "
        f"failed {s['status']['failed']}, missing {s['status']['missing']} -> {args.out}"
    )
    if s["coverage"]:
        print(s["coverage"])
    if s.get("memory"):
        from rlm_docs.eval.memory_cost import memory_sentence

        print(memory_sentence(s["memory"]))


def failed_exit(summaries: list[dict], args: argparse.Namespace) -> int:
    """FAILED_QUESTIONS after saying on stderr what failed and how to retry; else 0."""
    import sys

    from rlm_docs.eval.failures import failures_line
    from rlm_docs.terminal_text import sanitize

    causes: dict[str, int] = {}
    for s in summaries:
        for text, n in s["failures"]:
            causes[text] = causes.get(text, 0) + n
    if not causes:
        return 0
    line = failures_line(sorted(causes.items(), key=lambda item: -item[1]))
    hint = _resume_hint(args, "--retry-failed")
    print(sanitize(f"{line}\nrun them again with:\n  {hint}"), file=sys.stderr)
    return FAILED_QUESTIONS


def traced(settings: "EvalSettings", otel: bool) -> dict:
    """`run_eval`, with each finished question sent as spans when tracing is on (`--otel`
    or OTEL_EXPORTER_OTLP_ENDPOINT; `rlm_docs.tracing`)."""
    from rlm_docs.eval.runner import run_eval
    from rlm_docs.tracing import open_tracing

    tracer = open_tracing(otel)
    try:
        return run_eval(settings, on_record=tracer)
    finally:
        if tracer is not None:
            tracer.close()


def _pct(x: float) -> str:
    """A share as a percentage; n/a when nothing was decided (every question needs a judge)."""
    return "n/a" if x != x else f"{x:.1%}"


def _finished(out: Path) -> int:
    """Questions recorded in RUN_DIR, or in every limit's run of a step-limit RUN_DIR."""
    from rlm_docs.eval.rundir import EvalRunDir
    from rlm_docs.eval.step_limits import is_sweep

    dirs = sorted(out.glob("steps-*")) if is_sweep(out) else [out]
    return sum(len(EvalRunDir(d).read_results()) for d in dirs)


def _step_limits(settings: "EvalSettings", limits: list[int], args: argparse.Namespace) -> int:
    """Run every limit and print one line per limit plus the extra calls and dollars the
    shorter limits took beyond the longest one."""
    from rlm_docs.eval.step_limits import run_step_limits
    from rlm_docs.models.cache import default_cache

    if default_cache() is None:
        print("warning: RLM_DOCS_CACHE=off: no prefix is shared, every limit pays in full")
    results = run_step_limits(settings, limits)
    for r in results:
        s = r["summary"]
        acc = s["accuracy"]
        print(
            f"steps <= {r['limit']}: {s['n']} questions ({s['ran_now']} run now), accuracy "
            f"{acc['value']:.1%} [{acc['low']:.1%}, {acc['high']:.1%}], {r['new_calls']} new "
            f"calls in all (${r['new_cost_usd']:.4f}), {r['replayed_calls']} replayed from the "
            f"cache -> {r['out']}"
        )
    out = args.out
    top, rest = results[0], results[1:]
    extra = sum(r["new_calls"] for r in rest)
    dollars = sum(r["new_cost_usd"] for r in rest)
    print(
        f"exact step-limit curve ({settings.system}, {len(results)} limits): "
        f"{top['new_calls']} new calls for the longest limit, {extra} extra calls "
        f"(${dollars:.4f}) for the shorter ones -> {out}"
    )
    return failed_exit([r["summary"] for r in results], args)
