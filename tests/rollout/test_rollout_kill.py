"""The kernel of a scheduled 04-rollout run killed in the middle of a node's change, then the same
command run again: it resumes from the journal to a consistent end (the node at the target in its
file and in configz, uncordoned, one backup, one done record, the lock released).

One change of two nodes takes both kills: the first run is killed at the canary's apply (w1); the
same command resumes w1, carries it out and goes on to wave-1, where it is killed in w3's
verification; the third run resumes w3 and completes the change."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tmnb.rollout.journal import Journal
from tmnb.twin.sandbox import Sandbox

from .test_rollout_sandbox import config
from .user_shell import box_fixture, command_04, env_fixture, start, state  # noqa: F401  (fixtures)

pytestmark = pytest.mark.notebook


def _children(pid: int) -> dict[int, int]:
    """Every process's parent, from /proc."""
    parents = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    return parents


def _kernel_of(pid: int) -> int | None:
    """The kernel process below ``pid`` (papermill's kernel, which the runner starts), if it has started."""
    parents = _children(pid)
    below = {pid}
    for _ in range(6):
        below |= {p for p, parent in parents.items() if parent in below}
    for p in sorted(below):
        try:
            cmdline = Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            continue
        if b"ipykernel" in cmdline:
            return p
    return None


def _kill_at(env: dict[str, str], command: str, journal: Path, node: str, step: str) -> list[dict[str, object]]:
    """Run ``command`` and kill its kernel as soon as the journal has ``step``'s intent on ``node``;
    the journal's records of ``node`` at that moment."""
    child = start(command, env)
    kernel = None
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            kernel = kernel or _kernel_of(child.pid)  # found before the step, the kill follows the intent at once
            found = [r for r in Journal(journal, "x").records() if r.get("node") == node] if journal.exists() else []
            if any(r.get("step") == step and r.get("event") == "intent" for r in found):
                kernel = kernel or _kernel_of(child.pid)
                assert kernel is not None
                os.kill(kernel, signal.SIGKILL)
                return found
            assert child.poll() is None, "the run ended before the kill"
            time.sleep(0.005)
        pytest.fail(f"no {step} intent on {node} within 300 s")
    finally:
        assert child.wait(timeout=300) != 0  # the runner reports the dead kernel


def _resumed_to_a_consistent_end(box: Sandbox, journal: Path, change: str, node: str, step: str) -> None:
    """``node``, killed at ``step`` by an earlier run, done by a later one: at the target, uncordoned,
    one backup, ``step`` and the node done once."""
    assert config(box, node)["topologyManagerPolicy"] == "best-effort"
    assert box.cluster.configz(node)["kubeletconfig"]["topologyManagerPolicy"] == "best-effort"
    assert not box.cluster.get("nodes", "", node)["spec"].get("unschedulable")
    records = [r for r in Journal(journal, change).records() if r.get("node") == node]
    done = [r["step"] for r in records if r["event"] == "done"]
    assert done.count("backup") == 1 and done.count("node") == 1 and done.count(step) == 1
    assert [r["result"] for r in records if r["step"] == "node"] == ["done"]


def _killed_before_the_next_step(
    journal: Path, change: str, seen: list[dict[str, object]], node: str, step: str
) -> None:
    assert not any(r.get("step") == "node" for r in seen)  # killed before the node was done
    after = [(r["step"], r["event"]) for r in Journal(journal, change).records() if r.get("node") == node]
    following = {"apply": "start", "verify": "uncordon"}[step]
    assert (following, "intent") not in after  # the kill came before the next step began
    if step == "verify":  # seconds long: the kill lands inside it
        assert after[-1] == ("verify", "intent")


def test_kernel_killed_mid_change_then_resumed_to_a_consistent_end(
    box: Sandbox, env: dict[str, str], tmp_path: Path
) -> None:
    change = "kill"
    params = {
        "change_id": change, "target": json.dumps({"topologyManagerPolicy": "best-effort"}),
        "nodes": json.dumps(["w1", "w3"]), "canary": "w1", "mode": "execute", "approve": "[canary, wave-1]",
    }  # fmt: skip
    journal = state(env, change) / "journal.jsonl"
    seen = _kill_at(env, command_04(tmp_path / "killed-1", **params), journal, "w1", "apply")
    _killed_before_the_next_step(journal, change, seen, "w1", "apply")
    seen = _kill_at(env, command_04(tmp_path / "killed-2", **params), journal, "w3", "verify")
    _killed_before_the_next_step(journal, change, seen, "w3", "verify")
    _resumed_to_a_consistent_end(box, journal, change, "w1", "apply")
    assert start(command_04(tmp_path / "resumed", **params), env).wait() == 0
    _resumed_to_a_consistent_end(box, journal, change, "w3", "verify")
    assert not journal.with_suffix(".lock").exists()
    assert not [p for p in box.cluster.items("pods") if p["metadata"]["name"].startswith("tmnb-verify-")]
    manifest = json.loads((tmp_path / "resumed" / "manifest.json").read_text())
    assert manifest["results"]["rollout"]["status"] == "completed"
