"""The commands about the notebooks themselves: ``tmnb params`` (what a notebook takes), ``tmnb notebooks``
(copies to edit), and the help that describes them; ``kubectl tmnb`` names itself so."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from tmnb.cli.main import main


def _parameters_cell(notebook: Path) -> list[str]:
    cells = json.loads(notebook.read_text())["cells"]
    (cell,) = [c for c in cells if "parameters" in c["metadata"].get("tags", [])]
    return "".join(cell["source"]).splitlines()


@pytest.mark.parametrize("notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem)
def test_params_lists_every_parameter_with_its_type_default_and_help(notebook: Path, capsys) -> None:
    assert main(["params", notebook.stem[:2]]) == 0
    out = capsys.readouterr().out
    flat = " ".join(out.split())
    declared = [
        m.groups() for line in _parameters_cell(notebook) if (m := re.match(r"(\w+): (.+?) = .+?\s+# (.*)$", line))
    ]
    assert len(declared) >= 2
    for name, kind, comment in declared:
        assert f"  {name}: {kind} = " in out, name
        assert " ".join(comment.split()) in flat, name  # the comment, wrapped


def test_params_shows_the_allowed_values(capsys) -> None:
    assert main(["params", "04-rollout"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  mode: str = 'plan'  (one of: plan, execute)" in lines
    assert "  executor: str = 'dry-run'  (one of: dry-run, local, ssh, node-pod, sandbox)" in lines


def test_params_of_an_unknown_notebook_is_one_line(capsys) -> None:
    assert main(["params", "07"]) == 2
    (err,) = capsys.readouterr().err.splitlines()
    assert err.startswith("tmnb: error: 07: notebook not found") and "03-readiness" in err


def test_notebooks_writes_copies_and_keeps_edits(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "mine"
    shipped = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert main(["notebooks", str(folder)]) == 0
    assert [p.read_bytes() for p in sorted(folder.iterdir())] == [p.read_bytes() for p in shipped]
    edited = folder / "05-compare.ipynb"
    edited.write_text("my edits")
    capsys.readouterr()
    assert main(["notebooks", str(folder)]) == 0
    assert f"kept {edited}" in capsys.readouterr().out.splitlines()
    assert edited.read_text() == "my edits"
    assert main(["notebooks", str(folder), "--force"]) == 0
    assert edited.read_bytes() == (ROOT / "notebooks" / "05-compare.ipynb").read_bytes()


def test_help_says_what_the_demo_does_and_where_parameters_are_listed(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    top = " ".join(capsys.readouterr().out.split())
    assert "read-only" not in top and "a canary rollout executed on the twin" in top
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "tmnb params NOTEBOOK lists a notebook's parameters" in capsys.readouterr().out


def test_run_as_kubectl_tmnb_the_usage_says_kubectl_tmnb(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setattr(sys, "argv", ["/home/sre/.local/bin/kubectl-tmnb", "run", "--help"])
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert capsys.readouterr().out.startswith("usage: kubectl tmnb run ")
