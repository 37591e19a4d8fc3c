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
from tmnb.report.runner import run

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


def _params(name: str, tmp_path) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The embedded sample for every report: 04 plans from it (writes nothing), 06 reads a run
    folder holding its snapshot."""
    if name == "04-rollout":
        return {"source": "sample", "change_id": "browser", "state_dir": str(tmp_path / "state")}
    if name == "06-postmortem":
        from tmnb.snapshot import save
        from tmnb.sources.resolve import open_snapshot

        save(open_snapshot("sample"), tmp_path / "evidence" / "01-inventory" / "snapshot.json.gz")
        return {"evidence": str(tmp_path / "evidence")}
    return {}


@pytest.mark.parametrize("name", REPORTS)
def test_report_in_a_real_browser(name, browser, tmp_path):
    result = run(ROOT / "notebooks" / f"{name}.ipynb", params=_params(name, tmp_path), out=tmp_path / name)
    assert result.html is not None, result.message
    html = result.html
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
