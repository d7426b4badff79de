"""The viewer in a real headless browser (Debian's chromium via Playwright): it loads from
file:// with no console or page errors, a question expands on click and shows its answer and
citations, and hostile document text stays inert text."""

import shutil
from pathlib import Path

import pytest

from rlm_docs.viewer import write_viewer
from tests.test_viewer_build import HOSTILE, make_eval_run, make_run, make_trajectory
from tests.test_viewer_tree import make_decomposed_run

pytestmark = pytest.mark.browser

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium")) if p and Path(p).exists()), None
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("no chromium installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


def open_page(browser, html: Path):
    page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(html.as_uri())
    page.wait_for_selector("section.q")
    return page, problems, requests


def test_run_page_expands_question_with_answer_and_citation(browser, tmp_path):
    html = write_viewer(make_run(tmp_path / "run"), tmp_path / "run.html")
    page, problems, requests = open_page(browser, html)
    try:
        assert page.locator("section.q").count() == 3
        assert "33.3% (1/3)" in page.locator("#summary").inner_text()
        card = page.locator('section.q[data-id="fb-1"]')
        assert not card.locator(".q-body").is_visible()
        card.locator(".q-head").click()
        body = card.locator(".q-body")
        assert body.is_visible()
        assert body.locator(".answer").inner_text().strip() == "$32,765 million"
        citation = body.locator(".citation").first
        assert citation.is_visible()
        assert citation.inner_text().strip() == "3M_2018_10K · page 3"
        # the first turn is open: code, output (hostile text shown as text) and sub-calls
        turn = body.locator("details.turn").first
        assert "hits = search('net sales')" in turn.locator("pre.code").inner_text()
        assert HOSTILE in turn.inner_text()
        assert page.evaluate("window.PWNED === undefined")
        calls = turn.locator("details.call")
        assert calls.count() == 2
        calls.nth(1).locator("summary").first.click()
        assert "child summary" in calls.nth(1).inner_text()
        assert "c000002" not in body.locator("table.ledger").inner_text()  # ids not shown
        assert "$0.000420" in body.locator("table.ledger").inner_text()
        card.locator(".q-head").click()
        assert not body.is_visible()
        # filtering by status keeps only the wrong answers
        page.select_option("#status", "wrong")
        assert page.locator("section.q").count() == 2
        assert page.locator("#count").inner_text() == "2 of 3 shown"
        lost = page.locator('section.q[data-id="fb-3"]')
        lost.locator(".q-head").click()
        assert "missing.jsonl not found" in lost.inner_text()
        assert problems == []
        assert all(u.startswith("file://") for u in requests)
    finally:
        page.close()


def test_single_trajectory_opens_expanded(browser, tmp_path):
    log = make_trajectory(tmp_path / "t.jsonl", "q7", "How much?", "42 million", 2)
    page, problems, _ = open_page(browser, write_viewer(log, tmp_path / "t.html"))
    try:
        body = page.locator("section.q .q-body")
        assert body.is_visible()
        assert body.locator(".answer").inner_text().strip() == "42 million"
        assert body.locator(".citation").inner_text().strip() == "3M_2018_10K · page 2"
        assert problems == []
    finally:
        page.close()


def test_real_eval_run_in_browser(browser, tmp_path):
    html = write_viewer(make_eval_run(tmp_path), tmp_path / "eval.html")
    page, problems, _ = open_page(browser, html)
    try:
        card = page.locator('section.q[data-id="b"]')
        card.locator(".q-head").click()
        body = card.locator(".q-body")
        assert "$6.73 billion" in body.locator(".answer").inner_text()
        citation = body.locator(".citation").first
        assert citation.is_visible() and "AMD_2019_10K · page 1" in citation.inner_text()
        assert "AMD revenue was $6.73 billion" in citation.locator(".snippet").inner_text()
        assert body.locator("details.turn").count() >= 1
        assert body.locator("table.ledger tr").count() >= 2
        assert problems == []
    finally:
        page.close()


def test_sub_call_tree_and_decomposition_filters(browser, tmp_path):
    html = write_viewer(make_decomposed_run(tmp_path / "run"), tmp_path / "tree.html")
    page, problems, _ = open_page(browser, html)
    try:
        assert page.locator("section.q").count() == 3
        # filters: by strategy tag, then by minimum fan-out (a run without the record never
        # passes a filter)
        page.select_option("#strategy", "grep")
        assert [c.get_attribute("data-id") for c in page.locator("section.q").all()] == ["q-grep"]
        page.select_option("#strategy", "any")
        page.fill("#fanout", "4")
        assert [c.get_attribute("data-id") for c in page.locator("section.q").all()] == ["q-map"]
        assert page.locator("#count").inner_text() == "1 of 3 shown"
        page.fill("#fanout", "6")
        assert page.locator("section.q").count() == 0
        page.fill("#fanout", "0")
        assert page.locator("section.q").count() == 3
        # the tree: turns > cells > batches (3 then 5) and the child run, with its own turn
        card = page.locator('section.q[data-id="q-map"]')
        card.locator(".q-head").click()
        tree = card.locator("ul.tree")
        assert tree.locator("li.node.turn").count() == 4  # three root turns, one child turn
        batches = tree.locator("li.node.batch")
        assert [b.get_attribute("data-size") for b in batches.all()] == ["3", "5"]
        assert not batches.nth(1).locator("li.node.call").first.is_visible()  # folded
        batches.nth(1).locator("summary").first.click()
        assert batches.nth(1).locator("li.node.call").count() == 5
        assert "100 chars" in batches.nth(1).locator("li.node.call").first.inner_text()
        assert "500 chars" in batches.nth(1).locator("summary").first.inner_text()
        child = tree.locator("li.node.child")
        child.locator("summary").first.click()
        assert "What does the child find?" in child.inner_text()
        assert child.locator("li.node.call").first.is_visible()
        assert "error" in tree.locator("li.node.cell").nth(2).inner_text()
        body = card.locator(".q-body")
        assert "3, 5" in body.locator(".decomposition").inner_text()
        old = page.locator('section.q[data-id="q-old"]')
        old.locator(".q-head").click()
        assert "decomposition: n/a" in old.inner_text()
        assert problems == []
    finally:
        page.close()
