"""Printed commands mean in a shell what the report meant: each value comes back from ``shlex.split``
and ``tmnb run``'s typing exactly as given, whatever it holds, and each names a real subcommand,
notebook and parameter (``printed_commands.problems``)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from printed_commands import problems
from tmnb.cli.run.params import coerce
from tmnb.report.commands import command, parameters

#: (declared type, value): values a shell or a YAML reader would change if written as they are
ROUND_TRIPS: list[tuple[str, Any]] = [
    ("str", "two words"),
    ("str", "it's"),
    ("str", 'say "hi"'),
    ("str", "$HOME `id` $(id) ; rm -rf x &"),
    ("str", "1.30"),
    ("str", "007"),
    ("str", "true"),
    ("str", ""),
    ("str", "kubernetes.io/hostname in (a,b)"),
    ("dict", {"kubeletVersion": "1.30"}),
    ("dict", {"kubeletVersion": "1.37", "topologyManagerPolicy": "single-numa-node"}),
    ("dict", {"a": "true", "b": "null", "c": "1e3", "d": "~", "e": "yes", "f": "0o17", "g": "", "h": "2026-01-01"}),
    ("dict", {"1.30": "key", "null": None, "<<": "merge"}),
    ("dict", {"it's": "a: b, c", "x": '"q" \\ $y', "z": "#no comment", "w": "[not, a, list]", "é": "ünï"}),
    ("dict", {"topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}, "n": [1, 2.5, True, None]}),
    ("dict", {"soak": {"minutes": 10, "threshold_pct": 5.0, "metrics_file": "/m.csv"}, "big": 1e20}),
    ("dict", {}),
    ("list", []),
    ("list", ["a", "1.30", "true", "two words", ["nested"]]),
    ("bool", True),
    ("bool", False),
    ("int", 5),
    ("float", 2.5),
]


@pytest.mark.parametrize(("kind", "value"), ROUND_TRIPS, ids=[repr(v)[:40] for _, v in ROUND_TRIPS])
def test_a_value_comes_back_from_the_shell_and_tmnb_run_as_given(kind: str, value: Any) -> None:
    words = shlex.split(command("run", "03-readiness", params={"name": value}))
    assert words[:5] == ["tmnb", "run", "03-readiness", "-p", "name"] and len(words) == 6
    assert coerce("name", words[5], {"type": kind}, source="test") == value


def test_strings_yaml_would_read_as_something_else_stay_quoted() -> None:
    text = shlex.split(command("run", "04-rollout", params={"target": {"v": "1.30", "b": "true", "e": "1e3"}}))[-1]
    assert text == '{v: "1.30", b: "true", e: "1e3"}'


def test_words_options_and_paths() -> None:
    relative = Path("some/where")
    assert command("rollout", "status", change_id="c 1", state_dir=relative) == (
        f"tmnb rollout status --change-id 'c 1' --state-dir {shlex.quote(str(relative.resolve()))}"
    )
    assert command("evidence", "pack", relative, out=Path("b.tar.gz"), force=True, with_node_secrets=False) == (
        f"tmnb evidence pack {shlex.quote(str(relative.resolve()))} --out "
        f"{shlex.quote(str(Path('b.tar.gz').resolve()))} --force"
    )
    assert command("rollout", "execute", change_id="c", approve=["resume", "wave-1"], context=None) == (
        "tmnb rollout execute --change-id c --approve resume --approve wave-1"
    )
    assert command("run", "06-postmortem", params={"evidence": relative, "out_dir": None}) == (
        f"tmnb run 06-postmortem -p evidence {shlex.quote(str(relative.resolve()))}"
    )
    assert parameters(mode="execute", approve=["canary"]) == "-p mode execute -p approve '[canary]'"


@pytest.mark.parametrize(
    ("printed", "wrong"),
    [
        ("tmnb run notebooks/04-rollout.ipynb -p mode plan", "is a path"),
        ("tmnb run 04-rollout -p mode go", "expected one of plan, execute"),
        ("tmnb run 04-rollout -p nodez '[a]'", "unknown parameter 'nodez'"),
        ("tmnb run 04-rollout -p target '{kubeletVersion: '1.30'}'", "kubeletVersion types back to 1.3"),
        ("tmnb run 03-readiness -p target '{cpuManagerPolicyOptions: {full-pcpus-only: 'true'}}'", "JSON bool"),
        ("tmnb run 07-nothing", "notebook not found"),
        ("tmnb rollout status --change-id c --state-dir rel", "state_dir rel is not absolute"),
        ("tmnb rollout stat --change-id c", "tmnb refuses"),
        ("tmnb rollout status --change-id c --frobnicate", "unrecognized arguments"),
        ("tmnb run 06-postmortem -p evidence reports/x", "-p evidence reports/x is not absolute"),
        ("tmnb run 01-inventory && kubectl get nodes", "not a tmnb command"),
    ],
)
def test_the_check_finds_what_would_not_run(printed: str, wrong: str) -> None:
    """The check of printed commands can fail, on each thing it checks."""
    assert any(wrong in p for p in problems(printed)), problems(printed)


def test_rollout_and_sandbox_commands_of_the_cli_parse(tmp_path: Path) -> None:
    from tmnb.rollout.journal import rollback_command

    for folder in (None, tmp_path / "state"):
        assert problems(rollback_command("c1", "w1", folder).strip("`")) == []
    assert problems(command("sandbox", "down", run_dir=tmp_path)) == []
