"""The tools the prompts describe are the real ones: every backticked call `name(params)` in
`prompts/*.txt` names a function the REPL namespace binds (a corpus helper of `make_helpers`, a
host function, a worker function, or a Python builtin), and its parameters match the real
signature: the same names in the same order, the same defaults, and every parameter the prompt
leaves out optional. Renaming a helper or a parameter without fixing the prompt fails here.

The prompts are checked rather than generated from the signatures: they are prose written for
models (when to use each tool, what its result holds), and madqa.txt is the rlms paper prompt
kept verbatim for comparability.
"""

import ast
import builtins
import inspect
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.engine.host_functions import HostFunctions
from rlm_docs.engine.memory import Memory
from rlm_docs.governor import Governor
from rlm_docs.models import make_client
from rlm_docs.repl.helpers import make_helpers
from rlm_docs.repl.preload import load_corpus
from rlm_docs.resources import prompts_dir
from sandbox.worker import Worker

CALL = re.compile(r"`([A-Za-z_]\w*)\(([^`]*)\)`")
PROMPTS = sorted(prompts_dir().glob("*.txt"))


def _namespace() -> dict[str, Callable[..., Any]]:
    """Every function model code can call, by the name it is bound under (a run with a corpus
    memory binds `note` / `notes` too)."""
    corpus = Corpus.from_documents({"a": ["x"]})
    with tempfile.TemporaryDirectory() as where:
        store = corpus.save(Path(where) / "store")
        memory = Memory(Path(where) / "memory", store)
        preloaded = load_corpus(str(store))  # what a corpus worker starts with
    found: dict[str, Callable[..., Any]] = {
        name: value
        for name, value in preloaded.namespace.items()
        if callable(value) and not isinstance(value, type)
    }
    host = HostFunctions(Governor(), make_client("offline"), memory=memory)
    found.update(host.functions())
    # The worker binds one of its own methods (worker.py: `_plain(self.user_variables,
    # "SHOW_VARS")`); bound, it takes what it shows.
    worker = object.__new__(Worker)
    found.update(SHOW_VARS=worker.user_variables)
    return found


NAMESPACE = _namespace()


def described(text: str) -> list[tuple[str, list[tuple[str, Any]]]]:
    """`(name, [(parameter, default or REQUIRED)])` of each backticked call in a prompt."""
    out = []
    for name, params in CALL.findall(text):
        call = ast.parse(f"f({params})", mode="eval").body
        assert isinstance(call, ast.Call)
        listed = [(arg.id, inspect.Parameter.empty) for arg in call.args]  # type: ignore[attr-defined]
        listed += [(kw.arg, ast.literal_eval(kw.value)) for kw in call.keywords]
        out.append((name, listed))
    return out


def mismatch(function: Callable[..., Any], listed: list[tuple[str, Any]]) -> str | None:
    """Why the prompt's parameter list does not describe `function`, or None."""
    real = list(inspect.signature(function).parameters.values())
    if len(listed) > len(real):
        return f"the prompt lists {len(listed)} parameters, the function has {len(real)}"
    for (name, default), param in zip(listed, real, strict=False):
        if name != param.name:
            return f"parameter {param.name!r} is described as {name!r}"
        if default != param.default:
            return f"{name}: the prompt says default {default!r}, the function {param.default!r}"
    left_out = [p.name for p in real[len(listed) :] if p.default is inspect.Parameter.empty]
    return f"required parameters {left_out} are not described" if left_out else None


@pytest.mark.parametrize("path", PROMPTS, ids=lambda p: p.name)
def test_prompt_tools_match_the_real_signatures(path):
    for name, listed in described(path.read_text(encoding="utf-8")):
        if name not in NAMESPACE:
            assert hasattr(builtins, name), f"{path.name}: `{name}(...)` is not a REPL function"
            continue
        problem = mismatch(NAMESPACE[name], listed)
        assert problem is None, f"{path.name}: `{name}(...)`: {problem}"


def test_the_docs_prompt_describes_every_corpus_helper():
    text = (prompts_dir() / "docs.txt").read_text(encoding="utf-8")
    named = {name for name, _ in described(text)}
    assert set(make_helpers(Corpus.from_documents({"a": ["x"]}))) <= named


def test_a_renamed_parameter_is_caught():
    def search(query, top_k=5, doc=None):  # noqa: ARG001 - only the signature matters
        return []

    (name, listed), *_ = described("`search(query, k=5, doc=None)`")
    assert mismatch(search, listed) == "parameter 'top_k' is described as 'k'"
    assert mismatch(NAMESPACE[name], listed) is None
    assert mismatch(NAMESPACE["page"], described("`page(doc)`")[0][1]) == (
        "required parameters ['n'] are not described"
    )
    assert "default" in mismatch(NAMESPACE["grep"], described("`grep(pattern, doc=1)`")[0][1])


def test_the_docs_prompt_lists_the_importable_modules_and_describes_context():
    """The modules named are exactly those model code can import (the stdlib ones), and
    `context` is a variable of its own whose markers, `[END PAGE N]` included, are spelled as
    the rendered corpus spells them."""
    from rlm_docs.corpus.render import render_documents
    from rlm_docs.engine.prompts import root_prompt
    from sandbox.modules import ALLOWED

    corpus = Corpus.from_documents({"a": ["x"]})
    text = root_prompt("docs", "q?", corpus, 10)
    listed = re.search(r"Modules you can import \([^)]*\): ([^.]+)\.", text).group(1)
    assert listed.split(", ") == [name for name in ALLOWED if "." not in name]
    (line,) = [line for line in text.split("\n") if line.startswith("- `context` ->")]
    assert f"one string of {corpus.rendered_chars} characters" in line
    rendered = render_documents(["NAME"], [1], ["text"])  # one document NAME of one page
    markers = re.findall(r"`(\[[^`]*\])`", line)
    assert len(markers) == 4 and "[END PAGE N]" in markers
    for marker in markers:
        assert marker.replace("N]", "1]") + "\n" in rendered
