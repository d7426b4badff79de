"""`rlm-docs proxy --upstream MODEL`: meter any agent's model calls (see docs/proxy.md).

An OpenAI-compatible chat endpoint on 127.0.0.1 that relays each request to the upstream model
through rlm-docs' governor and ledger, one budget per question. Prints `listening on
http://127.0.0.1:PORT` on stderr once bound; on SIGTERM / Ctrl-C it stops and, with `--out DIR`,
writes `DIR/ledger.jsonl` (every call) and `DIR/effort.jsonl` (each question's effort fields).
"""

import argparse
import json
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from rlm_docs.atomic import atomic_write_text
from rlm_docs.cli.flags import add_budget_args, add_timeout_arg, apply_timeout, budget_from_args
from rlm_docs.number_flags import tcp_port

if TYPE_CHECKING:
    from rlm_docs.proxy import MeteringProxy


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "proxy",
        help="meter an outside agent: an OpenAI-compatible endpoint in front of a model, "
        "with rlm-docs' budgets and ledger",
        description=(
            "POST /v1/chat/completions (also /q/QUESTION/v1/... and /q/QUESTION/ROLE/v1/..., or "
            "the headers X-RLM-Docs-Question / X-RLM-Docs-Role) relays to the upstream model "
            "within the per-question budget; GET /effort lists each question's effort."
        ),
    )
    p.add_argument(
        "--upstream",
        action="append",
        required=True,
        metavar="MODEL",
        help="upstream model string (repeatable; requests pick one by model name, the first is "
        "the default)",
    )
    p.add_argument("--port", type=tcp_port, default=8100, help="port (default 8100; 0: any free)")
    p.add_argument("--out", metavar="DIR", help="write ledger.jsonl and effort.jsonl here on exit")
    p.add_argument(
        "--no-cache", action="store_true", help="do not use the response cache for upstream calls"
    )
    add_timeout_arg(p)
    add_budget_args(p)
    p.set_defaults(func=run)


def write_outputs(proxy: "MeteringProxy", out: Path) -> None:
    """The ledger and one effort record per question (`{"id", steps, sub_calls, ...}`)."""
    out.mkdir(parents=True, exist_ok=True)
    proxy.ledger.to_jsonl(out / "ledger.jsonl")
    rows = [{"id": q} | proxy.effort(q) for q in proxy.meter.questions()]
    atomic_write_text(out / "effort.jsonl", "".join(json.dumps(r) + "\n" for r in rows))


def run(args: argparse.Namespace) -> int:
    from rlm_docs.proxy import MeteringProxy

    apply_timeout(args)
    proxy = MeteringProxy(
        args.upstream, budget=budget_from_args(args), port=args.port, cache=not args.no_cache
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with proxy:
        print(
            f"rlm-docs proxy: listening on http://127.0.0.1:{proxy.port} "
            f"(upstream {', '.join(args.upstream)})",
            file=sys.stderr,
            flush=True,
        )
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    if args.out:
        write_outputs(proxy, Path(args.out))
    return 0
