"""`rlm-docs mcp --corpus STORE`: the corpus as an MCP server for agents (Claude Desktop, IDE
agents, any MCP client): the corpus tools, `ask` (a full RLM run) and documents as resources.

Needs the `mcp` extra. `--transport stdio` (default) is what an agent launches as a
subprocess; `--transport http` serves streamable HTTP at `http://HOST:PORT/mcp`. The budget
flags bound every `ask` run (a call may only lower them).
"""

import argparse
import logging
import sys

from rlm_docs.cli.flags import add_budget_args, budget_from_args
from rlm_docs.cli.serve_cmd import (
    add_connection_args,
    api_key_from_env,
    check_prices,
    served_models,
    server_config,
)
from rlm_docs.errors import ConfigError
from rlm_docs.number_flags import positive_int, tcp_port


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "mcp",
        help="serve a corpus over MCP (tools search/grep/page/.../ask, documents as resources)",
        description=(
            "An MCP server over STORE: tools search, grep, page, pages, toc, read_section, files "
            "and ask (a full RLM run within the budget flags); documents as resources."
        ),
    )
    p.add_argument(
        "--corpus", required=True, metavar="STORE", help="corpus store directory, or 'demo'"
    )
    p.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="(stdio)")
    p.add_argument("--host", default="127.0.0.1", help="http: address to bind (127.0.0.1)")
    p.add_argument(
        "--port", type=tcp_port, default=8001, help="http: port (default 8001; 0: any free)"
    )
    p.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="http: require 'Authorization: Bearer <value of env var NAME>' on every request",
    )
    p.add_argument("--model", help="root model of ask (default: RLM_DOCS_MODEL or offline)")
    p.add_argument("--sub-model", help="sub-model of ask (default: the root model)")
    p.add_argument("--prompt", choices=("docs", "madqa"), default="docs", help="root prompt")
    p.add_argument(
        "--max-runs", type=positive_int, default=1, help="concurrent ask runs (default 1)"
    )
    p.add_argument(
        "--max-question-chars",
        type=positive_int,
        default=20_000,
        help="ask: question length limit (20,000)",
    )
    p.add_argument("--log-dir", metavar="DIR", help="write each ask run's trajectory here")
    add_connection_args(p)
    add_budget_args(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from rlm_docs.mcp_server import build_server
    except ImportError as exc:
        raise ConfigError(
            f"mcp needs the 'mcp' extra ({exc.name} is missing): pip install 'rlm-docs[mcp]'"
        ) from None
    from rlm_docs.corpus import Corpus
    from rlm_docs.ingest.demo import resolve_store

    corpus = Corpus.load(resolve_store(args.corpus))
    if args.api_key_env and args.transport != "http":
        raise ConfigError("--api-key-env applies to --transport http (stdio is the agent's pipe)")
    api_key = api_key_from_env(args.api_key_env)
    root, sub, models = served_models(args)
    budget = budget_from_args(args)
    check_prices(budget, models)
    server = build_server(
        corpus,
        model=models[root],
        sub_model=models[sub],
        budget=budget,
        max_question_chars=args.max_question_chars,
        prompt=args.prompt,
        log_dir=args.log_dir,
        max_runs=args.max_runs,
    )
    # stdout is the protocol channel on stdio: logs go to stderr only.
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.transport == "stdio":
        server.run("stdio")
        return 0
    import uvicorn

    from rlm_docs.cli.serve_cmd import bind_socket
    from rlm_docs.serve.auth import BearerAuth

    sock = bind_socket(args.host, args.port)
    host, port = sock.getsockname()[:2]
    mcp_app = server.streamable_http_app(host=args.host)
    app = mcp_app if api_key is None else BearerAuth(mcp_app, api_key)
    print(f"rlm-docs mcp: streamable HTTP on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(server_config(app, args, log_level="warning")).run(sockets=[sock])
    return 0
