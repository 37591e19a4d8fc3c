"""One simulated node's kubelet: its files on disk, its start-up checks and its admission.

The node's configuration lives in a directory laid out like the node (``write_node_root``), so
editing it and calling ``restart()`` is the same motion as editing /var/lib/kubelet/config.yaml
and running ``systemctl restart kubelet``. Start-up re-reads the files with the collector's
parsers, validates them as the kubelet would and restores the CPU manager checkpoint; a refusal
leaves the kubelet down with the kubelet's own words in ``journal.log``, which reads like
``journalctl -u kubelet -o short-iso`` of a real node (``tmnb.twin.sandbox.journal``): systemd's start and
stop lines, the kubelet's start-up lines, its refusals and its admission rejections.
"""

from __future__ import annotations

import dataclasses
import hashlib
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.checkpoints.files import render_state_files
from tmnb.kubelet.checkpoints.restore import StateFiles
from tmnb.kubelet.names import SCOPE_CONTAINER, TOPOLOGY_NONE
from tmnb.kubelet.node import NodeSimulator, PodResult
from tmnb.kubelet.profiles import resolve
from tmnb.replay import model_pod, node_model
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.validate import validate_settings
from tmnb.snapshot import Node
from tmnb.sources.kube_objects import pod_from_api
from tmnb.sources.node_render import DROPIN_DIR, KUBELET_CONFIG, write_node_root
from tmnb.sources.node_root import read_node_root
from tmnb.twin.sandbox import journal
from tmnb.versions import KubeVersion

STATE_DIR = "var/lib/kubelet"
JOURNAL = "journal.log"
_CONFIG_ISSUES = ("kubelet unit", "kubelet flags", "kubelet config", "kubelet drop-ins")
#: the first kubelet process id of a node; each start gets the next, as on a node
_FIRST_PID = 4242


class KubeletDown(ConfigRejected):
    """The kubelet does not come up; ``journal`` holds what it logged. ``stage``: ``config`` (it
    refused its configuration and exited), ``start`` (a manager failed to start and it exited) or
    ``running`` (it runs but never posts Ready)."""

    def __init__(self, message: str, journal: list[str], stage: str = "start") -> None:
        super().__init__(message)
        self.journal = journal
        self.stage = stage


class SimKubelet:
    """A node's kubelet: ``restart()`` reads its files; ``admit()`` decides a bound pod."""

    def __init__(self, node: Node, root: Path | None) -> None:
        """``root`` None: no node files (scale runs); restarts then start from the snapshot node."""
        self.snapshot_node = node
        #: the node as its files said at the last start
        self.node = node
        self.root = root
        self._journal: list[str] = []
        self.pid = _FIRST_PID - 1
        if root is not None:
            write_node_root(node, root)
        self.sim: NodeSimulator | None = None
        #: the checkpoint files last written, without node files
        self._files: StateFiles | None = None
        #: the first start brings the kubelet up as the snapshot captured it, running; later ones restart
        #: it over its state files (restored and validated as the kubelet does)
        self._captured = True
        self.error: str | None = None
        self.never_ready = False
        self.reject_new_pods = False
        #: a ``faults.DEVIATIONS`` kind: how this kubelet departs from the model once it runs a changed configuration
        self.deviation: str | None = None
        #: the kubelet configuration files as the node started: never-ready and deviations bite only when they differ
        self._started_config = self._config_digest()
        #: the running kubelet started with other configuration files than the node's first start
        self._changed = False
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.snapshot_node.name

    @property
    def running(self) -> bool:
        return self.sim is not None

    @property
    def version(self) -> KubeVersion | None:
        try:
            return KubeVersion.parse(self.snapshot_node.versions.kubelet or "")
        except InputError:
            return None

    def journal(self) -> str:
        if self.root is None:
            return "".join(line + "\n" for line in self._journal)
        path = self.root / JOURNAL
        return path.read_text() if path.exists() else ""

    def _klog(self, level: str, source: str, message: str, /, **values: object) -> str:
        return journal.klog(self.name, self.pid, level, source, message, **values)

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
            state_files=read.state_files,
            issues=read.issues,
        )

    def _refusal(self, node: Node) -> KubeletDown | None:
        for issue in node.issues:
            if issue.source in _CONFIG_ISSUES and issue.severity == "error":
                failed = self._klog("E", journal.COMMAND, "command failed", err=issue.message)
                return KubeletDown(issue.message, [failed], "config")
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
            return KubeletDown(errors[0], [self._klog("E", journal.COMMAND, "command failed", err=err)], "config")
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

    def _started(self, node: Node) -> list[str]:
        """What a kubelet logs as it starts: its version, then the Topology Manager it creates."""
        self.pid += 1
        version = self.snapshot_node.versions.kubelet or str(resolve(None).profile.version)
        lines = [self._klog("I", journal.KUBELET_VERSION, "Kubelet version", kubeletVersion=version)]
        settings = {key: s.value for key, s in node.kubelet.settings.items()}
        policy = settings.get("topologyManagerPolicy") or TOPOLOGY_NONE
        if policy == TOPOLOGY_NONE:
            lines.append(self._klog("I", journal.TOPOLOGY_MANAGER_NONE, "Creating topology manager with none policy"))
        else:
            scope = settings.get("topologyManagerScope") or SCOPE_CONTAINER
            options = settings.get("topologyManagerPolicyOptions") or {}
            lines.append(
                self._klog("I", journal.TOPOLOGY_MANAGER, "Creating topology manager with policy per scope",
                           topologyPolicyName=policy, topologyScopeName=scope, topologyPolicyOptions=options)
            )  # fmt: skip
        return lines

    def restart(self, pods: Sequence[dict[str, Any]] = ()) -> list[PodResult]:
        """Stop, re-read the files, start, then re-admit ``pods`` (the pods bound here, in creation order)
        as the pod source's first batch (``NodeSimulator.restart``): the first start comes up as the
        snapshot captured the node, every later one restores the checkpoint files on disk as the node's
        minor restores them. Raises ``KubeletDown`` (and stays down) when it would not start; else the
        batch's results, rejections logged as the kubelet logs them."""
        with self._lock:
            was_running, self.sim = self.sim is not None, None
            self._log([*(journal.stopped(self.name) if was_running else []), *journal.started(self.name)])
            node = self.read_node()
            started = self._started(node)
            refusal = self._refusal(node)
            sim: NodeSimulator | None = None
            if refusal is None:
                try:
                    captured, self._captured = self._captured, False
                    files = None if captured else self._state_files()
                    sim = NodeSimulator(node_model(node, {}, mode="running" if captured else "restart", files=files))
                except ConfigRejected as exc:
                    refusal = KubeletDown(exc.message, self._start_failure(exc.message))
            changed = self._config_digest() != self._started_config
            if refusal is None and self.never_ready and changed:
                message = "fault injected: the kubelet never posts Ready with this configuration"
                refusal = KubeletDown(message, started, "running")
            if refusal is not None or sim is None:
                assert refusal is not None
                self.error = refusal.message
                head = [] if refusal.stage == "running" else started[:1] if refusal.stage == "config" else started
                tail = [] if refusal.stage == "running" else journal.exited(self.name)
                self._log([*head, *refusal.journal, *tail])
                raise refusal
            self.error = None
            self.node = node
            self.sim = sim
            self._changed = changed
            self._log(started)
            results = sim.restart([model_pod(pod_from_api(pod)) for pod in pods])
            self._write_state()
            if self._deviates("repin"):
                results = self._repinned(pods, results)
            self._log([self._denied(r) for r in results if not r.admitted])
            return results

    def _deviates(self, kind: str) -> bool:
        return self.deviation == kind and self._changed

    def _repinned(self, pods: Sequence[dict[str, Any]], results: list[PodResult]) -> list[PodResult]:
        """The ``repin`` deviation: the first re-admitted pod holding exclusive CPUs is moved onto as many
        free CPUs of its NUMA node(s), the highest-numbered whole cores first (the model keeps a running
        pod's checkpointed CPUs); the kubelet then holds that state, checkpoint included, and the batch's
        results say so. Unchanged when no pod holds exclusive CPUs or there is no room beside them."""
        assert self.sim is not None
        held = next(((r, c) for r in results if r.admitted for c in r.containers if c.cpuset), None)
        node = self.read_node()
        moved = None if held is None else _free_cores_beside(node, held[1].cpuset, self.sim.free_cpus())
        if held is None or moved is None:
            return results
        pod, container = held
        allocations = [
            dataclasses.replace(a, cpuset=str(moved)) if (a.pod_uid, a.container) == (pod.uid, container.name) else a
            for a in node.allocations
        ]
        self.sim = NodeSimulator(node_model(dataclasses.replace(node, allocations=allocations), {}, mode="running"))
        results = self.sim.restart([model_pod(pod_from_api(p)) for p in pods])
        self._write_state()
        return results

    def _start_failure(self, err: str) -> list[str]:
        """What a manager that fails to start logs, then the container manager's line: a state file it
        cannot restore, or its policy's ``Start`` (``validateState``) refusing the restored state."""
        lines = [self._klog("E", journal.CONTAINER_MANAGER, "Failed to start ContainerManager", err=err)]
        for manager, (restore, policy) in journal.MANAGER_START.items():
            prefix = f"start {manager} manager error: "
            if err.startswith(prefix):
                inner = err[len(prefix) :]
                if inner.startswith("could not restore state from checkpoint"):
                    message = "Could not initialize checkpoint manager, please drain node and remove policy state file"
                    lines.insert(0, self._klog("E", restore, message, err=inner))
                else:
                    lines.insert(0, self._klog("E", policy, "Policy start error", err=inner))
        return lines

    def _state_files(self) -> StateFiles | None:
        """The checkpoint files as the kubelet finds them: the bytes on disk (a missing file is a fresh
        state), or, without node files, what this kubelet last wrote."""
        if self.root is None:
            return self._files
        state = self.root / STATE_DIR
        cpu, memory = state / "cpu_manager_state", state / "memory_manager_state"
        return StateFiles(
            cpu.read_bytes() if cpu.is_file() else None, memory.read_bytes() if memory.is_file() else None
        )

    def stop(self) -> None:
        """``systemctl stop kubelet``: the model is gone until the next start; running pods stay."""
        with self._lock:
            self._log(journal.stopped(self.name) if self.sim is not None else [])
            self.sim = None
            self.error = None

    # ------------------------------------------------------------------ pods
    def admit(self, pod: dict[str, Any], *, new: bool = False) -> PodResult:
        """Admit a v1 Pod bound to this node; the CPU checkpoint on disk follows the decision.
        ``new``: a pod just created (not one re-admitted at a restart), for the reject-pods fault."""
        with self._lock:
            if self.sim is None:
                raise InputError(f"node {self.name}: the kubelet is not running")
            if new and (self.reject_new_pods or self._deviates("reject")):
                result = _disagreeing(pod)
            else:
                result = (
                    self._elsewhere(pod)
                    if new and self._deviates("cpuset")
                    else self.sim.admit(model_pod(pod_from_api(pod)))
                )
                self._write_state()
            if not result.admitted:
                self._log([self._denied(result)])
            return result

    def _elsewhere(self, pod: dict[str, Any]) -> PodResult:
        """The ``cpuset`` deviation: a stand-in of the pod holds what the model would give it while the
        pod is admitted, so the pod gets other CPUs (or is rejected when nothing else fits)."""
        assert self.sim is not None
        meta = pod["metadata"]
        stand_in = {
            **pod,
            "metadata": {**meta, "uid": f"{meta.get('uid', '')}-stand-in", "name": f"{meta['name']}-stand-in"},
        }
        held = model_pod(pod_from_api(stand_in))
        self.sim.admit(held)
        result = self.sim.admit(model_pod(pod_from_api(pod)))
        self.sim.remove_pod(held)
        return result

    def _denied(self, result: PodResult) -> str:
        """kubelet.go's canAdmitPod, before rejectPod: the same line for a new pod and one re-admitted at a start."""
        return self._klog("I", journal.ADMISSION, "Pod admission denied", podUID=result.uid,
                          pod=f"{result.namespace}/{result.name}", reason=result.reason,
                          message=result.message)  # fmt: skip

    def release(self, pod: dict[str, Any]) -> None:
        """The pod is gone: free what it held, as the kubelet's managers do on removal."""
        with self._lock:
            if self.sim is not None:
                self.sim.remove_pod(model_pod(pod_from_api(pod)))
                self._write_state()

    def free_cpus(self) -> CPUSet:
        return self.sim.free_cpus() if self.sim else CPUSet()

    def _write_state(self) -> None:
        """Both checkpoint files as this node's minor writes them (format, checksum) from what the
        managers hold: what the next start restores."""
        if self.sim is None:
            return
        settings = self.sim.node.settings
        cpu, memory = self.sim.checkpoint_states()
        files = render_state_files(settings.kubelet, settings.feature_gates, cpu, memory)
        if self.root is None:
            self._files = files
            return
        for manager in ("cpu", "memory"):
            text = files.cpu_manager_state if manager == "cpu" else files.memory_manager_state
            assert isinstance(text, str)
            (self.root / STATE_DIR / f"{manager}_manager_state").write_text(text)


def _free_cores_beside(node: Node, cpuset: CPUSet, free: CPUSet) -> CPUSet | None:
    """As many of the ``free`` CPUs as ``cpuset`` holds, on its NUMA node(s), the highest-numbered whole
    cores first; None when there are not enough."""
    numa = {c.numa for c in node.cpus if c.cpu in cpuset}
    cores: dict[tuple[int, int], list[int]] = {}
    for c in node.cpus:
        if c.online and c.numa in numa:
            cores.setdefault((c.socket, c.core), []).append(c.cpu)
    whole = [cpus for cpus in cores.values() if all(cpu in free for cpu in cpus)]
    loose = [[cpu] for cpus in cores.values() for cpu in cpus if cpu in free and cpus not in whole]
    picked: list[int] = []
    for cpus in [*sorted(whole, key=max, reverse=True), *sorted(loose, key=max, reverse=True)]:
        if len(picked) + len(cpus) <= len(cpuset):
            picked += cpus
    return CPUSet(picked) if len(picked) == len(cpuset) else None


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
