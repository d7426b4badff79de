"""`rlm-docs mcp`: a corpus as an MCP server (official `mcp` SDK, 2.x `MCPServer`).

Tools: the sandbox's corpus helpers `search grep page pages toc read_section files`, built by
`rlm_docs.repl.helpers.make_helpers` on the host (so an agent gets exactly the tools, signatures and
return shapes model code gets in the REPL; `host=True`: grep in linear time, results capped), and `ask`: a full RLM run with the server's models
and budget (a call may lower the budget, never raise it), reporting each finished turn as an
MCP progress notification. Documents are resources,
`rlm-docs://documents/{name}` (marked text of the whole document) and
`rlm-docs://documents/{name}/pages/{n}` (one page). Errors (unknown document, page out of
range) come back as tool errors naming the document or page.
"""

import asyncio
import functools
from collections.abc import Callable
from dataclasses import asdict
from typing import Any
from urllib.parse import quote, unquote

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.server.mcpserver.resources import FunctionResource

from rlm_docs.corpus import Corpus
from rlm_docs.corpus.render import render_documents
from rlm_docs.engine.records import Iteration
from rlm_docs.errors import RlmDocsError
from rlm_docs.governor import Budget
from rlm_docs.models import Client
from rlm_docs.repl.helpers import (
    HOST_MAX_CONTEXT,
    HOST_MAX_HITS,
    HOST_MAX_RESULT_CHARS,
    make_helpers,
)
from rlm_docs.serve import wire
from rlm_docs.serve.caller_input import BadField, request_budget, unpriced
from rlm_docs.serve.served_runs import ServedRunPool, ServedRunRequest

TOOLS = ("search", "grep", "page", "pages", "toc", "read_section", "files")
# What differs from the sandbox's helpers on this server (`make_helpers(host=True)`).
HOST_NOTES = {
    "grep": (
        f"\nOn this server: RE2 syntax (no lookaround, no backreferences; \\w \\d \\b are "
        f"ASCII), at most {HOST_MAX_HITS} hits and {HOST_MAX_CONTEXT} context lines."
    ),
    "search": f"\nOn this server: at most {HOST_MAX_HITS} hits.",
}
RESULT_NOTE = f"\nResults over {HOST_MAX_RESULT_CHARS:,} characters are refused."
URI = "rlm-docs://documents/"


def _user_errors(fn: Callable[..., Any], kind: type[Exception] = ToolError) -> Callable[..., Any]:
    """Turn a caller's mistake (unknown document, page out of range, wrong type) into an
    MCP tool/resource error with its message; the SDK would hide it as an unexpected crash."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (RlmDocsError, TypeError, ValueError) as exc:
            raise kind(str(exc)) from None

    return wrapper


def document_text(corpus: Corpus, name: str) -> str:
    """One document in the marked form the root model sees (`[FILE: ...] [PAGE n] ...`);
    ResourceError past HOST_MAX_RESULT_CHARS (read such a document by pages)."""
    n = corpus.num_pages(name)
    text = render_documents([name], [n], corpus.pages(name, 1, n))
    if len(text) > HOST_MAX_RESULT_CHARS:
        raise ResourceError(
            f"{name}: {len(text):,} characters, over this server's limit of "
            f"{HOST_MAX_RESULT_CHARS:,}; read it by pages ({URI}{quote(name, safe='')}/pages/N)"
        )
    return text


def build_server(
    corpus: Corpus,
    *,
    model: Client,
    sub_model: Client,
    budget: Budget,
    prompt: str = "docs",
    log_dir: Any = None,
    max_runs: int = 1,
    max_question_chars: int = 20_000,
) -> MCPServer:
    """The MCP server over `corpus` (see module docstring)."""
    server = MCPServer(
        "rlm-docs",
        instructions=(
            f"Document corpus of {len(corpus)} documents ({corpus.total_pages} pages). Use "
            "files() to list them, search()/grep() to find pages, page()/pages()/toc()/"
            "read_section() to read, or ask() for a full cited answer by a recursive LM."
        ),
    )
    helpers = make_helpers(corpus, host=True)
    for name in TOOLS:
        tool = _user_errors(helpers[name])
        description = (helpers[name].__doc__ or "") + HOST_NOTES.get(name, "")
        server.add_tool(tool, name=name, description=description + RESULT_NOTE)
    runner = ServedRunPool(corpus, max_runs=max_runs, prompt=prompt, log_dir=log_dir)

    async def ask(
        question: str,
        ctx: Context,
        max_steps: int | None = None,
        max_sub_calls: int | None = None,
        max_cost_usd: float | None = None,
        max_wall_s: float | None = None,
    ) -> dict[str, Any]:
        """Answer `question` with a full RLM run over the corpus: the answer (`answer` = the
        values, `explanation`, `caveat`), page citations,
        effort (steps, sub-calls, tokens, cost). Budget arguments can only lower the server's.
        Each finished turn is reported as a progress notification."""
        loop = asyncio.get_running_loop()

        def on_turn(depth: int, record: Iteration) -> None:  # in the run's thread
            p = wire.progress(depth, record)
            note = ctx.report_progress(p["turn"], None, wire.progress_line(p).strip())
            asyncio.run_coroutine_threadsafe(note, loop)

        given = {
            "max_steps": max_steps,
            "max_sub_calls": max_sub_calls,
            "max_cost_usd": max_cost_usd,
            "max_wall_s": max_wall_s,
        }
        if not isinstance(question, str) or not question.strip():
            raise ToolError("question: expected a non-empty string")
        if len(question) > max_question_chars:
            raise ToolError(
                f"question: {len(question):,} characters, over this server's limit of "
                f"{max_question_chars:,}"
            )
        try:
            limits = {k: v for k, v in given.items() if v is not None}
            run_budget = request_budget(budget, limits, prefix="ask")
        except BadField as exc:
            raise ToolError(str(exc).removeprefix("ask.")) from None
        model_name = unpriced(run_budget, [model, sub_model])
        if model_name is not None:
            raise ToolError(
                f"max_cost_usd: no price is known for model {model_name}, so a dollar limit "
                "cannot be enforced"
            )
        run = runner.try_start(ServedRunRequest(question, model, sub_model, run_budget, on_turn))
        if run is None:
            raise RuntimeError(
                f"{max_runs} ask run(s) already in flight; retry in {runner.retry_after()}s"
            )
        try:
            pred = await asyncio.wrap_future(run.future)
        except asyncio.CancelledError:
            run.stop("MCP request cancelled")
            raise
        return {"text": wire.answer_text(pred)} | wire.structured(
            pred, {"budget": asdict(run_budget)}
        )

    server.add_tool(ask, name="ask")

    for info in corpus.documents:
        uri = URI + quote(info.name, safe="")
        server.add_resource(
            FunctionResource.from_function(
                lambda name=info.name: document_text(corpus, name),
                uri=uri,
                name=info.name,
                description=f"{info.name}: {info.num_pages} pages, {info.tokens:,} tokens",
                mime_type="text/plain",
            )
        )

    def one_page(name: str, n: str) -> str:
        """One page of a document (1-based)."""
        return corpus.page(unquote(name), int(n))

    template = _user_errors(one_page, ResourceError)
    server.resource(URI + "{name}/pages/{n}", name="page", mime_type="text/plain")(template)
    return server
