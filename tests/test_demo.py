"""The demo's reports (``make demo``, built once for this file): as a new user sees them, and as
papermill's plain run of the same notebooks on the same inputs writes them.

In a browser: each HTML opened in Debian's headless Chromium, offline. The verdict block must be
on the first screen, every interactive table must hold all its rows (the count DataTables reports
equals the CSV beside the report), and the page must raise no console error. Full-page screenshots
are kept in tests/artifacts/ for a person to look at.

Against plain papermill: the demo runs its notebooks through the runner's fast paths (a kernel
started before papermill with the notebook's imports preloaded, one started ahead while another
notebook runs, two runs side by side, the HTML exporter built in the background); each run whose
inputs outlive the demo is run again with ``papermill.execute_notebook`` alone and must say the
same (see ``test_the_demo_reports_are_what_plain_papermill_writes``).
"""

from __future__ import annotations

import difflib
import gzip
import hashlib
import itertools
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import papermill as pm
import pytest

from conftest import ROOT, require_tool

pytestmark = pytest.mark.notebook
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


@pytest.mark.browser
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
    from tmnb.cli.demo import run_demo

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


def test_every_command_the_demo_prints_runs_as_printed(demo):  # type: ignore[no-untyped-def]
    """Each next command of the demo's reports (a live twin, a rollout executed, a comparison with its
    journal, a postmortem) names a real subcommand, notebook and parameters, with values ``tmnb run``
    types as the report meant them and paths that hold from any directory (printed_commands)."""
    from printed_commands import explained, printed_commands

    printed = {r.folder.name: printed_commands(r.notebook) for r in demo.runs}
    assert all(printed.values()), [name for name, commands in printed.items() if not commands]
    wrong = explained([c for commands in printed.values() for c in commands])
    assert not wrong, wrong


def test_the_demo_rollout_is_found_where_the_demo_left_it(demo, capsys, monkeypatch):  # type: ignore[no-untyped-def]
    """The demo's change lives under its folder (rollout-state/, and 04-rollout/ with copies): ``tmnb
    rollout list`` with that folder lists it once, done on its one node, and ``status`` finds it by its
    id in the reports folder, with the comparison as the next step."""
    from tmnb.cli.main import main

    monkeypatch.setenv("TMNB_REPORTS", str(demo.folder.parent))
    monkeypatch.chdir(demo.folder.parent)
    assert main(["rollout", "list", str(demo.folder)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[1:]]
    state = f"{demo.folder.name}/rollout-state"
    assert rows == [["demo-canary", "1/1", "done", "topologyManagerPolicy=single-numa-node", state]]
    assert main(["rollout", "status", "--change-id", "demo-canary"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("demo-canary: done: 1 of 1 node done, each verified; the last step at ")
    assert lines[1] == "  compare before and after with:" and all(len(line) <= 120 for line in lines)


@pytest.mark.browser
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


@pytest.mark.browser
def test_02_pool_shares_agree_with_the_answer_on_top(demo_pages):  # type: ignore[no-untyped-def]
    page = demo_pages("02-numa-occupancy")
    top = page.locator(".tmnb-verdict").inner_text()
    on_top = dict(re.findall(r"(\S+): ([\d.]+ %) of allocatable CPUs", top))
    rows = page.evaluate(f"[...{BODIES}[0].tBodies[0].rows].map(r => [...r.cells].map(c => c.innerText))")
    in_table = {r[0]: r[-1] for r in rows if r[1] == "cpu"}
    assert on_top and on_top == in_table, (on_top, in_table)
    assert "Drawn in detail:" in page.content()


@pytest.mark.browser
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


@pytest.mark.browser
def test_01_a_live_clusters_checklist_is_complete(demo_pages):  # type: ignore[no-untyped-def]
    """The demo collects the sandbox live: shared-pool containers have no exclusive cpuset to record,
    which is complete, not missing; and the 'consistent' column is explained where it is shown. The
    verdict leads with the three llm-serving replicas the sample's gpu-h100-01 rejected
    (docs/sample-fleet.md: TopologyAffinityError flapping), never a green checklist beside them."""
    page = demo_pages("01-inventory")
    top = page.locator(".tmnb-verdict").inner_text()
    first = top.splitlines()[0]
    assert first.startswith("3 pod(s) rejected at admission on 1 node(s)") and "Checklist complete" in first, first
    assert "gpu-h100-01" in top and "TopologyAffinityError" in top
    assert "consistent says whether" in page.locator("body").inner_text()


@pytest.mark.browser
def test_05_says_what_its_metrics_are_on_top(demo_pages):  # type: ignore[no-untyped-def]
    top = demo_pages("05-compare").locator(".tmnb-verdict").inner_text()
    assert "Read this first" in top and "synthetic" in top
    # one clock: the synthetic series' change time places the windows, and the report says why it is
    # not the rehearsal's journal (whose times the windows cannot follow: their after window is ahead)
    assert "where the windows are placed" in top and "do not follow the rehearsal's rollout journal" in top


@pytest.mark.browser
def test_06_leads_with_what_the_change_did(demo_pages):  # type: ignore[no-untyped-def]
    top = demo_pages("06-postmortem").locator(".tmnb-verdict").inner_text()
    first = top.splitlines()[0]
    assert "1 pod(s) refused at admission since the change began" in first, first
    assert "refused before the change began are listed apart" in first
    assert "Metric regressions (05-compare)" in top


# --- the demo's reports are what papermill's plain run of the same notebooks writes ---------------

#: The demo's runs that are run again, longest first (two at a time), and those that cannot be, and why.
REPEATED = ("02-numa-occupancy", "05-compare", "03-readiness", "06-postmortem")
NOT_REPEATED = {
    "01-inventory": "read the sandbox live, which is gone; its snapshot is the input of 02, 03 and 05",
    "04-rollout": "acted on the sandbox (backup, apply, restart); its journal and snapshots are 06's evidence",
    "after-change-inventory": "read the sandbox live after the change; its snapshot is 05's after",
}
#: itables' table ids (a new uuid4 at every display)
RANDOM_ID = re.compile(r"[0-9a-f]{8}([-_])[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}")
#: papermill's record of when each cell and the whole notebook ran (nbclient's is ``execution``)
CLOCK = ("start_time", "end_time", "duration")


@contextmanager
def _set_aside(path: Path, where: Path) -> Iterator[None]:
    path.rename(where)
    try:
        yield
    finally:
        where.rename(path)


def _plain(notebook: str, parameters: dict[str, Any], folder: Path) -> Path:
    """papermill alone: its own kernel, no preload, no kernel started ahead, no HTML."""
    folder.mkdir(parents=True)
    target = folder / Path(notebook).name
    pm.execute_notebook(
        notebook,
        str(target),
        parameters={**parameters, "out_dir": str(folder)},
        kernel_name="python3",  # the kernel the runner asks for
        progress_bar=False,
    )
    return target


@pytest.fixture(scope="module")
def plain(demo, tmp_path_factory):  # type: ignore[no-untyped-def]
    """Each repeatable run of the demo again, with the parameters its manifest records, into a
    folder of its own: {name: (the plain notebook, {a parameter's value in the demo: its value here})}.
    05's Prometheus ended with the demo: a new one is served the series the demo served (kept in
    demo-metrics/) and its address replaces the old one. 06 read the demo folder while its own run
    folder had no manifest yet (the runner writes it last): that manifest is set aside meanwhile."""
    from tmnb.metrics import backfill

    out = tmp_path_factory.mktemp("plain")
    runs = {r.folder.name: r for r in demo.runs}
    asked = {name: json.loads(runs[name].manifest.read_text()) for name in REPEATED}
    moved: dict[str, dict[str, str]] = {name: {} for name in REPEATED}
    with ExitStack() as stack:
        compare = asked["05-compare"]["parameters"]
        if compare.get("prometheus_url"):  # else the demo had no Prometheus and 05 read its metrics file
            series = out / "demo-metrics.om"
            series.write_bytes(gzip.decompress((demo.folder / "demo-metrics" / "demo-metrics.om.gz").read_bytes()))
            url = stack.enter_context(backfill.served(series, out / "prometheus"))
            moved["05-compare"] = {compare["prometheus_url"]: url}
            compare["prometheus_url"] = url
        stack.enter_context(_set_aside(runs["06-postmortem"].manifest, out / "06-postmortem-manifest.json"))
        jobs = {name: (asked[name]["notebook"], asked[name]["parameters"], out / name) for name in REPEATED}
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {name: pool.submit(_plain, *job) for name, job in jobs.items()}
            return {name: (future.result(), moved[name]) for name, future in futures.items()}


def _neutral(text: str, folder: Path, swaps: dict[str, str]) -> list[str]:
    text = RANDOM_ID.sub("ID", text).replace(str(folder), "RUN")
    for old, new in swaps.items():
        text = text.replace(old, new)
    return text.splitlines()


def _notebook(path: Path) -> tuple[str, str]:
    """The executed notebook as sorted JSON without its clock, and papermill's random id of the
    injected-parameters cell (which the HTML shows too)."""
    nb = json.loads(path.read_text())
    injected = ""
    for cell in nb["cells"]:
        cell["metadata"].pop("execution", None)
        for key in CLOCK:
            cell["metadata"].get("papermill", {}).pop(key, None)
        if "injected-parameters" in cell["metadata"].get("tags", []):
            injected, cell["id"] = cell["id"], "INJECTED"
    for key in CLOCK:
        nb["metadata"]["papermill"].pop(key, None)
    return json.dumps(nb, indent=1, sort_keys=True), injected


def _differences(got: list[str], expected: list[str]) -> str:
    """The first lines that differ, each cut short (a figure is one line of base64); empty if none."""
    lines = difflib.unified_diff(got, expected, "demo", "plain", lineterm="", n=1)
    return "\n".join(line[:200] for line in itertools.islice(lines, 40))


def test_every_run_of_the_demo_is_run_again_or_says_why_not(demo):  # type: ignore[no-untyped-def]
    assert sorted(r.folder.name for r in demo.runs) == sorted([*REPEATED, *NOT_REPEATED])


@pytest.mark.parametrize("name", REPEATED)
def test_the_demo_reports_are_what_plain_papermill_writes(name, demo, plain):  # type: ignore[no-untyped-def]
    """The demo's run and papermill's plain run of it agree on the whole executed notebook (every
    cell's source, outputs and execution count, the notebook's metadata and papermill's record of
    the parameters), the glued results (the demo's manifest against the plain notebook's), every
    other file the notebook wrote (tables/, figures, 03's snapshot) byte for byte, and the HTML
    (the plain notebook rendered by the same renderer). Neutralised, and only these, since each
    differs from run to run by construction: itables' random table ids; the run folder's path (the
    plain run writes to its own); papermill's random id for the injected-parameters cell; the clock
    papermill and nbclient record in cell and notebook metadata (when each cell ran, not what it
    said); and for 05 the Prometheus server's address (a free port at each start). No output of
    these reports carries the run's own clock: the times they show (05's windows, 06's timeline)
    come from their inputs. The demo ran 02 and 03 side by side, 05 on a kernel started while the
    second inventory ran, all with the preload and the HTML exporter built in the background. Not
    repeated (NOT_REPEATED): the two inventories read the sandbox live and 04 acted on it, and the
    sandbox is gone; what they wrote is the input of the runs repeated (the snapshots 02, 03 and 05
    read; the journal and snapshots 06 reads)."""
    from tmnb.report import ipynb
    from tmnb.report.glue import read_glued
    from tmnb.report.html import render_html

    ran = next(r for r in demo.runs if r.folder.name == name)
    notebook, moved = plain[name]
    folder = notebook.parent
    ours, theirs = {old: "SERVER" for old in moved}, {new: "SERVER" for new in moved.values()}

    (got, demo_id), (expected, plain_id) = _notebook(ran.notebook), _notebook(notebook)
    difference = _differences(_neutral(got, ran.folder, ours), _neutral(expected, folder, theirs))
    assert not difference, difference

    recorded = json.loads(ran.manifest.read_text())["results"]
    glued = [json.dumps(results, indent=1, sort_keys=True) for results in (recorded, read_glued(ipynb.read(notebook)))]
    difference = _differences(_neutral(glued[0], ran.folder, ours), _neutral(glued[1], folder, theirs))
    assert not difference, difference

    def written(run: Path, *own: str) -> dict[str, str]:
        files = (p for p in run.rglob("*") if p.is_file() and p.name not in own)
        return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}

    runner = (notebook.name, f"{notebook.stem}.html", "manifest.json")
    assert written(ran.folder, *runner) == written(folder, *runner)
    assert any(p.startswith("tables/") for p in written(folder)), "the report wrote its tables"

    assert ran.html is not None
    html = render_html(notebook, folder / f"{notebook.stem}.html", title=notebook.stem)
    difference = _differences(
        _neutral(ran.html.read_text(), ran.folder, {**ours, f"cell-id={demo_id}": "cell-id=INJECTED"}),
        _neutral(html.read_text(), folder, {**theirs, f"cell-id={plain_id}": "cell-id=INJECTED"}),
    )
    assert not difference, difference
