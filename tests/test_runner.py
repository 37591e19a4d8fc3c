"""The runner against real kernels: success, alert, error cell, cell timeout, dead kernel."""

import json
import re
import subprocess
import sys

import nbformat
import pytest

from conftest import ROOT
from notebook_factory import write_notebook
from tmnb.cli.main import main
from tmnb.cli.run.runner import find_notebook, run
from tmnb.errors import InputError, RunError

pytestmark = pytest.mark.notebook

PARAMS = 'code: str = "x"\ncount: int = 1\nout_dir: str = "."'


def test_success_writes_evidence(tmp_path):
    nb = write_notebook(
        tmp_path / "ok.ipynb",
        PARAMS,
        "SECRET_LOOKING_SOURCE = 'visible only with --show-code'\nprint(repr(code), count * 2)",
        "from tmnb.report.glue import glue\nglue('answer', {'code': code, 'double': count * 2})",
    )
    result = run(nb, [("code", "007"), ("count", "21")], reports_dir=tmp_path / "reports")
    assert result.status == "ok"
    assert result.results == {"answer": {"code": "007", "double": 42}}
    manifest = json.loads(result.manifest.read_text())
    assert manifest["parameters"] == {"code": "007", "count": 21, "out_dir": str(result.folder)}
    assert set(manifest["files"]) == {"ok.ipynb", "ok.html"}
    assert all(len(h) == 64 for h in manifest["files"].values())
    executed = nbformat.read(result.notebook, as_version=4)
    assert "'007' 42" in executed.cells[2].outputs[0]["text"]
    html = result.html.read_text()
    assert "&#39;007&#39; 42" in html or "'007' 42" in html
    assert "SECRET_LOOKING_SOURCE" not in html  # code hidden by default
    assert "count = 21" in re.sub(r"<[^>]+>", "", html)  # ...but the injected parameters stay visible


def test_out_folder_is_never_overwritten(tmp_path):
    nb = write_notebook(tmp_path / "ok.ipynb", PARAMS, "pass")
    run(nb, out=tmp_path / "run1")
    with pytest.raises(InputError, match="refusing to overwrite"):
        run(nb, out=tmp_path / "run1")


def test_alert_status(tmp_path):
    nb = write_notebook(
        tmp_path / "a.ipynb", PARAMS, "from tmnb.report.glue import glue\nglue('alert', {'why': '2 blockers'})"
    )
    result = run(nb, reports_dir=tmp_path)
    assert (result.status, result.message) == ("alert", "2 blockers")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("raise ValueError('boom')", "raised ValueError: boom"),
        ("import time\ntime.sleep(30)", "cell timeout"),  # the 1 s timeout stops it
        ("import os\nos._exit(1)", "kernel died"),
    ],
)
def test_failures_are_failures_and_keep_the_partial_notebook(tmp_path, body, message):
    nb = write_notebook(tmp_path / "bad.ipynb", PARAMS, "print('before')", body, "print('never')")
    with pytest.raises(RunError, match=message) as err:
        run(nb, out=tmp_path / "run", timeout=1)
    kept = tmp_path / "run" / "bad.ipynb"
    assert str(kept) in str(err.value)
    executed = nbformat.read(kept, as_version=4)
    assert executed.metadata["tmnb"]["status"] == "failed"
    assert "tmnb-failure" in executed.cells[0].metadata["tags"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert message.split()[-1] in manifest["message"]


GLUE_ALERT = "from tmnb.report.glue import glue\nglue('alert', 'blockers')"


def test_cli_exit_codes(tmp_path, capsys):
    ok = write_notebook(tmp_path / "ok.ipynb", PARAMS, "pass")
    bad = write_notebook(tmp_path / "bad.ipynb", PARAMS, "1/0")
    alert = write_notebook(tmp_path / "al.ipynb", PARAMS, GLUE_ALERT)
    base = ["run", "--reports-dir", str(tmp_path / "r")]
    assert main([*base, str(ok), "--timeout", "0.5"]) == 0  # nbclient takes whole seconds only
    assert "report: " in capsys.readouterr().out
    assert main([*base, str(bad)]) == 1
    assert "tmnb: run failed: bad.ipynb: cell 2 raised ZeroDivisionError" in capsys.readouterr().err
    assert main([*base, str(alert)]) == 3
    assert "tmnb: alert: blockers" in capsys.readouterr().err
    assert main([*base, str(ok), "-p", "count", "many"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"tmnb: error: {ok}: parameter count: expected int, got 'many'"]


def test_credentials_are_refused_as_parameters(tmp_path):
    nb = write_notebook(tmp_path / "p.ipynb", 'url: str = ""\nout_dir: str = "."', "pass")
    with pytest.raises(InputError, match="pass secrets through the environment"):
        run(nb, [("url", "https://me:s3cret@prom.example")], reports_dir=tmp_path / "r")
    assert not (tmp_path / "r").exists()


#: what every run printed before: the kernel's plain-text transport, its Ctrl-C at shutdown, and
#: papermill not seeing parameters the notebook declares
NOISE = ("without encryption", "KeyboardInterrupt", "unknown parameter", "Unable to parse line")


@pytest.fixture(scope="module")
def inventory_elsewhere(tmp_path_factory):
    """One real run of 01-inventory through the command line, with its out_dir pointed elsewhere."""
    tmp = tmp_path_factory.mktemp("quiet")
    argv = [sys.executable, "-m", "tmnb.cli", "run", str(ROOT / "notebooks" / "01-inventory.ipynb")]
    argv += ["-p", "node_selector", "tmnb.dev/pool=latency", "-p", "context", ""]
    argv += ["-p", "out_dir", str(tmp / "elsewhere"), "--reports-dir", str(tmp / "reports")]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp)
    assert done.returncode == 0, done.stderr
    return tmp, done


def test_a_successful_run_is_quiet(inventory_elsewhere):
    _, done = inventory_elsewhere
    assert not [line for line in done.stderr.splitlines() if any(n in line for n in NOISE)]
    assert done.stderr == ""


def test_out_dir_elsewhere_is_the_run_folder(inventory_elsewhere):
    tmp, done = inventory_elsewhere
    folder = tmp / "elsewhere"
    assert f"run folder: {folder}" in done.stdout
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["parameters"]["out_dir"] == str(folder)
    assert {"snapshot.json.gz", "snapshot.json.gz.manifest.json", "01-inventory.ipynb"} <= set(manifest["files"])
    assert not (tmp / "reports").exists()


def test_a_finished_kernel_is_shut_down_without_a_sigint(tmp_path):
    """The SIGINT jupyter_client sends before a shutdown is what ipykernel logs as 'KeyboardInterrupt
    caught in kernel'; the notebook installs a SIGINT handler that outlives its cell, as a library can."""
    marker = tmp_path / "interrupted"
    nb = write_notebook(
        tmp_path / "sig.ipynb",
        'marker: str = ""\nout_dir: str = "."',
        "import asyncio, signal\n"
        "def note(*_):\n    open(marker, 'w').write('interrupted')\n"
        "asyncio.get_event_loop().call_later(0.05, signal.signal, signal.SIGINT, note)",
        "import time\ntime.sleep(0.5)",
    )
    assert run(nb, [("marker", str(marker))], reports_dir=tmp_path / "r").status == "ok"
    assert not marker.exists()


def test_out_dir_and_out_naming_two_folders_is_refused(tmp_path):
    nb = write_notebook(tmp_path / "ok.ipynb", PARAMS, "pass")
    with pytest.raises(InputError, match="names another folder than --out"):
        run(nb, [("out_dir", str(tmp_path / "a"))], out=tmp_path / "b")


def test_a_value_outside_the_declared_choices_is_refused_before_any_kernel(tmp_path, capsys):
    nb = ROOT / "notebooks" / "03-readiness.ipynb"
    argv = ["run", str(nb), "-p", "mode", "bogus", "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"tmnb: error: {nb}: parameter mode: expected one of drain, restart; got 'bogus'"
    ]
    assert not (tmp_path / "r").exists()
    with pytest.raises(InputError, match="parameter executor: expected one of dry-run, local, ssh, node-pod, sandbox"):
        run(ROOT / "notebooks" / "04-rollout.ipynb", params={"executor": "rsync"}, reports_dir=tmp_path / "r")


def test_the_demo_report_names_every_folder_and_exits_3_on_an_alert(tmp_path, capsys):
    from tmnb.cli.demo import Demo, pack_demo
    from tmnb.cli.reports import report_demo

    folder = tmp_path / "20261203T000000Z-demo"
    ok = write_notebook(tmp_path / "ok.ipynb", PARAMS, "pass")
    alert = write_notebook(tmp_path / "al.ipynb", PARAMS, GLUE_ALERT)
    runs = [run(ok, out=folder / "01-ok"), run(alert, out=folder / "03-alert")]
    (folder / "sandbox").mkdir()
    demo = Demo(folder, runs, pack_demo(folder))
    assert report_demo(demo) == 3
    out, err = capsys.readouterr()
    for written in ("01-ok", "03-alert", "sandbox"):
        assert f"  {folder / written}\n" in out
    assert f"demo folder: {folder}\n" in out and f"evidence: {demo.bundle}" in out
    assert err == "tmnb: alert: 03-alert: blockers\n"
    assert report_demo(Demo(folder, runs[:1], demo.bundle)) == 0


@pytest.mark.parametrize(
    ("param", "value", "expected"),
    [
        ("after", "sample-aftr", "parameter after: unknown source 'sample-aftr'"),
        ("before", "/no/such/before.json", "parameter before: cannot read snapshot"),
    ],
)
def test_a_wrong_snapshot_source_fails_before_any_kernel_starts(tmp_path, param, value, expected):
    with pytest.raises(InputError, match=re.escape(expected)):
        run(ROOT / "notebooks" / "05-compare.ipynb", [(param, value)], out=tmp_path / "run")
    assert not (tmp_path / "run").exists()  # nothing ran, nothing written


@pytest.mark.parametrize("name", ["05-compare", "05", "compare", "05-compare.ipynb"])
def test_a_repository_notebook_is_found_by_name_number_or_topic(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # not the checkout: the name is not a path from here
    assert find_notebook(name) == ROOT / "notebooks" / "05-compare.ipynb"  # the checkout's: an editable install


def test_a_path_wins_over_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_notebook(tmp_path / "compare", "x = 1")
    assert find_notebook("compare").resolve() == tmp_path / "compare"


def test_a_live_default_without_any_kubeconfig_is_refused_before_the_kernel(tmp_path, monkeypatch, capsys):
    """04 reads the live cluster by default: on a machine with no kubeconfig, say so in one line (exit 2)
    instead of a failed run with a partial notebook."""
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["run", "04-rollout", "--out", str(tmp_path / "run")]) == 2
    assert "tmnb: error: parameter source: no kubeconfig" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
