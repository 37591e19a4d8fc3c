"""Fault injection, and ``tmnb sandbox up --background`` / ``down`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from sandbox_fixtures import call, kubeconfig_fixture, kubectl_fixture, sandbox_fixture, twin  # noqa: F401  (fixtures)

from conftest import require_tool
from tmnb.cli.main import main
from tmnb.errors import InputError, TmnbError
from tmnb.snapshot import save
from tmnb.twin.sample import generate_fleet
from tmnb.twin.sandbox import Faults, Sandbox
from tmnb.twin.sandbox.process import load_snapshot, parse_rates, stop


def test_error_rate_by_path_and_throttling(sandbox: Sandbox, kubeconfig: Path) -> None:
    status, _ = call(sandbox, kubeconfig, "PUT", "/sandbox/v1/faults", {"errorRates": {"/api/v1/nodes": 1.0}})
    assert status == 200
    code, body = call(sandbox, kubeconfig, "GET", "/api/v1/nodes")
    assert code == 500 and json.loads(body)["reason"] == "InternalError"
    assert call(sandbox, kubeconfig, "GET", "/api/v1/pods")[0] == 200
    call(sandbox, kubeconfig, "PUT", "/sandbox/v1/faults", {"throttleRate": 1.0})
    code, body = call(sandbox, kubeconfig, "GET", "/api/v1/pods")
    assert code == 429 and json.loads(body)["details"] == {"retryAfterSeconds": 1}
    call(sandbox, kubeconfig, "PUT", "/sandbox/v1/faults", {"latency": 0.3})
    started = time.monotonic()
    assert call(sandbox, kubeconfig, "GET", "/api/v1/pods")[0] == 200
    assert time.monotonic() - started >= 0.3


def test_kubectl_retries_throttled_requests(sandbox: Sandbox, kubectl) -> None:  # type: ignore[no-untyped-def]
    # seed 3 draws 0.238 first: the very first request is throttled whether or not kubectl's discovery
    # cache (shared by every test) saves it the other requests, and the retry (0.37) goes through.
    # Retry-After 0: with the API server's 1 kubectl waits 5 s before going on (the 1 itself is
    # checked in test_error_rate_by_path_and_throttling)
    sandbox.api.set_faults(Faults(throttle_rate=0.25, seed=3, retry_after=0))
    assert kubectl("get", "nodes", "-o", "name").stdout.split() == ["node/w1", "node/w2"]
    assert " 429\n" in (sandbox.run_dir / "access.log").read_text()


def test_a_node_that_never_comes_back_with_a_changed_config(sandbox: Sandbox, kubeconfig: Path) -> None:
    call(sandbox, kubeconfig, "PUT", "/sandbox/v1/faults", {"neverReady": ["w2"]})
    code, body = call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w2/restart")
    assert json.loads(body)["ready"] is True  # the configuration it started with still works
    config = sandbox.cluster.kubelets["w2"].root / "var/lib/kubelet/config.yaml"
    original = config.read_bytes()
    config.write_bytes(original + b"maxPods: 90\n")
    code, body = call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w2/restart")
    assert code == 200 and json.loads(body)["ready"] is False
    node = json.loads(call(sandbox, kubeconfig, "GET", "/api/v1/nodes/w2")[1])
    assert [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"] == ["Unknown"]
    config.write_bytes(original)  # a rollback to the same bytes brings it back
    assert json.loads(call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w2/restart")[1])["ready"] is True


def test_a_kubelet_that_disagrees_rejects_new_pods_only(sandbox: Sandbox) -> None:
    sandbox.api.set_faults(Faults(reject_pods={"w2"}))
    body = {
        "metadata": {"name": "probe"},
        "spec": {
            "nodeName": "w2",
            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                                       "limits": {"cpu": "1", "memory": "1Gi"}}}],
        },
    }  # fmt: skip
    created = sandbox.cluster.create_pod("app", body)
    assert created["status"]["phase"] == "Pending"  # the create answer predates the kubelet's verdict
    probe = sandbox.cluster.get("pods", "app", "probe")
    assert probe["status"]["phase"] == "Failed" and probe["status"]["reason"] == "TopologyAffinityError"
    assert sandbox.cluster.restart_kubelet("w2") is None
    assert all(
        p["status"]["phase"] != "Failed" for p in sandbox.cluster.items("pods") if p["metadata"]["name"] != "probe"
    )


def _probe(sandbox: Sandbox, name: str, node: str) -> dict:  # type: ignore[type-arg]
    """A Guaranteed pod of one whole core (2 CPUs) created on ``node``, as its kubelet decided it."""
    resources = {"cpu": "2", "memory": "1Gi"}
    body = {"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [
        {"name": "c", "resources": {"requests": resources, "limits": resources}}]}}  # fmt: skip
    sandbox.cluster.create_pod("app", body)
    return sandbox.cluster.get("pods", "app", name)


def test_a_kubelet_deviates_from_the_model_once_restarted_with_a_changed_config(
    sandbox: Sandbox, kubeconfig: Path
) -> None:
    """Worked by hand from the twin: NUMA node 0 holds CPUs 0-3 and 8-11, 0 and 8 are reserved; on w1 the
    cache pod holds CPU 1 and the web replicas 2,10 and 3,11, so 9 is NUMA node 0's only free CPU; w2 runs
    no pinned pod, so the model gives a pod of one whole core the first free core, 1,9, and the next is 2,10."""
    status, body = call(sandbox, kubeconfig, "PUT", "/sandbox/v1/faults", {"deviate": {"w1": "repin", "w2": "cpuset"}})
    assert status == 200 and json.loads(body)["deviate"] == {"w1": "repin", "w2": "cpuset"}
    roots = {n: sandbox.cluster.kubelets[n].root for n in ("w1", "w2")}
    state = roots["w1"] / "var/lib/kubelet/cpu_manager_state"
    started = state.read_bytes()
    assert (
        sandbox.cluster.restart_kubelet("w1") is None and state.read_bytes() == started
    )  # its own config: no deviation
    assert _probe(sandbox, "before", "w2")["metadata"]["annotations"] == {"sandbox.tmnb.dev/cpuset": "c=1,9"}
    sandbox.cluster.delete_pod("app", "before")
    for root in roots.values():
        config = root / "var/lib/kubelet/config.yaml"
        config.write_bytes(config.read_bytes() + b"maxPods: 90\n")
    assert sandbox.cluster.restart_kubelet("w1") is None and sandbox.cluster.restart_kubelet("w2") is None
    assert json.loads(state.read_text())["entries"] == {
        "uid-cache-7f6b8-ccccc": {"main": "9"},  # re-pinned at the restart; the model keeps a running pod's CPUs
        "uid-web-5d9c7-aaaaa": {"main": "2,10"},
        "uid-web-5d9c7-bbbbb": {"main": "3,11"},
    }
    cache = sandbox.cluster.get("pods", "app", "cache-7f6b8-ccccc")
    assert cache["status"]["phase"] == "Running" and cache["metadata"]["annotations"] == {
        "sandbox.tmnb.dev/cpuset": "main=9"
    }
    assert _probe(sandbox, "after", "w2")["metadata"]["annotations"] == {"sandbox.tmnb.dev/cpuset": "c=2,10"}
    sandbox.cluster.delete_pod("app", "after")
    sandbox.api.set_faults(Faults(deviate={"w2": "reject"}))
    rejected = _probe(sandbox, "rejected", "w2")
    assert rejected["status"]["phase"] == "Failed" and rejected["status"]["reason"] == "TopologyAffinityError"


def test_fault_rates_are_validated() -> None:
    with pytest.raises(InputError):
        Faults(throttle_rate=1.5)
    assert parse_rates(["/api/v1/pods=0.25"]) == {"/api/v1/pods": 0.25}
    with pytest.raises(InputError):
        parse_rates(["pods=x"])
    with pytest.raises(InputError, match="node w1: unknown deviation 'cpus': expected cpuset, reject, repin"):
        Faults(deviate={"w1": "cpus"})


def test_cli_up_background_then_down(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    kubectl_bin = require_tool("kubectl")
    run_dir, kubeconfig_file = tmp_path / "run", tmp_path / "kc"
    snapshot = tmp_path / "twin.json"
    save(twin(), snapshot)
    argv = ["sandbox", "up", "--from", str(snapshot), "--kubeconfig", str(kubeconfig_file), "--run-dir", str(run_dir)]
    assert main([*argv, "--background"]) == 0
    state = json.loads((run_dir / "sandbox.json").read_text())
    try:
        assert f"pid {state['pid']}" in capsys.readouterr().out
        got = subprocess.run(
            [kubectl_bin, "--kubeconfig", str(kubeconfig_file), "get", "nodes", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        assert got.stdout.split() == ["node/w1", "node/w2"]
        assert main([*argv, "--background"]) == 2  # one sandbox per run directory
        assert f"already running from this directory (pid {state['pid']}, {state['url']})" in capsys.readouterr().err
        assert json.loads((run_dir / "sandbox.json").read_text()) == state  # the first one is untouched
        assert main(["sandbox", "down", "--run-dir", str(run_dir)]) == 0
        assert not (run_dir / "sandbox.json").exists()
        assert not kubeconfig_file.exists()  # its token died with the sandbox
        assert not (run_dir / "server.key").exists()
    finally:
        if (run_dir / "sandbox.json").exists():
            stop(run_dir)
    assert main(["sandbox", "down", "--run-dir", str(run_dir)]) == 2  # nothing left to stop


def test_cli_rejects_a_bad_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sandbox", "up", "--from", "nope", "--kubeconfig", str(tmp_path / "kc"), "--run-dir", str(tmp_path)]
    assert main(argv) == 2
    assert "unknown source 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "kc").exists()


def test_a_busy_port_is_a_clear_error(sandbox: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(TmnbError, match=f"cannot listen on 127.0.0.1:{sandbox.port}"):
        Sandbox(twin(), tmp_path / "second", port=sandbox.port).start()


def test_generated_nodes_source() -> None:
    assert [n.name for n in load_snapshot("ignored", 7).nodes] == [n.name for n in generate_fleet(7).nodes]
    with pytest.raises(InputError, match="at least 7 nodes"):
        load_snapshot("sample", 3)


def test_the_private_key_and_the_kubeconfig_do_not_outlive_the_sandbox(tmp_path: Path) -> None:
    box = Sandbox(twin(), tmp_path / "run").start()
    kubeconfig = box.write_kubeconfig(tmp_path / "run" / "kubeconfig")
    rewritten = box.write_kubeconfig(tmp_path / "mine.kubeconfig")
    rewritten.write_text("apiVersion: v1\nkind: Config\n")  # the user's own since: not the sandbox's to remove
    assert (tmp_path / "run" / "server.key").exists()
    box.stop()
    assert not (tmp_path / "run" / "server.key").exists()
    assert not kubeconfig.exists()
    assert rewritten.exists()
    assert (tmp_path / "run" / "server.crt").exists()  # public: kept with the evidence


def test_cli_down_on_a_garbage_state_file_and_up_with_an_unknown_node(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sandbox.json").write_text("garbage{")
    assert main(["sandbox", "down", "--run-dir", str(tmp_path)]) == 2
    assert "not a sandbox state file" in capsys.readouterr().err
    snapshot = tmp_path / "twin.json"
    save(twin(), snapshot)
    argv = ["sandbox", "up", "--from", str(snapshot), "--kubeconfig", str(tmp_path / "kc"), "--run-dir", str(tmp_path)]
    assert main([*argv, "--never-ready", "ghost"]) == 2
    assert "--never-ready: no node ghost in the sandbox's snapshot (it has w1, w2)" in capsys.readouterr().err
    assert main([*argv, "--deviate", "ghost=repin"]) == 2
    assert "--deviate: no node ghost in the sandbox's snapshot (it has w1, w2)" in capsys.readouterr().err
    assert main([*argv, "--deviate", "w1"]) == 2
    assert "--deviate: expected NODE=KIND, got 'w1'" in capsys.readouterr().err


def test_a_file_that_is_not_a_kubeconfig_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "kubeconfig"
    bad.write_text("root:x:0:0:root:/root:/bin/bash\n")
    assert main(["snapshot", "--source", "live", "--kubeconfig", str(bad), "--out", str(tmp_path / "s.json")]) == 2
    err = capsys.readouterr().err
    assert "cannot load kube context (current): not a kubeconfig" in err and "Traceback" not in err


def test_a_relative_run_dir_gives_absolute_node_roots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make demo` passes reports/...: the rollout's executors refuse relative node paths."""
    monkeypatch.chdir(tmp_path)
    with Sandbox(twin(), Path("rel") / "run") as box:
        assert box.run_dir == tmp_path / "rel" / "run"
        assert all(k.root is not None and k.root.is_absolute() for k in box.cluster.kubelets.values())
