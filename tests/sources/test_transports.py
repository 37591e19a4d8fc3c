"""Transports: ssh argv and a real OpenSSH round trip on loopback; the node pod's manifest and its
create → wait → log → delete cycle against a loopback API server that runs the pod's own command."""

from __future__ import annotations

import dataclasses
import json
import shlex
import subprocess

import pytest

from conftest import require_tool
from factories import busy_snapshot
from sshd_server import free_port, sshd_fixture  # noqa: F401  (fixture)
from tmnb.errors import CollectError
from tmnb.sources.cluster import connect
from tmnb.sources.node import collect_node, script_args
from tmnb.sources.node_root import read_node_root
from tmnb.sources.transports import BEGIN, END, NodePodTransport, SshTransport, decode_bundle

from .apiserver import ApiServer, FakeApi
from .node_fixture import make_node_root


def test_ssh_argv_quotes_the_remote_command_once():
    t = SshTransport("node-1.example", user="ops", port=2222, options=("-J", "bastion"))
    args = ["-s", "2026-12-01 10:00:00", "-p", "/etc/it's here"]
    argv = t.argv(args)
    assert argv[:-2] == ["ssh", "-T", "-o", "BatchMode=yes", "-p", "2222", "-l", "ops", "-J", "bastion", "--"]
    assert argv[-2] == "node-1.example"
    assert shlex.split(argv[-1]) == ["sudo", "-n", "sh", "-s", "--", *args]
    hostile = SshTransport("-oProxyCommand=touch /tmp/x", sudo=False).argv([])
    assert hostile.index("--") < hostile.index("-oProxyCommand=touch /tmp/x")  # a host, never an option
    assert shlex.split(hostile[-1]) == ["sh", "-s", "--"]


def test_real_ssh_round_trip(sshd, tmp_path):
    port, options = sshd
    node = busy_snapshot().nodes[0]
    root = make_node_root(node, tmp_path / "w1")
    import getpass

    transport = SshTransport("127.0.0.1", user=getpass.getuser(), port=port, sudo=False, options=options)
    # Over ssh the script reads the node's own files; here the "node" is this host with a root prefix.
    bundle = collect_node(_Prefixed(transport, str(root)), "w1", timeout=60)
    want = read_node_root(root, name="w1")
    assert (bundle.node.cpus, bundle.node.numa) == (want.cpus, want.numa)
    assert bundle.node.kubelet.settings["cpuManagerPolicy"].value == "static"


@dataclasses.dataclass
class _Prefixed:
    """Run a transport's collector with ``-r ROOT`` (the script's own root prefix option)."""

    inner: SshTransport
    root: str

    def run(self, args, *, timeout):
        return self.inner.run(["-r", self.root, *args], timeout=timeout)


def test_ssh_failure_is_a_collect_error():
    transport = SshTransport("127.0.0.1", port=free_port(), options=("-F", "/dev/null", "-o", "ConnectTimeout=3"))
    require_tool("ssh")
    with pytest.raises(CollectError, match=r"ssh 127\.0\.0\.1: collector exited 255"):
        transport.run([], timeout=30)


def test_node_pod_manifest():
    t = NodePodTransport(api_client=None, node="w7", namespace="tmnb")  # type: ignore[arg-type]
    m = t.manifest(script_args(since="-2h"), timeout=90)
    spec = m["spec"]
    assert (spec["nodeName"], spec["hostPID"], spec["restartPolicy"]) == ("w7", True, "Never")
    assert spec["tolerations"] == [{"operator": "Exists"}]
    assert spec["automountServiceAccountToken"] is False and spec["activeDeadlineSeconds"] == 90
    (c,) = spec["containers"]
    assert c["securityContext"] == {"privileged": True}
    mounts = {v["name"]: v for v in c["volumeMounts"]}
    assert mounts["host"] == {"name": "host", "mountPath": "/host", "readOnly": True}
    assert {"name": "host", "hostPath": {"path": "/", "type": "Directory"}} in spec["volumes"]
    assert c["command"][:2] == ["sh", "-c"] and c["command"][2].startswith("#!/bin/sh")
    assert c["command"][3:] == ["collect_node.sh", "-r", "/host", "-c", "-b", "-s", "-2h", "-m", str(8 << 20), "-J",
                                str(256 << 10)]  # fmt: skip
    assert "cpu" not in c["resources"]["limits"] or not c["resources"]["limits"]["cpu"].isdigit()  # never Guaranteed


class PodApi:
    """Pods as the API server and a kubelet would handle the collector's: POST runs the pod's own
    command (with /host pointing at a fixture root, no chroot), GET status reports Running once and
    then the exit, GET log returns its stdout, DELETE removes it."""

    def __init__(self, root, fail: bool = False):
        self.root, self.fail = str(root), fail
        self.pods, self.deleted, self.status_reads = {}, [], 0

    def __call__(self, method, path, body):
        base = "/api/v1/namespaces/tmnb/pods"
        if method == "POST" and path == base:
            pod = json.loads(body)
            name = pod["metadata"]["generateName"] + "x1"
            pod["metadata"] |= {"name": name, "uid": "pod-uid"}
            command = list(pod["spec"]["containers"][0]["command"])
            at = command.index("-r")
            assert command[at : at + 3] == ["-r", "/host", "-c"]
            command[at : at + 3] = ["-r", self.root]  # the fixture root, read directly (no chroot)
            if self.fail:
                command = ["sh", "-c", "echo 'collect_node.sh: boom' >&2; echo boom; exit 3"]
            done = subprocess.run(command, capture_output=True, timeout=60)
            self.pods[name] = (pod, done)
            return 201, pod
        name = path.removeprefix(base + "/").split("/")[0]
        if name not in self.pods:
            return None
        pod, done = self.pods[name]
        if method == "GET" and path.endswith("/status"):
            self.status_reads += 1
            phase = "Running" if self.status_reads == 1 else ("Succeeded" if done.returncode == 0 else "Failed")
            return 200, pod | {"status": {"phase": phase}}
        if method == "GET" and path.endswith("/log"):
            return 200, done.stdout + done.stderr
        if method == "DELETE":
            self.deleted.append(name)
            return 200, pod
        return None


def test_node_pod_round_trip_deletes_the_pod(tmp_path):
    root = make_node_root(busy_snapshot().nodes[0], tmp_path / "w1")
    pods = PodApi(root)
    with ApiServer(FakeApi(hook=pods)) as server:
        client, _ = connect(None, str(server.kubeconfig(tmp_path / "kc")))
        transport = NodePodTransport(client, "w1", namespace="tmnb", poll=0.01)
        bundle = collect_node(transport, "w1", timeout=60)
        verbs = [(m, u.split("?")[0]) for m, u, _ in server.api.requests]
    assert bundle.node.numa == read_node_root(root, name="w1").numa
    assert pods.deleted == transport.created == ["tmnb-collect-x1"]
    assert verbs[0] == ("POST", "/api/v1/namespaces/tmnb/pods") and verbs[-1][0] == "DELETE"


def test_failed_node_pod_is_deleted_and_reported(tmp_path):
    pods = PodApi(tmp_path, fail=True)
    with ApiServer(FakeApi(hook=pods)) as server:
        client, _ = connect(None, str(server.kubeconfig(tmp_path / "kc")))
        transport = NodePodTransport(client, "w1", namespace="tmnb", poll=0.01)
        with pytest.raises(CollectError, match=r"collector pod tmnb-collect-x1 ended Failed: collect_node\.sh: boom"):
            transport.run([], timeout=30)
    assert pods.deleted == ["tmnb-collect-x1"]


def test_decode_bundle():
    assert decode_bundle(f"noise\n{BEGIN}\naGVs\nbG8=\n{END}\n", where="x") == b"hello"
    with pytest.raises(CollectError, match="markers missing"):
        decode_bundle("oops", where="x")
    with pytest.raises(CollectError, match="corrupt"):
        decode_bundle(f"{BEGIN}\n!!!\n{END}", where="x")
