"""The node-pod executor: the pod's manifest and quoting, and its create → wait → log → delete
cycle against a loopback API server that runs the pod's own command (minus nsenter: a test
cannot enter PID 1's namespaces). The sandbox cannot host this round trip: its pods run nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from sources.apiserver import ApiServer, FakeApi
from tmnb.errors import RolloutError
from tmnb.rollout.executors import make_executor
from tmnb.rollout.executors.node_pod import NSENTER, NodePodExecutor
from tmnb.rollout.ops import command_for
from tmnb.sources.cluster import connect

from .test_local import HOSTILE


def test_manifest() -> None:
    ex = NodePodExecutor(None, "w7", namespace="tmnb", timeout=90)  # type: ignore[arg-type]
    argv = command_for("write", "/etc/it's $(x)", mode=0o644)
    m = ex.manifest(argv, b"data\x00\xff", "write")
    spec = m["spec"]
    assert (spec["nodeName"], spec["hostPID"], spec["restartPolicy"]) == ("w7", True, "Never")
    assert spec["tolerations"] == [{"operator": "Exists"}]
    assert spec["automountServiceAccountToken"] is False and spec["activeDeadlineSeconds"] == 90
    (c,) = spec["containers"]
    assert c["securityContext"] == {"privileged": True}
    assert c["command"][:2] == ["sh", "-c"] and c["command"][3] == "tmnb-node-op"
    # nsenter, then the node-side argv word for word: no shell string is built from a path
    assert c["command"][4:] == [*NSENTER, *argv] and NSENTER == (
        "nsenter",
        "-t",
        "1",
        "-m",
        "-u",
        "-i",
        "-n",
        "-p",
        "--",
    )
    assert "/etc/it's" not in c["command"][2]
    assert c["env"] == [{"name": "TMNB_STDIN", "value": base64.b64encode(b"data\x00\xff").decode()}]
    assert not c["resources"]["limits"]["cpu"].isdigit()  # never Guaranteed: takes no exclusive CPUs
    assert m["metadata"]["annotations"] == {"tmnb.dev/node": "w7", "tmnb.dev/operation": "write"}
    with pytest.raises(RolloutError, match="too much to pass through a pod spec"):
        ex.manifest(argv, b"x" * (1 << 20), "write")


class PodApi:
    """Pods as the API server and a kubelet would run them: POST runs the container's command
    (nsenter removed, the env passed), status reports Running once then the exit, log returns the output."""

    def __init__(self, broken: bool = False) -> None:
        self.broken = broken
        self.pods: dict[str, tuple[dict, subprocess.CompletedProcess]] = {}
        self.deleted: list[str] = []
        self.reads = 0

    def __call__(self, method: str, path: str, body: bytes):  # type: ignore[no-untyped-def]
        base = "/api/v1/namespaces/tmnb/pods"
        if method == "POST" and path == base:
            pod = json.loads(body)
            name = f"{pod['metadata']['generateName']}{len(self.pods)}"
            pod["metadata"] |= {"name": name, "uid": f"uid-{name}"}
            (c,) = pod["spec"]["containers"]
            command = list(c["command"])
            assert command[4 : 4 + len(NSENTER)] == list(NSENTER)
            del command[4 : 4 + len(NSENTER)]
            if self.broken:  # what a node without nsenter's privileges prints
                command = ["sh", "-c", "echo 'nsenter: cannot open /proc/1/ns/mnt: Permission denied'; exit 1"]
            env = os.environ | {e["name"]: e["value"] for e in c["env"]}
            self.pods[name] = (pod, subprocess.run(command, capture_output=True, env=env, timeout=60))
            return 201, pod
        name = path.removeprefix(base + "/").split("/")[0]
        if name not in self.pods:
            return None
        pod, done = self.pods[name]
        if method == "GET" and path.endswith("/status"):
            self.reads += 1
            phase = "Running" if self.reads % 2 else ("Succeeded" if done.returncode == 0 else "Failed")
            return 200, pod | {"status": {"phase": phase}}
        if method == "GET" and path.endswith("/log"):
            return 200, done.stdout + done.stderr
        if method == "DELETE":
            self.deleted.append(name)
            return 200, pod
        return None


def test_round_trip_through_pods(tmp_path: Path) -> None:
    pods = PodApi()
    with ApiServer(FakeApi(hook=pods)) as server:
        api, _ = connect(None, str(server.kubeconfig(tmp_path / "kc")))
        ex = make_executor("node-pod", "w1", api_client=api, namespace="tmnb", poll=0.01)
        config = str(tmp_path / "var/lib/kubelet/config.yaml")  # node paths: here, this host's
        data = b"kind: KubeletConfiguration\n\x00\xff binary too\n"
        assert ex.read(config) is None and ex.checksum(config) is None
        ex.write(config, data, 0o600)
        assert Path(config).read_bytes() == data and (Path(config).stat().st_mode & 0o7777) == 0o600
        assert ex.read(config) == data and ex.checksum(config) == hashlib.sha256(data).hexdigest()
        assert ex.move_aside(config, ".tmnb-c1") == config + ".tmnb-c1"
        ex.remove(config + ".tmnb-c1")
        for path in HOSTILE:
            hostile = str(tmp_path) + path
            ex.write(hostile, b"h", 0o644)
            assert ex.read(hostile) == b"h"
            ex.remove(hostile)
        (tmp_path / "dir").mkdir()
        with pytest.raises(
            RolloutError, match=r"^node w1: write .*/dir failed \(node pod in tmnb, exit 1\): tmnb: .* is a directory"
        ):
            ex.write(str(tmp_path / "dir"), b"x", 0o644)
        with pytest.raises(RolloutError, match="cannot stop the kubelet"):
            ex.kubelet("stop")
    assert sorted(pods.deleted) == sorted(pods.pods) == sorted(ex.created)  # every pod deleted, always
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["kc"]
    assert not list(tmp_path.rglob("PWNED*"))


def test_broken_pod_and_api_errors(tmp_path: Path) -> None:
    pods = PodApi(broken=True)
    with ApiServer(FakeApi(hook=pods)) as server:
        api, _ = connect(None, str(server.kubeconfig(tmp_path / "kc")))
        ex = NodePodExecutor(api, "w1", namespace="tmnb", poll=0.01)
        with pytest.raises(RolloutError, match=r"ended Failed without running the command: nsenter: cannot open"):
            ex.read("/etc/x")
        other = NodePodExecutor(api, "w1", namespace="forbidden", poll=0.01)
        with pytest.raises(
            RolloutError, match=r"^node w1: read \(node pod in forbidden\): cannot create the pod: HTTP 404"
        ):
            other.read("/etc/x")
    assert pods.deleted == list(pods.pods) == ["tmnb-rollout-0"]
