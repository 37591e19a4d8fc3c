"""One validated request for a rollout run, and the one registry of executors every entry reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tmnb.errors import InputError
from tmnb.rollout.executors import EXECUTORS, words
from tmnb.rollout.request import REQUEST, RolloutRequest, from_notebook, stored_request

TARGET = {"topologyManagerPolicy": "restricted"}


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"change_id": "Bad_Id"}, "change_id: expected a DNS-1123 name"),
        ({"target": ["x"]}, "target: expected a mapping of KubeletConfiguration fields"),
        ({"mode": "apply"}, r"mode: expected plan or execute, got 'apply'"),
        ({"executor": "rsh"}, r"executor: expected dry-run, local, ssh, node-pod or sandbox, got 'rsh'"),
        ({"apply": "patch"}, r"apply: expected auto, edit or drop-in, got 'patch'"),
        ({"drain": "maybe"}, r"drain: expected auto, always or never, got 'maybe'"),
        ({"nodes": "w1"}, r"nodes: expected a list of node names, got 'w1'"),
        ({"waves": "2"}, r"waves: expected a wave size or a list of waves"),
        ({"waves": [["w1"], "w2"]}, r"waves: expected a list of node names, got 'w2'"),
        ({"pause": -1}, r"pause: expected a number of seconds, at least 0, got -1"),
        ({"context": None}, r"context: expected a string, got None"),
        (
            {"mode": "execute", "executor": "dry-run"},
            r"executor: mode='execute' writes through an executor: choose local, ssh, node-pod or sandbox",
        ),
    ],
)
def test_a_bad_field_is_refused_naming_it(fields: dict[str, object], message: str) -> None:
    with pytest.raises(InputError, match=message):
        RolloutRequest(**{"change_id": "c1", "target": TARGET, **fields})  # type: ignore[arg-type]


def test_the_stored_request_is_the_change_and_a_resume_takes_it(tmp_path: Path) -> None:
    first = RolloutRequest("c1", TARGET, source="sample", nodes=("w2", "w1"), state_dir=str(tmp_path), mode="execute",
                           executor="sandbox", approve=("canary",))  # fmt: skip
    first.store()
    stored = json.loads((tmp_path / REQUEST).read_text())
    assert stored == {
        "target": TARGET, "nodes": ["w1", "w2"], "node_selector": "", "source": "sample", "executor": "sandbox",
        "apply": "auto", "drain": "auto",
    }  # fmt: skip
    assert stored_request(tmp_path) == stored
    resumed = RolloutRequest("c1", {}, state_dir=str(tmp_path), mode="execute", executor="sandbox").resumed(stored)
    assert (resumed.target, resumed.nodes, resumed.source) == (TARGET, ("w1", "w2"), "sample")
    resumed.check_same_change()  # the same change: no refusal
    other = RolloutRequest("c1", TARGET, source="sample", nodes=("w3",), state_dir=str(tmp_path), executor="sandbox")
    with pytest.raises(InputError, match=r'change c1 was run with nodes=\["w1", "w2"\], not nodes=\["w3"\]'):
        other.check_same_change()


def test_a_damaged_stored_request_is_named(tmp_path: Path) -> None:
    (tmp_path / REQUEST).write_text('{"target": {}}')
    with pytest.raises(InputError, match=r"request\.json: not a change request \(expected target, nodes"):
        stored_request(tmp_path)


def test_the_notebook_builds_the_same_request_as_its_parameters_say() -> None:
    request = from_notebook(
        {"drain_timeout": 60, "override": ["w4"]}, change_id="c1", target=TARGET, nodes=["w1"], executor="ssh"
    )
    assert (request.steps.drain_timeout, request.override, request.nodes, request.executor) == (
        60.0, ("w4",), ("w1",), "ssh",
    )  # fmt: skip
    with pytest.raises(InputError, match="parameters: not a rollout parameter: 'executor_opts'"):
        from_notebook(change_id="c1", target=TARGET, executor_opts={})


def test_the_command_line_and_the_notebook_offer_the_registrys_executors(capsys: pytest.CaptureFixture[str]) -> None:
    from tmnb.cli.main import main
    from tmnb.cli.run.params import declared_parameters

    for verb in ("plan", "execute", "rollback"):
        with pytest.raises(SystemExit):
            main(["rollout", verb, "--change-id", "c1", "--executor", "rsh"])
        err = capsys.readouterr().err
        assert "invalid choice: 'rsh' (choose from 'dry-run', 'local', 'ssh', 'node-pod', 'sandbox')" in err
    notebook = declared_parameters(Path(__file__).parents[2] / "notebooks" / "04-rollout.ipynb")
    assert notebook["executor"]["choices"] == list(EXECUTORS)


def test_what_each_executor_can_do() -> None:
    """Hand-worked from what each reaches: a dry run touches nothing; a node pod needs a running
    kubelet for every later command, so it cannot stop one."""
    can = {k.word: (k.reads, k.writes, k.stops) for k in EXECUTORS.values()}
    assert can == {
        "dry-run": (False, False, False),
        "local": (True, True, True),
        "ssh": (True, True, True),
        "node-pod": (True, True, False),
        "sandbox": (True, True, True),
    }
    assert words(lambda k: k.writes and not k.stops) == "node-pod"
    assert words(lambda k: k.stops) == "local, ssh or sandbox"


def test_the_plan_says_how_the_change_survives_kubeadm_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sample's kubeadm pools: the printed plan ends with the kubeadm patch, where it will be and how
    kubeadm takes it; plan mode writes nothing (the patch is written with the plan at the first execute run)."""
    from tmnb.cli.main import main

    state = tmp_path / "state"
    argv = ["rollout", "plan", "--change-id", "c1", "--source", "sample", "--set", "topologyManagerPolicy=best-effort"]
    assert main([*argv, "--node", "gen-icx-01", "--state-dir", str(state)]) == 0
    out = capsys.readouterr().out
    patch = state / "kubeadm-patches" / "kubeletconfiguration+strategic.yaml"
    assert out.endswith(
        f"# kubeadm patch for gen-icx-01: {patch} (written with the plan at the first execute run; the directory "
        "kubeadm-patches/ is what `--patches` takes)\n"
        "kubeadm writes /var/lib/kubelet/config.yaml again at the next `kubeadm upgrade node`, dropping this edit: "
        "copy kubeadm-patches/kubeletconfiguration+strategic.yaml (written beside the change's journal) into a "
        "directory on the node and pass it to every `kubeadm upgrade node` (and `kubeadm join`) as `--patches DIR`, "
        "or set the same fields in the kube-system/kubelet-config ConfigMap.\n"
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntopologyManagerPolicy: best-effort\n\n"
    )
    assert not state.exists()


def test_a_dry_run_plans_a_change_that_moves_state_files(capsys: pytest.CaptureFixture[str]) -> None:
    """Only an executor that writes and cannot stop the kubelet (node-pod) is refused such a change; a
    dry run plans it for whichever executor will carry it out."""
    from tmnb.cli.main import main

    argv = ["rollout", "plan", "--change-id", "c1", "--source", "sample", "--node", "gen-icx-03"]
    assert main([*argv, "--set", "cpuManagerPolicy=none"]) == 0
    assert "/var/lib/kubelet/cpu_manager_state" in capsys.readouterr().out


def test_the_command_line_lists_the_registries_without_loading_what_they_name() -> None:
    """--executor and --apply take their choices from the registries when the parser is built: that must
    not load the executors' clients, the snapshot model or the YAML round trip (a typo is answered at once)."""
    import subprocess
    import sys

    probe = "import sys, tmnb.cli.main; print(sorted(m for m in sys.argv[1:] if m in sys.modules))"
    heavy = ["kubernetes", "httpx", "pydantic", "ruamel.yaml", "tmnb.snapshot", "tmnb.rollout.executors.sandbox"]
    done = subprocess.run([sys.executable, "-c", probe, *heavy], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"
