"""Lay out a snapshot node's files as they sit on a real node (sysfs, kubelet config, drop-ins,
systemd unit, state files), so the node collector, ``tmnb whatif --node-root`` and the sandbox
read the same artefacts the same way. The inverse of ``node_root.read_node_root``."""

from __future__ import annotations

import json
import shlex
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from tmnb.cpuset import CPUSet
from tmnb.kubelet.names import CPU_NONE, MEMORY_NONE
from tmnb.parse.quantity import parse_quantity
from tmnb.replay import written_state_files
from tmnb.snapshot import Node

KUBELET_CONFIG = "var/lib/kubelet/config.yaml"
DROPIN_DIR = "etc/kubernetes/kubelet.conf.d"
UNIT = "usr/lib/systemd/system/kubelet.service"
UNIT_DROPIN = "etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
FLAGS_ENV = "var/lib/kubelet/kubeadm-flags.env"
NODE_SYSFS = "sys/devices/system/node"
CPU_SYSFS = "sys/devices/system/cpu"
PCI_SYSFS = "sys/bus/pci/devices"
_UNIT_TEXT = """[Unit]
Description=kubelet: The Kubernetes Node Agent
Documentation=https://kubernetes.io/docs/

[Service]
ExecStart=/usr/bin/kubelet
Restart=always
StartLimitInterval=0
RestartSec=10

[Install]
WantedBy=multi-user.target
"""
_KUBECONFIG_ARGS = (
    "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"
)
_UNIT_DROPIN_TEXT = f"""[Service]
Environment="KUBELET_KUBECONFIG_ARGS={_KUBECONFIG_ARGS}"
Environment="KUBELET_CONFIG_ARGS=--config=/var/lib/kubelet/config.yaml"
EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env
EnvironmentFile=-/etc/default/kubelet
ExecStart=
ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS
"""


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _layers(node: Node) -> dict[tuple[str, str | None], dict[str, Any]]:
    """Field values per configuration layer (source, detail), every layer a field passed through."""
    out: dict[tuple[str, str | None], dict[str, Any]] = defaultdict(dict)
    for name, setting in node.kubelet.settings.items():
        layers = (*setting.overridden, setting.as_layer())
        for layer in layers:
            if layer.source in ("file", "dropin"):
                out[(layer.source, layer.detail)][name] = layer.value
        if setting.source == "configz" and not any(x.source in ("file", "dropin", "flag") for x in layers):
            # Known only from the running kubelet: what it runs is what its config file must say.
            out[("file", node.kubelet.config_file)][name] = setting.value
    return out


def _config_doc(fields: dict[str, Any]) -> str:
    doc = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", **fields}
    return yaml.safe_dump(doc, sort_keys=False)


def render_kubelet(node: Node, root: Path) -> None:
    layers = _layers(node)
    files = [fields for (source, _), fields in layers.items() if source == "file"]
    _write(root, KUBELET_CONFIG, _config_doc({k: v for fields in files for k, v in fields.items()}))
    for (source, detail), fields in layers.items():
        if source == "dropin":
            _write(root, f"{DROPIN_DIR}/{Path(detail or '50-tmnb.conf').name}", _config_doc(fields))
    flags = [f for f in node.kubelet.flags[1:] if not f.startswith(("--config=", "--kubeconfig", "--bootstrap"))]
    if any(s == "dropin" for s, _ in layers) and not any(f.startswith("--config-dir") for f in flags):
        flags.append(f"--config-dir=/{DROPIN_DIR}")
    _write(root, UNIT, _UNIT_TEXT)
    _write(root, UNIT_DROPIN, _UNIT_DROPIN_TEXT)
    _write(root, FLAGS_ENV, f'KUBELET_KUBEADM_ARGS="{shlex.join(flags)}"\n')


def render_sysfs(node: Node, root: Path) -> None:
    zones = sorted(node.numa, key=lambda z: z.id)
    online = CPUSet(z.id for z in zones)
    _write(root, f"{NODE_SYSFS}/online", f"{online}\n")
    for z in zones:
        base = f"{NODE_SYSFS}/node{z.id}"
        _write(root, f"{base}/cpulist", f"{z.cpus}\n")
        _write(root, f"{base}/distance", " ".join(map(str, z.distance_row() or (10,))) + "\n")
        total, free = z.memory_total // 1024, (z.memory_free if z.memory_free is not None else z.memory_total) // 1024
        _write(
            root,
            f"{base}/meminfo",
            f"Node {z.id} MemTotal:       {total:8d} kB\nNode {z.id} MemFree:        {free:8d} kB\n"
            f"Node {z.id} MemUsed:        {total - free:8d} kB\nNode {z.id} HugePages_Total:     0\n",
        )
        for h in z.hugepages:
            kib = int(parse_quantity(h.size)) // 1024
            hp = f"{base}/hugepages/hugepages-{kib}kB"
            _write(root, f"{hp}/nr_hugepages", f"{h.total}\n")
            _write(root, f"{hp}/free_hugepages", f"{h.free}\n")
            _write(root, f"{hp}/surplus_hugepages", "0\n")
    cpus = sorted(node.cpus, key=lambda c: c.cpu)
    _write(root, f"{CPU_SYSFS}/possible", f"{CPUSet(c.cpu for c in cpus)}\n")
    _write(root, f"{CPU_SYSFS}/online", f"{CPUSet(c.cpu for c in cpus if c.online)}\n")
    siblings: dict[int, CPUSet] = defaultdict(CPUSet)
    for c in cpus:
        siblings[c.core] = siblings[c.core] | {c.cpu}
    for c in cpus:
        if c.online:
            topo = f"{CPU_SYSFS}/cpu{c.cpu}/topology"
            _write(root, f"{topo}/physical_package_id", f"{c.socket}\n")
            _write(root, f"{topo}/core_id", f"{c.core}\n")
            _write(root, f"{topo}/thread_siblings_list", f"{siblings[c.core]}\n")
    for d in node.devices:
        if ":" in d.id and "." in d.id:  # a PCI address, e.g. an SR-IOV VF: its NUMA node is in sysfs
            _write(root, f"{PCI_SYSFS}/{d.id}/numa_node", f"{d.numa[0] if d.numa else -1}\n")


def render_state(node: Node, root: Path) -> None:
    """The checkpoint files as the node's kubelet writes them (format and checksum of its minor), and
    the device manager's checkpoint. A file today's kubelet cannot be reconstructed for keeps a plain
    rendering (checksum 0) of what the snapshot recorded."""
    settings = {k: s.value for k, s in node.kubelet.settings.items()}
    written = written_state_files(node)
    entries: dict[str, dict[str, str]] = defaultdict(dict)
    for a in node.allocations:
        if a.exclusive:
            entries[a.pod_uid][a.container] = a.cpuset
    cpu_state = {"policyName": settings.get("cpuManagerPolicy", CPU_NONE), "defaultCpuSet": node.shared_pool or ""}
    if entries:
        cpu_state["entries"] = dict(entries)
    cpu_text = written.cpu_manager_state if written is not None else None
    if not isinstance(cpu_text, str):
        cpu_text = json.dumps({**cpu_state, "checksum": 0}, separators=(",", ":"))
    _write(root, "var/lib/kubelet/cpu_manager_state", cpu_text)
    blocks: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(dict)
    for a in node.allocations:
        if a.memory:
            blocks[a.pod_uid][a.container] = [
                {"numaAffinity": b.numa, "type": b.type, "size": b.size} for b in a.memory
            ]
    memory_state: dict[str, Any] = {"policyName": settings.get("memoryManagerPolicy", MEMORY_NONE), "machineState": {}}
    if blocks:
        memory_state["entries"] = dict(blocks)
    memory_text = written.memory_manager_state if written is not None else None
    if not isinstance(memory_text, str):
        memory_text = json.dumps({**memory_state, "checksum": 0})
    _write(root, "var/lib/kubelet/memory_manager_state", memory_text)
    numa_of = {d.id: d.numa for d in node.devices}
    pod_entries = [
        {
            "PodUID": a.pod_uid,
            "ContainerName": a.container,
            "ResourceName": d.resource,
            "DeviceIDs": _by_numa(d.ids, numa_of),
            "AllocResp": "",
        }
        for a in node.allocations
        for d in a.devices
    ]
    registered: dict[str, list[str]] = defaultdict(list)
    for d in node.devices:
        registered[d.resource].append(d.id)
    checkpoint = {
        "Data": {"PodDeviceEntries": pod_entries or None, "RegisteredDevices": dict(registered)},
        "Checksum": 0,
    }
    _write(root, "var/lib/kubelet/device-plugins/kubelet_internal_checkpoint", json.dumps(checkpoint))


def _by_numa(ids: list[str], numa_of: dict[str, list[int] | None]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for dev in ids:
        for numa in numa_of.get(dev) or [-1]:
            out[str(numa)].append(dev)
    return dict(out)


def write_node_root(node: Node, root: str | Path) -> Path:
    """Write ``node`` under ``root`` as a node's file system; returns ``root``."""
    root = Path(root)
    render_sysfs(node, root)
    render_kubelet(node, root)
    render_state(node, root)
    return root
