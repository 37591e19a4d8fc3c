"""Every case file under tests/conformance/ answered by the runner must equal its ``expected``."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tmnb.conformance.runner import answer, main

CASE_DIR = Path(__file__).resolve().parent


def _load() -> list[dict]:
    cases = []
    for path in sorted(CASE_DIR.glob("*.jsonl")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.strip():
                case = json.loads(line)
                case["_where"] = f"{path.name}:{number}"
                cases.append(case)
    return cases


CASES = _load()


def test_case_files_present_and_ids_unique():
    kinds = {c["kind"] for c in CASES}
    assert kinds == {
        "merge",
        "options",
        "cpu_hints",
        "cpu_provider",
        "memory_hints",
        "device_hints",
        "admit",
        "node_replay",
        "node_restart",
    }
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    got = answer(case)
    assert got["id"] == case["id"]
    assert got["expected"] == case["expected"], case["_where"]


def test_runner_keeps_going_after_bad_lines():
    lines = [
        "not json",
        json.dumps({"id": "k", "kind": "nope", "input": {}}),
        json.dumps({"id": "m", "kind": "merge", "input": {"policy": "best-effort"}}),
        json.dumps(
            {"id": "b", "kind": "merge", "input": {"policy": "restricted", "numa_nodes": [0, 99], "providers": []}}
        ),
        json.dumps(CASES[0]),
    ]
    out = io.StringIO()
    assert main(io.StringIO("\n".join(lines) + "\n"), out) == 0
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [a["id"] for a in answers] == [None, "k", "m", "b", CASES[0]["id"]]
    assert "invalid JSON" in answers[0]["expected"]["runner_error"]
    assert "unknown kind 'nope'" in answers[1]["expected"]["runner_error"]
    assert "missing field 'providers'" in answers[2]["expected"]["runner_error"]
    assert "bit number must be in range 0-63" in answers[3]["expected"]["runner_error"]
    assert answers[4]["expected"] == CASES[0]["expected"]


def test_module_entry_point():
    case = next(c for c in CASES if c["kind"] == "merge")
    proc = subprocess.run(
        [sys.executable, "-m", "tmnb.kubelet.conformance"],
        input=json.dumps(case) + "\n",
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(proc.stdout) == {"id": case["id"], "expected": case["expected"]}


def test_the_entry_point_ends_quietly_when_its_reader_stops():
    """``python -m tmnb.kubelet.conformance < cases | head -1``: no traceback on the closed pipe."""
    cases = "".join(json.dumps(c) + "\n" for c in CASES if c["kind"] == "merge") * 20
    shell = f"{sys.executable} -m tmnb.kubelet.conformance | head -1"
    proc = subprocess.run(["bash", "-c", shell], input=cases, capture_output=True, text=True, check=True)
    assert len(proc.stdout.splitlines()) == 1 and proc.stderr == ""


def test_node_restart_refuses_checkpoints_that_are_not_text():
    case = next(c for c in CASES if c["kind"] == "node_restart")
    broken = {**case, "input": {**case["input"], "checkpoints": {"cpu_manager_state": {"policyName": "none"}}}}
    assert "cpu_manager_state must be the file's text or null" in answer(broken)["expected"]["runner_error"]


def test_a_1_33_device_container_with_running_and_exited_ids_is_not_predicted():
    """1.33's isContainerAlreadyRunning asks the container map for one ID (Go map order): the answer
    depends on which of the two it gets."""
    case = next(c for c in CASES if c["id"] == "node_restart/devices/restarted-container-1.34")
    older = {**case, "input": {**case["input"], "version": "1.33"}}
    error = answer(older)["expected"]["runner_error"]
    assert error.startswith("not predicted: container main of pod uid-a has running and exited IDs")
