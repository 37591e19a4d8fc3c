"""The reports as a new user sees them: each HTML opened in Debian's headless Chromium, offline.

The verdict block must be on the first screen, every interactive table must hold all its rows
(the count DataTables reports equals the CSV beside the report), and the page must raise no
console error. Full-page screenshots are kept in tests/artifacts/ for a person to look at.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from conftest import ROOT, require_tool

pytestmark = [pytest.mark.browser, pytest.mark.notebook]
ARTIFACTS = ROOT / "tests" / "artifacts"
VIEWPORT = {"width": 1400, "height": 900}
REPORTS = ["01-inventory", "02-numa-occupancy", "03-readiness", "04-rollout", "05-compare", "06-postmortem"]


@pytest.fixture(scope="module")
def browser():
    chromium = require_tool("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"],
        )
        yield browser
        browser.close()


@pytest.mark.parametrize("name", REPORTS)
def test_report_in_a_real_browser(name, browser, demo):  # type: ignore[no-untyped-def]
    """Each of the demo's reports, 04 in execute mode (the sample's own runs are checked elsewhere:
    test_notebooks.py, test_compare.py, rollout/test_rollout_notebook.py, postmortem/)."""
    html = next(r.html for r in demo.runs if r.folder.name == name)
    assert html is not None, name
    page = browser.new_page(viewport=VIEWPORT)
    errors: list[str] = []
    fetched: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))

    def offline(route):  # the report must open without a network: anything not on disk is refused
        if not route.request.url.startswith("file:"):
            fetched.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", offline)
    page.goto(html.as_uri())
    page.wait_for_selector(".dt-info", timeout=30_000)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    verdict = page.locator(".tmnb-verdict")
    assert verdict.count() == 1 and verdict.is_visible()
    headline = verdict.locator("p").first.bounding_box()
    assert headline and headline["y"] + headline["height"] <= VIEWPORT["height"], "verdict below the first screen"
    assert page.evaluate("window.scrollY") == 0

    widths = page.evaluate(
        "[...document.querySelectorAll('table.dataTable')].map(t => t.getBoundingClientRect().right)"
    )
    assert max(widths) <= VIEWPORT["width"], f"a table runs off the right edge: {max(widths):.0f} px"
    infos = page.locator(".dt-info").all_inner_texts()
    links = page.locator(".tmnb-csv a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert len(infos) == len(links) > 0
    for info, link in zip(infos, links, strict=True):
        rows = len(pd.read_csv(html.parent / link, keep_default_na=False))
        shown = re.search(r"of ([\d,]+) entr(?:y|ies)$", info)
        assert shown and int(shown[1].replace(",", "")) == rows, (link, info)
    assert not fetched, f"the report reached for the network: {fetched[:3]}"
    assert not errors, errors
    page.close()


# --- the demo's execute-mode reports, as a new user reads them after `make demo` -------------------

#: the report's interactive tables with their rows (DataTables' scrolling adds header-only copies)
BODIES = "[...document.querySelectorAll('table.dataTable')].filter(t => t.tBodies.length)"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):  # type: ignore[no-untyped-def]
    """The demo once for the module: a sandbox rollout on the canary, the staged failure, every report."""
    require_tool("chromium")
    pytest.importorskip("playwright.sync_api")
    from tmnb.twin.demo import run_demo

    return run_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def demo_pages(demo, browser):  # type: ignore[no-untyped-def]
    """One page load per report of the demo, shared by the tests below (opened when first asked for)."""
    pages: dict[str, object] = {}

    def page(name: str):  # type: ignore[no-untyped-def]
        if name not in pages:
            html = next(r.html for r in demo.runs if r.folder.name == name)
            assert html is not None, name
            opened = browser.new_page(viewport=VIEWPORT)
            opened.goto(html.as_uri())
            opened.wait_for_selector(".tmnb-verdict", timeout=30_000)
            pages[name] = opened
        return pages[name]

    yield page
    for opened in pages.values():
        opened.close()  # type: ignore[attr-defined]


def test_the_demo_lists_every_report_it_wrote(demo, capsys):  # type: ignore[no-untyped-def]
    from tmnb.cli.reports import report_demo

    report_demo(demo)
    listed = {
        line.removeprefix("report: ") for line in capsys.readouterr().out.splitlines() if line.startswith("report: ")
    }
    written = {str(p) for p in demo.folder.rglob("*.html")}
    assert written and listed == written, sorted(written - listed)


@pytest.mark.parametrize("name", ["01-inventory", "02-numa-occupancy", "03-readiness", "05-compare", "06-postmortem"])
def test_every_row_is_in_the_page_for_the_browsers_find(demo, demo_pages, name):  # type: ignore[no-untyped-def]
    """No table is paged below HUGE rows: each one's rows are all in the DOM, and the browser's find
    reaches the last row of the longest table (03's predicted admission: a pod on 'page 11')."""
    page = demo_pages(name)
    counts = page.evaluate(f"{BODIES}.map(t => t.tBodies[0].rows.length)")
    links = page.locator(".tmnb-csv a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    folder = next(r.folder for r in demo.runs if r.folder.name == name)
    csvs = [pd.read_csv(folder / link, keep_default_na=False) for link in links]
    assert counts == [len(c) for c in csvs], (links, counts)
    longest = max(csvs, key=len)
    last = str(longest.iloc[-1, longest.columns.get_loc("pod")] if "pod" in longest else longest.iloc[-1, 0])
    assert page.evaluate("text => window.find(text, false, false, true)", last), last


def test_02_pool_shares_agree_with_the_answer_on_top(demo_pages):  # type: ignore[no-untyped-def]
    page = demo_pages("02-numa-occupancy")
    top = page.locator(".tmnb-verdict").inner_text()
    on_top = dict(re.findall(r"(\S+): ([\d.]+ %) of allocatable CPUs", top))
    rows = page.evaluate(f"[...{BODIES}[0].tBodies[0].rows].map(r => [...r.cells].map(c => c.innerText))")
    in_table = {r[0]: r[-1] for r in rows if r[1] == "cpu"}
    assert on_top and on_top == in_table, (on_top, in_table)
    assert "Drawn in detail:" in page.content()


def test_03_words_are_never_broken_inside(demo_pages):  # type: ignore[no-untyped-def]
    """A prose cell wraps only where a person would: between words or after a hyphen, slash or comma,
    never inside a word ("systemReser" / "ved")."""
    page = demo_pages("03-readiness")
    broken = page.evaluate(
        """() => {
        const out = [];
        const top = (node, i) => {
          const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
          const box = r.getClientRects()[0]; return box ? Math.round(box.top) : null;
        };
        for (const td of document.querySelectorAll('table.dataTable td.tmnb-text')) {
          const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            for (const m of node.data.matchAll(/\\S{2,}/g)) {
              for (let i = m.index + 1; i < m.index + m[0].length; i++) {
                const before = top(node, i - 1), here = top(node, i);
                if (before !== null && here !== null && here > before && !'-/,'.includes(node.data[i - 1]))
                  out.push(m[0]);
              }
            }
          }
        }
        return out;
      }"""
    )
    assert not broken, broken[:10]


def test_01_a_live_clusters_checklist_is_complete(demo_pages):  # type: ignore[no-untyped-def]
    """The demo collects the sandbox live: shared-pool containers have no exclusive cpuset to record,
    which is complete, not missing; and the 'consistent' column is explained where it is shown."""
    page = demo_pages("01-inventory")
    top = page.locator(".tmnb-verdict").inner_text()
    assert top.startswith("Checklist complete"), top.splitlines()[0]
    assert "consistent says whether" in page.locator("body").inner_text()


def test_05_says_what_its_metrics_are_on_top(demo_pages):  # type: ignore[no-untyped-def]
    top = demo_pages("05-compare").locator(".tmnb-verdict").inner_text()
    assert "Read this first" in top and "synthetic" in top
    # one clock: the synthetic series' change time places the windows, and the report says why it is
    # not the rehearsal's journal (whose times the windows cannot follow: their after window is ahead)
    assert "where the windows are placed" in top and "do not follow the rehearsal's rollout journal" in top


def test_06_leads_with_what_the_change_did(demo_pages):  # type: ignore[no-untyped-def]
    top = demo_pages("06-postmortem").locator(".tmnb-verdict").inner_text()
    first = top.splitlines()[0]
    assert "1 pod(s) refused at admission since the change began" in first, first
    assert "refused before the change began are listed apart" in first
    assert "Metric regressions (05-compare)" in top
