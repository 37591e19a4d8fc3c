"""One place for reports and a change's state, wherever JupyterLab, papermill or the shell stands."""

from __future__ import annotations

import sysconfig
from pathlib import Path

import papermill
import pytest

from conftest import ROOT
from tmnb.report.places import REPORTS_ENV, anchored, change_folder, notebooks_dir, reports_root, repository_root


def test_the_repository_is_found_from_notebooks_and_from_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REPORTS_ENV, raising=False)
    monkeypatch.chdir(ROOT / "notebooks")
    from_notebooks = (repository_root(), reports_root(), change_folder("c1"), anchored("reports/rollout"))
    monkeypatch.chdir(ROOT)
    from_root = (repository_root(), reports_root(), change_folder("c1"), anchored("reports/rollout"))
    assert from_notebooks == from_root
    assert from_root == (ROOT, ROOT / "reports", ROOT / "reports" / "rollouts" / "c1", ROOT / "reports" / "rollout")


def test_outside_a_repository_the_working_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(REPORTS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert repository_root() is None
    assert reports_root() == tmp_path.resolve() / "reports"
    monkeypatch.setenv(REPORTS_ENV, str(tmp_path / "elsewhere"))
    assert change_folder("c2") == tmp_path.resolve() / "elsewhere" / "rollouts" / "c2"
    assert change_folder("c2", "mine") == tmp_path.resolve() / "mine"  # a folder the user names


def test_a_notebook_run_from_notebooks_writes_nothing_there(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """As JupyterLab runs it: the kernel in notebooks/, the notebook's own default out_dir."""
    monkeypatch.setenv(REPORTS_ENV, str(tmp_path / "reports"))
    notebooks = ROOT / "notebooks"
    before = {p for p in notebooks.rglob("*") if "checkpoint" not in str(p)}
    monkeypatch.chdir(notebooks)
    papermill.execute_notebook(
        str(notebooks / "03-readiness.ipynb"),
        str(tmp_path / "out.ipynb"),
        kernel_name="python3",
        cwd=str(notebooks),
        progress_bar=False,
    )
    after = {p for p in notebooks.rglob("*") if "checkpoint" not in str(p)}
    assert after == before, sorted(map(str, after - before))
    assert (ROOT / "reports" / "readiness" / "tables").is_dir()


def test_the_notebooks_of_an_editable_install_are_the_checkouts() -> None:
    """The wheel carries them as tmnb/notebooks (tests/deploy/test_install.py); a checkout has none there."""
    assert not (ROOT / "src" / "tmnb" / "notebooks").exists()
    assert notebooks_dir() == ROOT / "notebooks"


def test_defaults_never_land_inside_an_installation(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A kernel started in site-packages (JupyterLab on the installed notebooks): the next upgrade would
    delete its evidence, so its reports and a change's state go to ~/tmnb instead. (The tests' own
    site-packages is inside the checkout, whose reports/ it would use: an installation elsewhere stands
    in; tests/deploy/test_install.py checks a real one.)"""
    site = tmp_path / "venv" / "lib" / "python3" / "site-packages"
    (site / "tmnb" / "notebooks").mkdir(parents=True)
    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(site))
    monkeypatch.delenv(REPORTS_ENV, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(site / "tmnb" / "notebooks")
    home = tmp_path / "home" / "tmnb"
    assert (reports_root(), change_folder("c3")) == (home / "reports", home / "reports" / "rollouts" / "c3")
    assert anchored("reports/readiness") == home / "reports" / "readiness"
    monkeypatch.chdir(tmp_path)
    assert reports_root() == tmp_path / "reports"  # beside the installation: the working directory, as before
    monkeypatch.setenv(REPORTS_ENV, str(site / "chosen"))
    assert reports_root() == site / "chosen"  # a folder the user names is taken as named
