"""A node's root as the collector sees it: files rendered from a snapshot node, a fake /proc with a
running kubelet, a cgroup v2 kubepods tree, and credentials the collector must never read."""

from __future__ import annotations

import os
from pathlib import Path

from tmnb.snapshot import Node
from tmnb.sources.node_render import write_node_root
from tmnb.sources.node_root import read_node_root

SECRET = "SECRET-MATERIAL-MUST-NOT-LEAVE-THE-NODE"
KUBELET_PID = 4242
CONTAINER_IDS = {"pg": "a" * 64, "nginx": "b" * 64}
CREDENTIALS = (
    "etc/kubernetes/pki/ca.key",
    "etc/kubernetes/admin.conf",
    "etc/kubernetes/kubelet.conf",
    "var/lib/kubelet/kubeconfig",
    "var/lib/kubelet/pki/kubelet-client-current.pem",
    f"proc/{KUBELET_PID}/environ",
    "var/lib/kubelet/pods/u1/volumes/kubernetes.io~secret/token/token",
)


def _write(root: Path, rel: str, text: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)


def make_node_root(node: Node, root: Path, argv: list[str] | None = None, cgroup: str = "v2") -> Path:
    """``cgroup``: "v2" (unified, systemd driver paths) or "v1" (cpuset hierarchy, cgroupfs paths)."""
    write_node_root(node, root)
    argv = argv or read_node_root(root, name=node.name).kubelet.flags  # what the unit starts
    _write(root, f"proc/{KUBELET_PID}/comm", "kubelet\n")
    _write(root, f"proc/{KUBELET_PID}/cmdline", b"\0".join(a.encode() for a in argv) + b"\0")
    _write(root, "proc/1/comm", "systemd\n")
    _write(root, "proc/1/cmdline", b"/sbin/init\0")
    for rel in CREDENTIALS:
        _write(root, rel, SECRET)
    cg = "sys/fs/cgroup"
    if cgroup == "v2":
        _write(root, f"{cg}/cgroup.controllers", "cpuset cpu io memory pids\n")
    for a in node.allocations:
        cid = CONTAINER_IDS.get(a.container, "c" * 64)
        if cgroup == "v1":
            qos = "" if a.exclusive else "burstable/"
            base, effective = f"{cg}/cpuset/kubepods/{qos}pod{a.pod_uid}/{cid}", "cpuset.effective_cpus"
        else:
            pod_slice = f"kubepods-pod{a.pod_uid.replace('-', '_')}.slice"
            if not a.exclusive:
                pod_slice = f"kubepods-burstable.slice/kubepods-burstable-pod{a.pod_uid.replace('-', '_')}.slice"
            base, effective = f"{cg}/kubepods.slice/{pod_slice}/cri-containerd-{cid}.scope", "cpuset.cpus.effective"
        _write(root, f"{base}/{effective}", f"{a.cpuset}\n")
        _write(root, f"{base}/cpuset.cpus", f"{a.cpuset}\n")
    return root


def link(root: Path, rel: str, target: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, path)
