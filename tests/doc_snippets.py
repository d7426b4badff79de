"""Runs the fenced code blocks of README.md and docs/**/*.md as a reader would type them.

A page's blocks run in order in one working directory (later blocks use what earlier ones
wrote), each in a fresh process: ```python through the interpreter, ```bash through `bash -e`
with `rlm-docs` (and `.venv/bin/rlm-docs`) on the path. Every other block must say what it is,
so that a snippet on a new page is run unless its page says why not:

- ```text and ```console blocks are output, never run;
- `<!-- not run: REASON -->` on the line before a block leaves it out, with the reason;
- `<!-- file: NAME -->` writes the block to NAME in the working directory (a python block is
  then run as `python NAME`, as a reader who saved it would);
- `<!-- printed by the block above -->` before a ```text block: the previous block's standard
  output must be exactly this text.

Nothing reaches the internet: `openai:` models are a loopback chat server, the Hugging Face Hub
is a local mirror, OTLP spans go to a receiver on 127.0.0.1.
"""

import os
import re
import shutil
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
RUN = ("python", "bash")
OUTPUT = ("text", "console")
_FENCE = re.compile(
    r"^(?P<indent>[ ]*)(?P<fence>```+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)(?P=fence)[ ]*$",
    re.MULTILINE | re.DOTALL,
)
_MARKER = re.compile(r"<!--\s*(not run|file|printed by the block above)\s*:?\s*(.*?)\s*-->\s*$")
_DEFAULT_REPLY = '```repl\nprint("looked")\n```\nFINAL(Not answerable)'


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and what the line before it marks."""

    page: str
    line: int
    language: str
    code: str
    marker: str = ""
    argument: str = ""

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"


@dataclass(frozen=True)
class Ran:
    block: Block
    stdout: str


def pages() -> list[str]:
    """README.md and every page of the documentation site, as paths relative to the repository."""
    found = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
    return found


def blocks(page: str) -> list[Block]:
    """The page's fenced blocks; raises ValueError naming the line of a block that is neither
    runnable, output, nor marked."""
    text = (ROOT / page).read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.search(before)
        language = m.group("info").strip().split(" ")[0]
        block = Block(
            page=page,
            line=line,
            language=language,
            code=textwrap.dedent(m.group("body")),
            marker=marker.group(1) if marker else "",
            argument=marker.group(2) if marker else "",
        )
        if block.marker == "not run" and not block.argument:
            raise ValueError(f"{block.where}: `<!-- not run: REASON -->` needs its reason")
        if block.marker == "file" and not block.argument:
            raise ValueError(f"{block.where}: `<!-- file: NAME -->` needs the file name")
        if block.marker == "printed by the block above" and language not in OUTPUT:
            raise ValueError(f"{block.where}: only a ```text block can be printed output")
        if not block.marker and language not in RUN + OUTPUT:
            raise ValueError(
                f"{block.where}: a ```{language or '(no language)'} block is neither run nor "
                "output: mark it ```text, `<!-- not run: REASON -->` or `<!-- file: NAME -->`"
            )
        found.append(block)
    return found


def runnable(page: str) -> list[Block]:
    return [b for b in blocks(page) if b.marker != "not run" and b.language in RUN]


def lay_out(work: Path, *, eval_fixture: bool = False) -> Path:
    """The working directory the snippets assume: the repository's `corpus/` (demo documents
    and questions), `filings/` (the demo documents again), `docs/sweep-example.toml`,
    `.venv/bin/` (this interpreter's
    scripts) and stores `mystore`, `mycorpus`, `store/`, `path/to/store`: the demo corpus, or
    with `eval_fixture` `mystore` and `questions.jsonl` of the eval tests' small corpus."""
    from rlm_docs.ingest.demo import demo_corpus_path
    from tests.fixtures.eval.support import QUESTIONS, build_store

    work.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "corpus", work / "corpus")
    shutil.copytree(ROOT / "corpus" / "documents", work / "filings")
    (work / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "sweep-example.toml", work / "docs")
    (work / ".venv").symlink_to(Path(sys.executable).parent.parent)
    if eval_fixture:
        build_store(work / "mystore")
        shutil.copy(QUESTIONS, work / "questions.jsonl")
        return work
    for name in ("mystore", "mycorpus", "store", "path/to/store"):
        shutil.copytree(demo_corpus_path(), work / name)
    return work


class _Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that keeps what it is sent."""

    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def _reply(messages: list[dict]) -> str:
    """rlms' root, sub-model and extraction for the rlms pages, else code and a refusal."""
    from tests.fixtures.rlms_model import rlms_model

    return rlms_model(messages) or _DEFAULT_REPLY


@dataclass
class Environment:
    """What the blocks run against: the variables, the chat server's requests and the spans
    the OTLP receiver got."""

    env: dict[str, str]
    requests: list
    spans: list[bytes]


@contextmanager
def environment(scratch: Path) -> Iterator[Environment]:
    """One RLM_DOCS_HOME (the demo store is built once, here), a loopback chat server for
    `openai:`, a local Hub mirror and an OTLP receiver, for every page run inside."""
    from tests.hub_fixture import (
        write_financebench_mirror,
        write_madqa_mirror,
        write_mmlongbench_mirror,
        write_oolong_mirror,
    )
    from tests.servers.chat import ChatServer

    home = scratch / "home"
    mirror = scratch / "hub-mirror"
    for write in (
        write_madqa_mirror,
        write_oolong_mirror,
        write_financebench_mirror,
        write_mmlongbench_mirror,
    ):
        write(mirror)
    env = dict(os.environ)
    for name in (
        "RLM_DOCS_MODEL",
        "RLM_DOCS_SUB_MODEL",
        "RLM_DOCS_OCR_LANG",
        "MISTRAL_API_KEY",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ):
        env.pop(name, None)
    receiver = HTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    _Receiver.bodies = []
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        PYTHONPATH=str(ROOT),
        RLM_DOCS_HOME=str(home),
        RLM_DOCS_CACHE="off",
        RLM_DOCS_HUB_MIRROR=str(mirror),
        HF_HOME=str(scratch / "hf"),
        HF_HUB_OFFLINE="1",
        OPENAI_API_KEY="sk-test-docs-0000000000",
        OTEL_EXPORTER_OTLP_ENDPOINT=f"http://127.0.0.1:{receiver.server_port}",
    )
    try:
        with ChatServer(reply=_reply, api_key=env["OPENAI_API_KEY"]) as chat:
            env["OPENAI_BASE_URL"] = chat.base_url
            with mock.patch.dict(os.environ, {"RLM_DOCS_HOME": str(home)}):
                from rlm_docs.ingest.demo import demo_corpus_path

                demo_corpus_path()
            yield Environment(env=env, requests=chat.requests, spans=_Receiver.bodies)
    finally:
        receiver.shutdown()
        receiver.server_close()


def run_page(
    page: str, work: Path, env: dict[str, str], after: Callable[[Ran], None] | None = None
) -> list[Ran]:
    """Run every block of `page` in order in `work`; fails naming the page line of the first
    block that exits non-zero or prints other than the text its page shows. `after` sees each
    block's result as soon as it ran (a test checking what one block wrote before the next)."""
    ran: list[Ran] = []
    for block in blocks(page):
        if block.marker == "not run":
            continue
        if block.marker == "printed by the block above":
            assert ran, f"{block.where}: no block ran before this output"
            assert ran[-1].stdout == block.code, (
                f"{block.where}: the block above printed\n{ran[-1].stdout}\nnot\n{block.code}"
            )
            continue
        if block.marker == "file":
            target = work / block.argument
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code, encoding="utf-8")
            if block.language != "python":
                continue
            argv = [sys.executable, block.argument]
        elif block.language == "python":
            argv = [sys.executable, "-c", block.code]
        elif block.language == "bash":
            argv = ["bash", "-eo", "pipefail", "-c", block.code]
        else:
            continue
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (
            f"{block.where} exited {done.returncode}:\n{block.code}\n{done.stderr[-3000:]}"
        )
        ran.append(Ran(block, done.stdout))
        if after is not None:
            after(ran[-1])
    return ran
