"""The node collector script, run for real by sh and dash on fixture node roots."""

from __future__ import annotations

import dataclasses
import gzip
import io
import json
import os
import subprocess
import tarfile

import pytest

from conftest import require_tool
from factories import layered_node
from tmnb.errors import CollectError
from tmnb.sources.node import collect_node, collect_nodes, read_bundle
from tmnb.sources.node_root import read_node_root
from tmnb.sources.transports import LocalTransport

from .node_fixture import CONTAINER_IDS, CREDENTIALS, KUBELET_PID, SECRET, link, make_node_root

UIDS = {  # kubelet cgroup names carry real pod UIDs
    "u1": "6b1c0c2e-8a7e-4f38-9d7b-2a9a3c1e5f10",
    "u2": "fa9bdd38-6df9-4cf9-aa67-8c4814da37a8",
    "u3": "0d3f5a2b-1c4e-4b6a-9e8d-7f6a5b4c3d2e",
}


@pytest.fixture
def busy_node():
    node = layered_node()
    allocations = [dataclasses.replace(a, pod_uid=UIDS[a.pod_uid]) for a in node.allocations]
    return dataclasses.replace(node, allocations=allocations)


@pytest.fixture(params=["sh", "dash", "busybox"])
def shell(request, tmp_path, monkeypatch):
    """Every shell the script must run under: dash has no bash-isms to fall back on, and busybox
    (the node pod's image) has its own sh and its own small find/grep/sed/awk/tar."""
    path = require_tool(request.param)
    if request.param != "busybox":
        return path
    bindir = tmp_path / "busybox-bin"
    bindir.mkdir()
    applets = subprocess.run([path, "--list"], capture_output=True, text=True, check=True).stdout.split()
    for applet in applets:
        (bindir / applet).symlink_to(path)
    monkeypatch.setenv("PATH", str(bindir))  # nothing but busybox applets
    return str(bindir / "sh")


def members(raw: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        return {m.name.removeprefix("./"): tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def test_bundle_reads_back_as_the_node(busy_node, tmp_path, shell):
    root = make_node_root(busy_node, tmp_path / "w1")
    want = read_node_root(root, name="w1")
    bundle = collect_node(LocalTransport(str(root), shell=shell), "w1", timeout=60)
    got = bundle.node
    assert (got.cpus, got.numa, got.devices, got.shared_pool) == (want.cpus, want.numa, want.devices, want.shared_pool)
    assert {k: s.value for k, s in got.kubelet.settings.items()} == {
        k: s.value for k, s in want.kubelet.settings.items()
    }
    policy = got.kubelet.settings["topologyManagerPolicy"]
    assert (policy.value, policy.source) == ("single-numa-node", "flag")
    scope = got.kubelet.settings["topologyManagerScope"]
    assert (scope.value, scope.source, scope.detail) == (
        "pod",
        "dropin",
        "/etc/kubernetes/kubelet.conf.d/50-scope.conf",
    )
    exclusive = {(a.pod_uid, a.container, a.cpuset) for a in want.allocations}
    assert {(a.pod_uid, a.container, a.cpuset) for a in got.allocations} == exclusive
    assert [(f.manager, f.policy) for f in got.state_files] == [("cpu", "static"), ("memory", "Static")]
    files = members(bundle.raw)
    assert files["tmnb/kubelet.cmdline"].startswith(b"/usr/bin/kubelet\0")
    assert "var/lib/kubelet/cpu_manager_state" in files and "etc/kubernetes/kubelet.conf.d/50-scope.conf" in files
    assert "tmnb/cpusets-v2.txt" in files
    sources = {i.source for i in got.issues}
    assert "kubelet unit" not in sources  # the unit and the running command line agree
    assert {"lscpu", "journal", "crictl"} <= sources  # a fixture root has no live tools: said, not hidden
    assert all(i.severity == "info" for i in got.issues if i.source in {"lscpu", "journal", "crictl"})


def test_the_merged_node_keeps_the_state_files(busy_node, tmp_path):
    """--mode restart reads them from the snapshot: the API node completed by its bundle carries them."""
    from tmnb.sources.node import merge_node

    bundle = read_node_root(make_node_root(busy_node, tmp_path / "w1"), name="w1")
    merged = merge_node(dataclasses.replace(busy_node, state_files=[]), bundle)
    assert merged.state_files == bundle.state_files and len(merged.state_files) == 2


def test_credentials_are_refused_even_when_asked(busy_node, tmp_path, shell):
    root = make_node_root(busy_node, tmp_path / "w1")
    link(root, "etc/kubernetes/kubelet.conf.d/60-sneaky.conf", str(root / "etc/kubernetes/pki/ca.key"))
    argv = [*read_node_root(root, name="w1").kubelet.flags, "--config-dir=/etc/kubernetes"]
    (root / f"proc/{KUBELET_PID}/cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
    asked = ["/" + rel for rel in CREDENTIALS] + ["/etc/kubernetes/pki/../pki/ca.key", "/root/.ssh/id_ed25519"]
    bundle = collect_node(LocalTransport(str(root), shell=shell), "w1", extra_paths=asked, timeout=60)
    files = members(bundle.raw)
    assert not [name for name, data in files.items() if SECRET.encode() in data]
    assert SECRET.encode() not in gzip.decompress(bundle.raw)
    refused = {i.source for i in bundle.node.issues if i.message.startswith("refused")}
    assert {"/" + rel for rel in CREDENTIALS} <= refused
    assert "/etc/kubernetes/admin.conf" in refused  # found through --config-dir=/etc/kubernetes, still refused
    assert "/etc/kubernetes/kubelet.conf.d/60-sneaky.conf" in refused  # a drop-in linking to a key
    assert "etc/kubernetes/kubelet.conf.d/50-scope.conf" in files  # real drop-ins are still read


def test_running_command_line_beats_the_unit(busy_node, tmp_path):
    root = make_node_root(busy_node, tmp_path / "w1")
    unit_argv = read_node_root(root, name="w1").kubelet.flags
    running = [a.replace("single-numa-node", "restricted") for a in unit_argv] + ["--token=abc"]
    (root / f"proc/{KUBELET_PID}/cmdline").write_bytes(b"\0".join(a.encode() for a in running) + b"\0")
    node = collect_node(LocalTransport(str(root)), "w1", timeout=60).node
    policy = node.kubelet.settings["topologyManagerPolicy"]
    assert (policy.value, policy.source, policy.detail) == ("restricted", "flag", "--topology-manager-policy")
    assert "--token=<redacted>" in node.kubelet.flags and "--token=abc" not in node.kubelet.flags
    (warning,) = [i for i in node.issues if i.source == "kubelet unit"]
    assert warning.severity == "warning" and "not been restarted" in warning.message


def test_unparsable_command_line_keeps_the_unit_view(busy_node, tmp_path):
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / f"proc/{KUBELET_PID}/cmdline").write_bytes(b"/usr/bin/kubelet\0--max-pods=lots\0")
    node = collect_node(LocalTransport(str(root)), "w1", timeout=60).node
    assert node.kubelet.settings["topologyManagerPolicy"].value == "single-numa-node"  # from the unit
    (issue,) = [i for i in node.issues if i.source == "kubelet command line"]
    assert "lots" in issue.message


@pytest.mark.parametrize("cgroup", ["v2", "v1"])
def test_cgroup_cpusets_name_shared_containers_and_catch_drift(busy_node, tmp_path, cgroup):
    root = make_node_root(busy_node, tmp_path / "w1", cgroup=cgroup)
    (effective,) = root.glob(f"sys/fs/cgroup/**/*{CONTAINER_IDS['pg']}*/cpuset.*eff*")
    effective.write_text("1-3\n")  # not what cpu_manager_state says (1-2,9-10)
    raw = collect_node(LocalTransport(str(root)), "w1", timeout=60).raw
    files = members(raw)
    assert f"tmnb/cpusets-{cgroup}.txt" in files
    crictl = [
        {"status": {"id": CONTAINER_IDS[c], "labels": {"io.kubernetes.pod.uid": uid, "io.kubernetes.pod.name": p,
                    "io.kubernetes.pod.namespace": ns, "io.kubernetes.container.name": c}}}
        for uid, ns, p, c in ((UIDS["u1"], "db", "pg-0", "pg"), (UIDS["u3"], "web", "nginx", "nginx"))
    ]  # fmt: skip
    files["tmnb/crictl.json"] = json.dumps(crictl).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    node = read_bundle(out.getvalue(), name="w1").node
    shared = [a for a in node.allocations if not a.exclusive]
    assert [(a.namespace, a.pod, a.container, a.cpuset, a.numa) for a in shared] == [
        ("web", "nginx", "nginx", "3,5-7,11,13-15", [0, 1])
    ]
    (drift,) = [i for i in node.issues if i.source == "cgroup cpuset"]
    assert "db/pg-0 pg: runs on 1-3 but cpu_manager_state assigns 1-2,9-10" in drift.message


def test_size_cap_is_enforced_by_the_script(busy_node, tmp_path):
    root = make_node_root(busy_node, tmp_path / "w1")
    with pytest.raises(CollectError, match="over the 2000-byte cap"):
        collect_node(LocalTransport(str(root)), "w1", max_bytes=2000, timeout=60)


def test_a_node_without_numa_information_is_recorded_not_fatal(busy_node, tmp_path):
    good = make_node_root(busy_node, tmp_path / "good")
    (tmp_path / "empty").mkdir()
    roots = {"good": good, "empty": tmp_path / "empty"}
    out = collect_nodes(roots, lambda name: LocalTransport(str(roots[name])), workers=2, timeout=60)
    assert out["good"].node.numa
    assert out["empty"].source == "node collector"
    assert "no NUMA information" in out["empty"].message or "sys/devices/system/node" in out["empty"].message


def test_not_a_bundle():
    with pytest.raises(CollectError, match="not a readable gzip tar"):
        read_bundle(b"hello", name="w1")


def fake_tool(bindir, name: str, body: str) -> None:
    """A stand-in for a host tool the script calls (journalctl, crictl): it records its arguments."""
    path = bindir / name
    path.write_text(f'#!/bin/sh\necho "$@" >> "{bindir}/{name}.args"\n{body}\n')
    path.chmod(0o755)


JOURNAL = """\
2026-12-02T10:00:00+0000 w1 kubelet[4242]: I1202 10:00:00.1 4242 cpu_manager.go:221] "Starting CPU manager"
2026-12-02T10:00:01+0000 w1 kubelet[4242]: I1202 10:00:01.1 4242 kubelet.go:2400] "SyncLoop ADD" pod="web/x"
2026-12-02T10:00:02+0000 w1 kubelet[4242]: E1202 10:00:02.1 4242 kubelet.go:2190] "Pod admission failed" reason="TopologyAffinityError"
"""  # noqa: E501


@pytest.fixture
def tools(tmp_path, monkeypatch):
    bindir = tmp_path / "tools"
    bindir.mkdir()
    fake_tool(bindir, "journalctl", f"cat <<'EOF'\n{JOURNAL}EOF")
    crictl = json.dumps([{"status": {"id": "c" * 64, "labels": {"io.kubernetes.pod.uid": "p"}}}])
    fake_tool(bindir, "crictl", f"case $1 in ps) echo {'c' * 64} ;; inspect) echo '{crictl}' ;; esac")
    monkeypatch.setenv("PATH", f"{bindir}:{os.environ['PATH']}")
    return bindir


def test_journal_is_filtered_and_bounded(busy_node, tmp_path, tools):
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "var/log/journal").mkdir(parents=True)
    bundle = collect_node(LocalTransport(str(root)), "w1", since="-2h", timeout=60)
    assert [line.rsplit("] ", 1)[1] for line in bundle.journal] == [
        '"Starting CPU manager"',
        '"Pod admission failed" reason="TopologyAffinityError"',
    ]
    args = (tools / "journalctl.args").read_text().split()
    assert args == ["-D", f"{root}/var/log/journal", "-u", "kubelet", "--since", "-2h", "--no-pager", "-o", "short-iso"]
    assert not (tools / "crictl.args").exists()  # a copied root has no runtime to ask


def test_live_host_root(tools):
    """``-r /``: this machine's own sysfs, lscpu and (stand-in) crictl and journalctl."""
    if not os.path.isdir("/sys/devices/system/node/node0"):
        pytest.skip("this host exposes no NUMA sysfs")
    bundle = collect_node(LocalTransport("/"), "this-host", timeout=60)
    files = members(bundle.raw)
    assert json.loads(files["tmnb/crictl.json"])[0]["status"]["id"] == "c" * 64
    assert (tools / "crictl.args").read_text().splitlines() == ["ps -q", f"inspect {'c' * 64}"]
    assert len(bundle.journal) == 2 and bundle.node.numa
    if "tmnb/lscpu.txt" in files:  # the host's own lscpu and sysfs agree on the NUMA map
        assert not [i for i in bundle.node.issues if i.source == "lscpu"]


def test_links_out_of_the_node_root_are_refused(busy_node, tmp_path):
    outside = tmp_path / "outside.conf"
    outside.write_text(f"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n# {SECRET}\n")
    root = make_node_root(busy_node, tmp_path / "w1")
    link(root, "etc/kubernetes/kubelet.conf.d/70-outside.conf", str(outside))
    bundle = collect_node(LocalTransport(str(root)), "w1", timeout=60)
    assert SECRET.encode() not in gzip.decompress(bundle.raw)
    (issue,) = [i for i in bundle.node.issues if i.source == "/etc/kubernetes/kubelet.conf.d/70-outside.conf"]
    assert issue.message == "refused: a link out of the node root"


def test_over_the_cap_the_journal_is_dropped_first(busy_node, tmp_path, tools):
    noisy = "awk 'BEGIN { srand(1); for (i = 0; i < 5000; i++) printf \"cpu_manager.go:1] %d %x%x\\n\", i, rand() * 2^31, rand() * 2^31 }'"  # noqa: E501
    fake_tool(tools, "journalctl", noisy)
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "var/log/journal").mkdir(parents=True)
    roomy = collect_node(LocalTransport(str(root)), "w1", timeout=60)
    assert len(roomy.journal) == 5000
    cap = len(roomy.raw) // 2
    bundle = collect_node(LocalTransport(str(root)), "w1", max_bytes=cap, timeout=60)
    assert len(bundle.raw) <= cap and bundle.journal == () and bundle.node.numa
    (dropped,) = [i for i in bundle.node.issues if i.source == "tmnb/journal.txt"]
    assert dropped.message == f"dropped: the bundle was over the {cap}-byte cap"
