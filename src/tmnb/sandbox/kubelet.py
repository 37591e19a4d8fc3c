"""One simulated node's kubelet: its files on disk, its start-up checks and its admission.

The node's configuration lives in a directory laid out like the node (``write_node_root``), so
editing it and calling ``restart()`` is the same motion as editing /var/lib/kubelet/config.yaml
and running ``systemctl restart kubelet``. Start-up re-reads the files with the collector's
parsers, validates them as the kubelet would and restores the CPU manager checkpoint; a refusal
leaves the kubelet down with the kubelet's own words in ``journal.log``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.cpu_static import CPUStaticPolicy
from tmnb.kubelet.cpu_topology import to_cpuset
from tmnb.kubelet.node import NodeSimulator, PodResult
from tmnb.parse.state_files import parse_cpu_manager_state, parse_memory_manager_state
from tmnb.replay import model_pod, node_model
from tmnb.settings import KubeletSettings, validate_checkpoints, validate_settings
from tmnb.snapshot import Node
from tmnb.sources.kube_objects import pod_from_api
from tmnb.sources.node_render import DROPIN_DIR, KUBELET_CONFIG, write_node_root
from tmnb.sources.node_root import read_node_root
from tmnb.versions import MODELLED_KUBELET, KubeVersion

STATE_DIR = "var/lib/kubelet"
JOURNAL = "journal.log"
#: klog source of lines whose wording is the sandbox's (real file:line only where facts give it)
SANDBOX = "tmnb-sandbox"
_CONFIG_ISSUES = ("kubelet unit", "kubelet flags", "kubelet config", "kubelet drop-ins")


def _klog(level: str, source: str, message: str, err: str | None = None) -> str:
    """A klog structured line as journalctl -u kubelet shows it (header: level, date, time, pid, source)."""
    stamp = datetime.now(UTC).strftime("%m%d %H:%M:%S.%f")
    line = f"{level}{stamp} {os.getpid():>7} {source}] {json.dumps(message)}"
    return line + (f" err={json.dumps(err)}" if err is not None else "")


class KubeletDown(ConfigRejected):
    """The kubelet exits at start-up; ``journal`` holds what it logged."""

    def __init__(self, message: str, journal: list[str]) -> None:
        super().__init__(message)
        self.journal = journal


class SimKubelet:
    """A node's kubelet: ``restart()`` reads its files; ``admit()`` decides a bound pod."""

    def __init__(self, node: Node, root: Path | None) -> None:
        """``root`` None: no node files (scale runs); restarts then start from the snapshot node."""
        self.snapshot_node = node
        #: the node as its files said at the last start
        self.node = node
        self.root = root
        self._journal: list[str] = []
        if root is not None:
            write_node_root(node, root)
        self.sim: NodeSimulator | None = None
        self.error: str | None = None
        self.never_ready = False
        self.reject_new_pods = False
        #: the kubelet configuration files as the node started: never-ready bites only when they differ
        self._started_config = self._config_digest()
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.snapshot_node.name

    @property
    def running(self) -> bool:
        return self.sim is not None

    @property
    def version(self) -> KubeVersion:
        try:
            return KubeVersion.parse(self.snapshot_node.versions.kubelet or "")
        except InputError:
            return MODELLED_KUBELET

    def journal(self) -> str:
        if self.root is None:
            return "".join(line + "\n" for line in self._journal)
        path = self.root / JOURNAL
        return path.read_text() if path.exists() else ""

    def _log(self, lines: list[str]) -> None:
        if self.root is None:
            self._journal += lines
            return
        with (self.root / JOURNAL).open("a") as f:
            f.writelines(line + "\n" for line in lines)

    # ------------------------------------------------------------------ start-up
    def read_node(self) -> Node:
        """The node as its files describe it now, with the API-side identity of the snapshot node."""
        if self.root is None:
            return self.snapshot_node
        read = read_node_root(self.root, name=self.name)
        return dataclasses.replace(
            self.snapshot_node,
            kubelet=read.kubelet,
            cpus=read.cpus or self.snapshot_node.cpus,
            numa=read.numa,
            devices=read.devices,
            shared_pool=read.shared_pool,
            allocations=read.allocations,
            issues=read.issues,
        )

    def _refusal(self, node: Node) -> KubeletDown | None:
        for issue in node.issues:
            if issue.source in _CONFIG_ISSUES and issue.severity == "error":
                return KubeletDown(issue.message, [_klog("E", SANDBOX, "command failed", issue.message)])
        settings = KubeletSettings(
            fields=node.kubelet.settings, config_file=node.kubelet.config_file, config_dir=node.kubelet.config_dir
        )
        online = CPUSet(c.cpu for c in node.cpus if c.online)
        found = validate_settings(
            settings,
            version=self.version,
            numa_nodes=[z.id for z in node.numa],
            sockets=len({c.socket for c in node.cpus}),
            online_cpus=online,
        )
        errors = [f.message for f in found if f.severity == "error"]
        if errors:
            err = f"failed to validate kubelet configuration, error: [{', '.join(errors)}]"
            return KubeletDown(errors[0], [_klog("E", SANDBOX, "command failed", err)])
        if self.root is None:
            return None
        state = self.root / STATE_DIR
        cpu = state / "cpu_manager_state"
        memory = state / "memory_manager_state"
        found = validate_checkpoints(
            settings,
            version=self.version,
            cpu_state=parse_cpu_manager_state(cpu.read_bytes()) if cpu.exists() else None,
            memory_state=parse_memory_manager_state(memory.read_bytes()) if memory.exists() else None,
            online_cpus=online,
        )
        for f in found:
            if f.severity != "error":
                continue
            manager = "memory" if f.field == "memoryManagerPolicy" else "cpu"
            lines = [
                _klog(
                    "E",
                    "kubelet.go:1392",
                    "Failed to start ContainerManager",
                    f"start {manager} manager error: {f.message}",
                )
            ]
            if manager == "cpu":  # the CPU manager logs first (node-artifacts §4.1)
                lines.insert(
                    0,
                    _klog(
                        "E",
                        "cpu_manager.go:223",
                        "Could not initialize checkpoint manager, please drain node and remove policy state file",
                        f.message,
                    ),
                )
            return KubeletDown(f.message, lines)
        return None

    def _config_digest(self) -> str:
        """sha256 over the kubelet's config file and drop-ins ('' without node files)."""
        if self.root is None:
            return ""
        digest = hashlib.sha256()
        for path in sorted([self.root / KUBELET_CONFIG, *sorted((self.root / DROPIN_DIR).glob("**/*.conf"))]):
            if path.is_file():
                digest.update(str(path.relative_to(self.root)).encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()

    def restart(self) -> Node:
        """Stop, re-read the files, start; raises ``KubeletDown`` (and stays down) when it would not start."""
        with self._lock:
            self.sim = None
            self._log([_klog("I", SANDBOX, "Kubelet restarting")])
            node = self.read_node()
            refusal = self._refusal(node)
            if refusal is None:
                try:
                    self.sim = NodeSimulator(node_model(node, {}, mode="restart"))
                except ConfigRejected as exc:
                    refusal = KubeletDown(
                        exc.message, [_klog("E", "kubelet.go:1392", "Failed to start ContainerManager", exc.message)]
                    )
            if refusal is None and self.never_ready and self._config_digest() != self._started_config:
                refusal = KubeletDown("fault injected: the kubelet never posts Ready with this configuration", [])
            if refusal is not None:
                self.sim = None
                self.error = refusal.message
                self._log(refusal.journal)
                raise refusal
            self.error = None
            self.node = node
            self._log([_klog("I", SANDBOX, "Started kubelet")])
            self._write_cpu_state()
            return node

    def stop(self) -> None:
        """``systemctl stop kubelet``: the model is gone until the next start; running pods stay."""
        with self._lock:
            self.sim = None
            self.error = None
            self._log([_klog("I", SANDBOX, "Stopped kubelet")])

    # ------------------------------------------------------------------ pods
    def admit(self, pod: dict[str, Any], *, new: bool = False) -> PodResult:
        """Admit a v1 Pod bound to this node; the CPU checkpoint on disk follows the decision.
        ``new``: a pod just created (not one re-admitted at a restart), for the reject-pods fault."""
        with self._lock:
            if self.sim is None:
                raise InputError(f"node {self.name}: the kubelet is not running")
            if new and self.reject_new_pods:
                return _disagreeing(pod)
            result = self.sim.admit(model_pod(pod_from_api(pod)))
            self._write_cpu_state()
            return result

    def release(self, pod: dict[str, Any]) -> None:
        """The pod is gone: free what it held, as the kubelet's managers do on removal."""
        with self._lock:
            if self.sim is not None:
                self.sim.remove_pod(model_pod(pod_from_api(pod)))
                self._write_cpu_state()

    def free_cpus(self) -> CPUSet:
        return self.sim.free_cpus() if self.sim else CPUSet()

    def _write_cpu_state(self) -> None:
        """cpu_manager_state as the static policy checkpoints it (checksum 0: accepted by the kubelet)."""
        cpu = self.sim.cpu if self.sim else None
        if self.root is None or not isinstance(cpu, CPUStaticPolicy):
            return
        entries: dict[str, dict[str, str]] = {}
        for (pod, container), mask in sorted(cpu.assignments.items()):
            entries.setdefault(pod, {})[container] = str(to_cpuset(mask))
        doc: dict[str, Any] = {"policyName": "static", "defaultCpuSet": str(to_cpuset(cpu.default))}
        if entries:
            doc["entries"] = entries
        doc["checksum"] = 0
        path = self.root / STATE_DIR / "cpu_manager_state"
        path.write_text(json.dumps(doc, separators=(",", ":")))


def _disagreeing(pod: dict[str, Any]) -> PodResult:
    """The reject-pods fault: a rejection the model would not have made, in the kubelet's words."""
    meta = pod["metadata"]
    return PodResult(
        uid=meta.get("uid", ""),
        namespace=meta["namespace"],
        name=meta["name"],
        admitted=False,
        reason="TopologyAffinityError",
        message="Resources cannot be allocated with Topology locality",
        containers=(),
    )
