"""`rlm-docs serve --corpus STORE`: the corpus as an OpenAI-compatible chat API (model
"rlm-docs"), so chat UIs, SDKs and agent frameworks can ask it questions.

Needs the `serve` extra (FastAPI, uvicorn). The budget flags set each run's default and the
maximum a request may ask for; `--model` / `--sub-model` (plus `--allow-model`) are the only
models a request can use. Prints `listening on http://HOST:PORT` on stderr once bound
(`--port 0` picks a free port). SIGTERM / Ctrl-C: stop accepting, let runs in flight finish for
`--shutdown-grace` seconds, then cancel them (each logged).
"""

import argparse
import logging
import os
import signal
import socket
import sys
from contextlib import nullcontext
from typing import Any

from rlm_docs.cli.flags import add_budget_args, budget_from_args
from rlm_docs.errors import ConfigError
from rlm_docs.number_flags import non_negative_float, positive_float, positive_int, tcp_port


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="serve a corpus as an OpenAI-compatible chat API (model 'rlm-docs')",
        description=(
            "POST /v1/chat/completions answers the last user message with a full RLM run over "
            "STORE (stream: true sends per-turn progress, then the answer); GET /v1/models."
        ),
    )
    p.add_argument(
        "--corpus", required=True, metavar="STORE", help="corpus store directory, or 'demo'"
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=tcp_port, default=8000, help="port (default 8000; 0: any free)")
    p.add_argument("--model", help="root model (default: RLM_DOCS_MODEL or offline)")
    p.add_argument("--sub-model", help="sub-model (default: RLM_DOCS_SUB_MODEL or the root model)")
    p.add_argument(
        "--allow-model",
        action="append",
        default=[],
        metavar="MODEL",
        help="another model a request may choose with rlm_docs.model / sub_model (repeatable)",
    )
    p.add_argument("--prompt", choices=("docs", "madqa"), default="docs", help="root prompt")
    p.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="require 'Authorization: Bearer <value of env var NAME>' on every request",
    )
    p.add_argument(
        "--max-runs", type=positive_int, default=4, help="concurrent runs; more get 429 (default 4)"
    )
    p.add_argument(
        "--max-body-bytes",
        type=positive_int,
        default=1_000_000,
        help="request size limit (default 1 MB)",
    )
    p.add_argument(
        "--max-question-chars",
        type=positive_int,
        default=20_000,
        help="question length limit (20,000)",
    )
    p.add_argument(
        "--shutdown-grace",
        type=non_negative_float,
        default=30.0,
        metavar="S",
        help="on SIGTERM, seconds runs in flight may take to finish before cancelling (30)",
    )
    p.add_argument("--log-dir", metavar="DIR", help="write each run's trajectory JSONL here")
    add_connection_args(p)
    add_budget_args(p)
    p.set_defaults(func=run)


def add_connection_args(p: argparse.ArgumentParser) -> None:
    """`--max-connections` and `--header-timeout` (`rlm_docs.serve.connections`)."""
    p.add_argument(
        "--max-connections",
        type=positive_int,
        metavar="N",
        help="open connections at most; past it the oldest one still sending its request head "
        "is closed (default: half the open-file limit, at most 1,000)",
    )
    p.add_argument(
        "--header-timeout",
        type=positive_float,
        default=10.0,
        metavar="S",
        help="seconds a connection has to send a request's line and headers (default 10)",
    )


def server_config(app: Any, args: argparse.Namespace, **options: Any) -> Any:
    """The uvicorn config of `app` under the connection guards the flags ask for."""
    from rlm_docs.serve.connections import Guards, connection_cap, server_config

    guards = Guards(connection_cap(args.max_connections), args.header_timeout)
    return server_config(app, guards, **options)


def served_models(
    args: argparse.Namespace, extra: list[str] | tuple[str, ...] = ()
) -> tuple[str, str, dict[str, Any]]:
    """(root, sub, {model string: client}) from `--model` / `--sub-model` (else RLM_DOCS_MODEL
    / RLM_DOCS_SUB_MODEL, else offline / the root) plus `extra`; errors name the variable a bad
    string came from. A person (`human`) cannot answer network callers, so it is refused."""
    from rlm_docs.env import blame, env_value
    from rlm_docs.models import make_client, parse_spec

    origin: dict[str, str] = {}
    root = args.model or env_value("RLM_DOCS_MODEL")
    if root and not args.model:
        origin[root] = "RLM_DOCS_MODEL"
    sub = args.sub_model or env_value("RLM_DOCS_SUB_MODEL")
    if sub and not args.sub_model:
        origin.setdefault(sub, "RLM_DOCS_SUB_MODEL")
    root = root or "offline"
    sub = sub or root
    models = {}
    for spec in dict.fromkeys([root, sub, *extra]):
        with blame(origin[spec], spec) if spec in origin else nullcontext():
            if parse_spec(spec).backend == "human":
                raise ConfigError(f"model {spec!r}: a person at a terminal cannot serve requests")
            models[spec] = make_client(spec)
    return root, sub, models


def check_prices(budget: Any, models: dict[str, Any]) -> None:
    """ConfigError when `--max-cost` is set and a served model has no known price (the
    governor could not enforce it, and every run would fail)."""
    from rlm_docs.serve.caller_input import unpriced

    model = unpriced(budget, list(models.values()))
    if model is not None:
        raise ConfigError(
            f"--max-cost: no price is known for model {model}, so a dollar limit cannot be "
            "enforced; add it to a price table (RLM_DOCS_PRICES) or drop --max-cost"
        )


def api_key_from_env(name: str | None) -> str | None:
    if name is None:
        return None
    if not name.isidentifier():
        raise ConfigError(f"--api-key-env {name!r}: expected an environment variable NAME")
    value = os.environ.get(name, "").strip()
    if not value:
        raise ConfigError(f"--api-key-env {name}: environment variable {name} is not set or empty")
    return value


def bind_socket(host: str, port: int) -> socket.socket:
    """A bound socket (port 0: any free one), so the real address can be printed before serving
    and a busy port is one clear error line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConfigError(f"--host {host!r}: cannot resolve ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ConfigError(f"--host {host} --port {port}: cannot bind ({exc.strerror})") from None
    sock.listen(2048)  # connections made once the address is printed wait for uvicorn
    return sock


def run(args: argparse.Namespace) -> int:
    try:
        import uvicorn

        from rlm_docs.serve.app import ServeConfig, make_app
    except ImportError as exc:
        raise ConfigError(
            f"serve needs the 'serve' extra ({exc.name} is missing): pip install 'rlm-docs[serve]'"
        ) from None
    from rlm_docs.corpus import Corpus
    from rlm_docs.ingest.demo import resolve_store

    corpus = Corpus.load(resolve_store(args.corpus))
    budget = budget_from_args(args)
    api_key = api_key_from_env(args.api_key_env)
    root, sub, models = served_models(args, args.allow_model)
    check_prices(budget, models)
    cfg = ServeConfig(
        corpus=corpus,
        models=models,
        model=root,
        sub_model=sub,
        budget=budget,
        api_key=api_key,
        max_runs=args.max_runs,
        max_body_bytes=args.max_body_bytes,
        max_question_chars=args.max_question_chars,
        prompt=args.prompt,
        log_dir=args.log_dir,
    )
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    sock = bind_socket(args.host, args.port)
    host, port = sock.getsockname()[:2]
    config = server_config(
        make_app(cfg),
        args,
        log_level="warning",
        timeout_graceful_shutdown=args.shutdown_grace,  # type: ignore[arg-type]  # float works
        lifespan="on",
    )
    print(
        f"rlm-docs serve: listening on http://{host}:{port} (corpus {corpus.path}, model {root}, "
        f"sub-model {sub}, {args.max_runs} concurrent runs)",
        file=sys.stderr,
        flush=True,
    )
    # uvicorn re-raises the SIGTERM it handled once it has shut down; exit 0 then, not -15.
    signal.signal(signal.SIGTERM, _exit_clean)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


def _exit_clean(signum: int, frame: object) -> None:
    raise SystemExit(0)
