"""Corpus helpers inside the sandbox (and on the host), and the cached rendered context."""

import shutil
from pathlib import Path

import pytest

from rlm_docs.corpus import Corpus
from rlm_docs.errors import CorpusError
from rlm_docs.repl import CorpusSandbox
from rlm_docs.repl.context_cache import ContextLoader
from rlm_docs.repl.helpers import make_helpers
from sandbox import Limits

FINANCEBENCH = Path(__file__).resolve().parents[1].parent / "shared" / "datasets" / "financebench"

DOCS = {
    "alpha_report": [
        "# Overview\nAlpha Corp makes widgets.\n\nRevenue grew 12% in 2023.",
        "## Risks\nSupply chain risk.\n\n# Outlook\nWe expect growth of 5%.",
    ],
    "beta_filing": ["Beta Inc annual filing.\nNet income was $3 million.", "Signatures page."],
}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return Corpus.from_documents(DOCS).save(tmp_path_factory.mktemp("corpus") / "store")


@pytest.fixture(scope="module")
def sb(store):
    with CorpusSandbox(limits=Limits(wall_s=10), corpus=store) as box:
        yield box


def test_context_is_the_rendered_corpus(sb, store):
    expected = Corpus.load(store).render()
    assert sb.get("context") == expected
    assert sb.run("context.count('[PAGE ')").stdout == "4\n"


def test_helpers_return_plain_data(sb):
    sb.run("fl = files()\np = page('alpha_report', 2)\nps = pages('beta_filing', 1, 2)")
    assert sb.get("fl")[0]["name"] == "alpha_report" and sb.get("fl")[0]["pages"] == 2
    assert sb.get("p").startswith("## Risks")
    assert sb.get("ps") == (
        "=== beta_filing page 1 ===\n" + DOCS["beta_filing"][0] + "\n\n"
        "=== beta_filing page 2 ===\n" + DOCS["beta_filing"][1]
    )
    sb.run("hits = search('net income', k=1)")
    assert [(h["file"], h["page"]) for h in sb.get("hits")] == [("beta_filing", 1)]
    sb.run("g = grep(r'grew \\d+%')")
    assert sb.get("g") == [
        {
            "file": "alpha_report",
            "page": 1,
            "line": 4,
            "text": "Revenue grew 12% in 2023.",
            "offset": 46,
        }
    ]
    sb.run("where = locate(context.index('Signatures'))")
    assert sb.get("where") == {"file": "beta_filing", "page": 2}


def test_sections_helpers(sb):
    sb.run("t = toc('alpha_report')\nsec = read_section('alpha_report', 'Outlook')")
    assert [e["title"] for e in sb.get("t")] == ["Overview", "Risks", "Outlook"]
    assert sb.get("sec")[-1] == {
        "paragraph": 0,
        "text": "# Outlook\nWe expect growth of 5%.",
        "page": 2,
    }


def test_corpus_facade_exposes_only_helpers(sb):
    assert sb.run("corpus.page('beta_filing', 2)").stdout == "'Signatures page.'\n"
    names = (
        "['files', 'grep', 'lines', 'locate', 'page', 'pages', 'read_section', 'search', 'toc']\n"
    )
    assert sb.run("sorted(dir(corpus))").stdout == names
    assert "not allowed" in sb.run("getattr(corpus.page, '__closure__')").error


def test_helper_errors_name_the_problem(sb):
    error = sb.run("page('alpha', 1)").error
    assert error.splitlines()[-1].startswith("CorpusError: unknown document 'alpha'")
    assert "alpha_report" in error
    assert "CorpusError" in sb.run("page('beta_filing', 9)").error
    assert sb.run(
        "try:\n    page('nope', 1)\nexcept CorpusError:\n    print('handled')"
    ).stdout == ("handled\n")
    assert "invalid pattern" in sb.run("grep('(')").error
    assert "page number must be an int" in sb.run("page('beta_filing', '1')").error


def test_host_side_helpers_match(store):
    helpers = make_helpers(Corpus.load(store))
    assert helpers["page"]("beta_filing", 1) == DOCS["beta_filing"][0]
    assert helpers["grep"]("widgets")[0]["page"] == 1
    with pytest.raises(CorpusError, match="unknown document"):
        helpers["toc"]("gamma")


@pytest.mark.parametrize(
    "text",
    ["plain ascii", "latin-1 café", "bullets • and ﬁ ligatures", "astral 𝔘 char", "lone \ud800"],
)
def test_context_cache_round_trip(tmp_path, store, text):
    cache = tmp_path / "cache"
    renders: list[int] = []

    def render() -> str:
        renders.append(1)
        return text * 3

    assert ContextLoader(store, cache, min_chars=0).result(render) == text * 3
    assert len(list(cache.glob("context-*.bin"))) == 1
    loaded = ContextLoader(store, cache, min_chars=0).result(render)
    assert renders == [1]
    expected = "".join([text, text, text])  # built independently of the cached object
    assert loaded == expected and hash(loaded) == hash(expected)
    assert {expected: 1}[loaded] == 1
    assert loaded[-1] == text[-1] and len(loaded) == 3 * len(text)
    assert loaded.encode("utf-8", "surrogatepass") == expected.encode("utf-8", "surrogatepass")


def test_truncated_cache_file_is_ignored(tmp_path, store):
    cache = tmp_path / "cache"
    ContextLoader(store, cache, min_chars=0).result(lambda: "abc" * 100)
    entry = next(cache.glob("context-*.bin"))
    entry.write_bytes(entry.read_bytes()[:-10])
    assert ContextLoader(store, cache, min_chars=0).result(lambda: "fresh") == "fresh"


def test_context_cache_follows_store_rewrites(tmp_path):
    store = Corpus.from_documents({"d": ["one"]}).save(tmp_path / "s")
    cache = tmp_path / "cache"
    assert ContextLoader(store, cache, min_chars=0).result(lambda: "first") == "first"
    shutil.rmtree(store)
    Corpus.from_documents({"d": ["two"]}).save(tmp_path / "s")
    assert ContextLoader(store, cache, min_chars=0).result(lambda: "second") == "second"


@pytest.mark.financebench
@pytest.mark.skipif(not FINANCEBENCH.is_dir(), reason="FinanceBench data not present")
def test_financebench_filings_in_the_sandbox(tmp_path):
    from rlm_docs.ingest.pipeline import ingest

    names = ["3M_2018_10K", "AMCOR_2023_10K"]
    sources = [FINANCEBENCH / "text" / f"{name}.txt" for name in names]
    ingest(sources, tmp_path / "store")
    with CorpusSandbox(limits=Limits(wall_s=20), corpus=tmp_path / "store") as box:
        box.run("hits = search('3M capital expenditures 2018', k=3)")
        assert box.get("hits")[0]["file"] == "3M_2018_10K"
        box.run("g = grep('(?i)net sales', doc='3M_2018_10K', max_hits=3)")
        hits = box.get("g")
        assert hits and all(h["file"] == "3M_2018_10K" for h in hits)
        assert box.run("sum(f['pages'] for f in files())").stdout.strip().isdigit()


def test_sandboxes_on_one_corpus_are_isolated(sb, store):
    sb.run("mine = 'first sandbox'")
    with CorpusSandbox(limits=Limits(wall_s=10), corpus=store) as other:
        assert other.pid != sb.pid
        assert "NameError" in other.run("mine").error
        assert other.run("len(context) > 0").stdout == "True\n"
    assert sb.get("mine") == "first sandbox"


def test_restart_after_timeout_keeps_the_corpus(store):
    with CorpusSandbox(limits=Limits(wall_s=1), corpus=store) as box:
        result = box.run("while True:\n    pass")
        assert result.restarted
        assert box.run("page('beta_filing', 2)").stdout == "'Signatures page.'\n"


def test_host_function_overrides_a_helper_of_the_same_name(store):
    functions = {"search": lambda query, k=5: [f"host:{query}"]}
    with CorpusSandbox(limits=Limits(wall_s=10), corpus=store, functions=functions) as box:
        assert box.run("search('net income')").stdout == "['host:net income']\n"
        assert box.run("corpus.search('net income', k=1)[0]['file']").stdout == "'beta_filing'\n"


def test_rewritten_store_is_not_served_stale(tmp_path):
    path = tmp_path / "store"
    Corpus.from_documents({"doc": ["old text"]}).save(path)
    with CorpusSandbox(limits=Limits(wall_s=10), corpus=path) as box:
        assert box.run("page('doc', 1)").stdout == "'old text'\n"
    Corpus.from_documents({"doc": ["new text"]}).save(path)
    with CorpusSandbox(limits=Limits(wall_s=10), corpus=path) as box:
        assert box.run("page('doc', 1)").stdout == "'new text'\n"


def test_pages_read_are_kept_where_model_code_cannot_change_them(store):
    with CorpusSandbox(limits=Limits(wall_s=10), corpus=store) as box:
        box.run("a = page('alpha_report', 2)\nb = pages('beta_filing', 1, 1)")
        read = [["alpha_report", 2], ["beta_filing", 1]]
        assert box.pages_read() == read
        edited = box.run(
            "copy = pages_read()\ncopy.clear()\ncopy.append(['beta_filing', 2])\ndel pages_read"
        )
        assert edited.error is None and box.pages_read() == read  # a copy; the log is elsewhere
        assert box.run("print(pages_read())").stdout == f"{read}\n"  # a deleted name comes back
        rebound = box.run("pages_read = [['evil', 9]]\nc = read_section('alpha_report', 'Outlook')")
        assert rebound.error is None and box.pages_read() == read  # Outlook: page 2, already read
        assert box.run("print(pages_read)").stdout == "[['evil', 9]]\n"  # the model's own list
    with CorpusSandbox(limits=Limits(wall_s=10)) as plain:
        assert plain.pages_read() == []
        assert "NameError" in plain.run("pages_read()").error


def test_the_corpus_name_parsing_is_importable_and_nothing_else_of_the_project(sb):
    ok = sb.run(
        "from rlm_docs.corpus.filings import company_match, describe, parse_query\n"
        "f = describe('JOHNSON_JOHNSON_2020_10K')\n"
        "print(f.year, f.kind, company_match(f, parse_query('JnJ employees in 2020')))"
    )
    assert ok.error is None and ok.stdout == "2020 10k 1.0\n"
    for code in (
        "from rlm_docs.corpus import Corpus",
        "import rlm_docs.corpus",
        "from rlm_docs.corpus.filings import re",
        "from rlm_docs.corpus.filings import _company_keys",
    ):
        assert "Error" in sb.run(code).error, code
