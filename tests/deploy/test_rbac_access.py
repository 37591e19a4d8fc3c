"""The shipped roles against what tmnb really calls: a live collection and a rollout on the sandbox,
read back from its access log. Every request must be authorized by the ServiceAccount's roles, and
every rule those roles grant must have been used: nothing missing, nothing extra."""

from __future__ import annotations

from pathlib import Path

from rollout.test_rollout_sandbox import box_fixture, kubeconfig_fixture, rollout
from tmnb.cli.main import main
from tmnb.twin.sandbox import Sandbox

from .rbac import allowing, calls, grants

__all__ = ["box_fixture", "kubeconfig_fixture"]


def log_lines(box: Sandbox) -> int:
    access = box.run_dir / "access.log"
    return len(access.read_text().splitlines()) if access.exists() else 0


def test_collector_and_rollout_roles_match_the_calls_exactly(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    access = box.run_dir / "access.log"
    start = log_lines(box)
    out = str(tmp_path / "s.json")
    assert main(["snapshot", "--source", "live", "--kubeconfig", str(kubeconfig), "--out", out]) == 0
    collected = calls(access, start)
    collector = grants("tmnb-collector", "collector-rbac.yaml")
    assert {c for c in collected if not allowing(collector, c)} == set()
    assert {r for r in collector if not any(allowing({r}, c) for c in collected)} == set()

    start = log_lines(box)
    change = ("--change-id", "rbac", "--set", "topologyManagerPolicy=best-effort", "--drain", "always")
    code = rollout(kubeconfig, tmp_path / "state", *change, "--test-namespace", "tmnb", "--approve", "canary",
                   "--approve", "wave-1")  # fmt: skip
    assert code == 0
    rolled = calls(access, start)
    assert any(c.resource == "pods/eviction" for c in rolled)  # the drain ran, so its grant is exercised
    rollout_rules = grants("tmnb-rollout", "collector-rbac.yaml", "rollout-rbac.yaml")
    assert {c for c in rolled if not allowing(rollout_rules, c)} == set()
    own = {r for r in rollout_rules if r.role.startswith("tmnb-rollout")}
    assert {r for r in own if not any(allowing({r}, c) for c in rolled)} == set()
    assert {r.namespace for r in own if r.resource == "pods"} == {"tmnb"}  # the test pod's rights are namespaced
