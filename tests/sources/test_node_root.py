"""A node's files written as on a real node, read back with the same parsers the collector uses."""

import json
import shutil

import pytest

from factories import layered_node, pod
from tmnb.cli import main
from tmnb.errors import InputError
from tmnb.sources.node_render import FLAGS_ENV, write_node_root
from tmnb.sources.node_root import read_node_root


@pytest.fixture
def busy_node():
    return layered_node()


def test_round_trip(busy_node, tmp_path):
    back = read_node_root(write_node_root(busy_node, tmp_path), name="w1")
    assert back.cpus == busy_node.cpus
    assert [(z.id, z.cpus, z.memory_total, z.distances) for z in back.numa] == [
        (0, "0-3,8-11", 64 << 30, {0: 10, 1: 21}),
        (1, "4-7,12-15", 64 << 30, {0: 21, 1: 10}),
    ]
    policy = back.kubelet.settings["topologyManagerPolicy"]
    assert (policy.value, policy.source, policy.detail) == ("single-numa-node", "flag", "--topology-manager-policy")
    assert [(o.source, o.value) for o in policy.overridden][-1] == ("file", "best-effort")
    for name in ("cpuManagerPolicy", "reservedSystemCPUs", "memoryManagerPolicy", "reservedMemory"):
        assert back.kubelet.settings[name].value == busy_node.kubelet.settings[name].value, name
    exclusive = {(a.pod_uid, a.container): (a.cpuset, a.memory) for a in busy_node.allocations if a.exclusive}
    assert {(a.pod_uid, a.container): (a.cpuset, a.memory) for a in back.allocations} == exclusive
    gpu = next(d for d in back.devices if d.id == "gpu2")
    assert gpu.numa == [1]  # allocated: its NUMA node is in the checkpoint
    assert [i.source for i in back.issues] == ["device checkpoint"]  # the others' NUMA is not on disk


def test_missing_pieces_become_issues(busy_node, tmp_path):
    root = write_node_root(busy_node, tmp_path)
    (root / "var/lib/kubelet/cpu_manager_state").write_text('{"policyName": "static", "defaultCpu')
    shutil.rmtree(root / "usr/lib/systemd")
    shutil.rmtree(root / "etc/systemd")
    back = read_node_root(root, name="w1")
    sources = {i.source: i.message for i in back.issues}
    assert "cpu_manager_state" in sources and "kubelet unit" in sources
    assert back.kubelet.settings["cpuManagerPolicy"].value == "static"  # the config file was still read
    assert back.numa and back.cpus


def test_not_a_node_root(tmp_path):
    with pytest.raises(InputError, match="expected a copy of a node's files"):
        read_node_root(tmp_path, name="x")


def test_whatif_from_node_root(busy_node, tmp_path, capsys):
    root = write_node_root(busy_node, tmp_path / "w1")
    assert "--topology-manager-policy=single-numa-node" in (root / FLAGS_ENV).read_text()
    pods = [pod("pg-0", "w1", cpu="4"), pod("train", "w1", cpu="2"), pod("other", "elsewhere", cpu="2")]
    items = [
        {
            "metadata": {"name": p.name, "namespace": p.namespace, "uid": p.uid, "creationTimestamp": p.created},
            "spec": {
                "nodeName": p.node,
                "containers": [
                    {
                        "name": "main",
                        "resources": {"requests": p.containers[0].requests, "limits": p.containers[0].limits},
                    }
                ],
            },
            "status": {"phase": "Running", "qosClass": "Guaranteed"},
        }
        for p in pods
    ]
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": items}))
    code = main(
        [
            "whatif",
            "--node-root",
            str(root),
            "--pods",
            str(tmp_path / "pods.json"),
            "--set",
            "topologyManagerPolicy=restricted",
            "--format",
            "json",
        ]
    )
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [(r["pod"], r["admitted"]) for r in records] == [("pg-0", True), ("train", True)]
    assert all(r["node"] == "w1" for r in records)
    bad = main(
        [
            "whatif",
            "--node-root",
            str(root),
            "--pods",
            str(tmp_path / "pods.json"),
            "--node-name",
            "zz",
            "--set",
            "topologyManagerPolicy=restricted",
        ]
    )
    assert bad == 2
    assert "no pod is bound to node 'zz'" in capsys.readouterr().err


CONFIG = "var/lib/kubelet/config.yaml"
LOAD = (
    "failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: failed to load Kubelet config "
    "file /var/lib/kubelet/config.yaml, error "
)


def _break_config(root, how):
    cfg = root / CONFIG
    if how == "missing":
        cfg.unlink()
    elif how == "empty":
        cfg.write_text("")
    elif how == "directory":
        cfg.unlink()
        cfg.mkdir()
    elif how == "loop":
        cfg.unlink()
        cfg.symlink_to("config.yaml")
    elif how == "tab":
        cfg.write_text(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n\tcpuManagerPolicy: static\n"
        )
    elif how == "latin1":
        cfg.write_bytes(b"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n# r\xe9serv\xe9\n")


@pytest.mark.parametrize(
    ("how", "detail"),
    [
        (
            "missing",
            'failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: open '
            "/var/lib/kubelet/config.yaml: no such file or directory",
        ),
        ("empty", 'kubelet config file "/var/lib/kubelet/config.yaml" was empty'),
        (
            "directory",
            'failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: read '
            "/var/lib/kubelet/config.yaml: is a directory",
        ),
        (
            "loop",
            'failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: open '
            "/var/lib/kubelet/config.yaml: too many levels of symbolic links",
        ),
        ("tab", "failed to decode: malformed YAML"),
        ("latin1", "failed to decode: not UTF-8 text: byte 0xe9"),
    ],
)
def test_a_config_file_the_kubelet_cannot_load_is_its_refusal_not_defaults(busy_node, tmp_path, capsys, how, detail):
    root = write_node_root(busy_node, tmp_path / "w1")
    _break_config(root, how)
    node = read_node_root(root, name="w1")
    (issue,) = [i for i in node.issues if i.source == "kubelet config"]
    assert issue.severity == "error" and issue.message.startswith(LOAD + detail)
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []}))
    code = main(
        [
            "whatif",
            "--node-root",
            str(root),
            "--pods",
            str(tmp_path / "pods.json"),
            "--set",
            "topologyManagerPolicy=restricted",
        ]
    )
    out = capsys.readouterr().out
    assert code == 3
    assert "kubelet would not start" in out or issue.message[:60] in out
