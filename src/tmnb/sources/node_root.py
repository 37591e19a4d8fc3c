"""Read one node's files (a copy of its root, or the live root with a prefix) into a snapshot Node.

What cannot be read is recorded as an issue on the node and the rest carries on; only a directory
with neither sysfs tree is refused, as not a copy of a node at all.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.files import STATE_LIMIT, read_capped, read_sysfs, read_text
from tmnb.parse.kubelet_config import read_config_file, read_dropin_dir
from tmnb.parse.kubelet_flags import DEFAULT_ROOT_DIR, KubeletFlags, parse_kubelet_args, split_proc_cmdline
from tmnb.parse.numbers import parse_int
from tmnb.parse.state_files import (
    CpuManagerState,
    DeviceCheckpoint,
    parse_cpu_manager_state,
    parse_device_checkpoint,
    parse_memory_manager_state,
)
from tmnb.parse.sysfs import MAX_NUMA_NODES
from tmnb.parse.systemd import order_unit_files, parse_systemd_units
from tmnb.redact import redact_argv
from tmnb.settings.checkpoints import read_state_file
from tmnb.settings.effective import effective_settings
from tmnb.snapshot import (
    Allocation,
    Device,
    DeviceAllocation,
    Issue,
    KubeletInfo,
    MemoryBlock,
    Node,
    Setting,
    StateFile,
)
from tmnb.sources.node_render import CPU_SYSFS, NODE_SYSFS, PCI_SYSFS
from tmnb.sources.node_topology import read_topology

T = TypeVar("T")
UNIT_DIRS = ("etc/systemd/system", "run/systemd/system", "usr/lib/systemd/system", "lib/systemd/system")
_ENV_FILE = re.compile(r"^\s*EnvironmentFile\s*=\s*(-?)(\S+)", re.M)


def _on_node(root: Path, path: Path) -> str:
    """The path as it is on the node, not in the copy being read."""
    return f"/{path.relative_to(root)}"


class _Issues(list[Issue]):
    def attempt(self, step: str, read: Callable[[], T]) -> T | None:
        try:
            return read()
        except (InputError, OSError) as exc:
            self.append(Issue(source=step, message=str(exc)))
            return None


def _env_issue(path: str, problem: str) -> Issue:
    return Issue(
        source="kubelet unit", severity="warning", message=f"{path}: EnvironmentFile= of the kubelet unit {problem}"
    )


#: The issue sources of the kubelet's flags: its unit and environment files (unreadable, or changed since
#: the kubelet started, so that the next restart runs other flags) and its command line.
UNIT_CHANGED = "kubelet unit"
FLAG_STEPS = (UNIT_CHANGED, "kubelet flags", "kubelet command line")


def _kubelet_argv(root: Path, issues: _Issues) -> tuple[list[str], list[str], str]:
    units = {
        f"/{p.relative_to(root)}": p for d in UNIT_DIRS for p in (root / d).glob("kubelet.service*") if p.is_file()
    }
    units |= {f"/{p.relative_to(root)}": p for d in UNIT_DIRS for p in (root / d).glob("kubelet.service.d/*.conf")}
    if not units:
        raise InputError("no kubelet.service unit found under " + ", ".join(UNIT_DIRS), source=str(root))
    ordered = [(path, read_text(units[path], what="a systemd unit", source=path)) for path in order_unit_files(units)]
    env_files = {}
    for _, text in ordered:
        for optional, path in _ENV_FILE.findall(text):
            candidate = root / path.lstrip("/")
            if candidate.is_file():
                env_files[path] = read_text(candidate, what="a systemd EnvironmentFile", source=path)
            elif candidate.exists() or candidate.is_symlink():
                issues.append(_env_issue(path, "is not a regular file; flags it sets are unknown"))
            elif not optional:  # systemd refuses to start the unit; with "-" it does without the file
                issues.append(
                    _env_issue(
                        path,
                        "is not in the copy; flags it sets are unknown "
                        "(without it on the node systemd would not start the kubelet)",
                    )
                )
    exec_ = parse_systemd_units(ordered, env_files=env_files)
    return list(exec_.argv), list(exec_.origins), exec_.exec_source


def _pci_numa(root: Path, device_id: str) -> list[int] | None:
    path = root / PCI_SYSFS / device_id / "numa_node"
    if not path.is_file():
        return None
    text = read_sysfs(path, what="a NUMA node id")
    value = parse_int(text, lo=-1, hi=MAX_NUMA_NODES - 1, what="a NUMA node id", source=str(path))
    return None if value < 0 else [value]


def _parsed_flags(
    argv_info: tuple[list[str], list[str] | None, str], issues: _Issues, step: str
) -> KubeletFlags | None:
    argv, origins, source = argv_info
    return issues.attempt(step, lambda: parse_kubelet_args(argv, source=source, origins=origins))


def _flags(root: Path, issues: _Issues, running: bytes | None) -> tuple[KubeletFlags | None, list[str]]:
    """The kubelet's flags: from its running command line when collected (the unit may have changed
    since it started), else from its systemd unit; an unreadable command line falls back to the unit."""
    unit = issues.attempt("kubelet unit", lambda: _kubelet_argv(root, issues))
    unit_flags = _parsed_flags(unit, issues, "kubelet flags") if unit else None
    if running is not None:
        source = "/proc/<kubelet>/cmdline"
        argv = issues.attempt("kubelet command line", lambda: split_proc_cmdline(running, source=source))
        flags = _parsed_flags((argv, None, source), issues, "kubelet command line") if argv else None
        if argv and flags is not None:
            if unit and redact_argv(unit[0]) != redact_argv(argv):
                running_args = set(redact_argv(argv))
                only_unit = [a for a in redact_argv(unit[0])[1:] if a not in running_args]
                named = f" (in the unit only: {' '.join(only_unit)})" if only_unit else ""
                issues.append(
                    Issue(
                        source=UNIT_CHANGED,
                        severity="warning",
                        message="the running kubelet's command line differs from its systemd unit: the unit "
                        f"changed and the kubelet has not been restarted since{named}",
                    )
                )
            return flags, argv
    return unit_flags, unit[0] if unit else []


def _node_paths(settings: dict[str, Setting], root: Path) -> dict[str, Setting]:
    """Name files by their path on the node, not in the copy being read."""
    prefix = str(root)

    def strip(detail: str | None) -> str | None:
        return detail.removeprefix(prefix) if detail and detail.startswith(prefix + "/") else detail

    return {
        key: dataclasses.replace(
            s,
            detail=strip(s.detail),
            overridden=tuple(dataclasses.replace(o, detail=strip(o.detail)) for o in s.overridden),
        )
        for key, s in settings.items()
    }


def _kubeadm_managed(root: Path) -> bool:
    """kubeadm set this kubelet up: its flags file, or its drop-in of the kubelet unit (10-kubeadm.conf)."""
    if (root / DEFAULT_ROOT_DIR.lstrip("/") / "kubeadm-flags.env").is_file():
        return True
    return any(p.is_file() for d in UNIT_DIRS for p in (root / d).glob("kubelet.service.d/*kubeadm*.conf"))


def _kubelet(root: Path, issues: _Issues, running: bytes | None) -> KubeletInfo:
    flags, argv = _flags(root, issues, running)
    config_path = (flags.config_file if flags else None) or f"{DEFAULT_ROOT_DIR}/config.yaml"
    config_file = root / config_path.lstrip("/")
    file_doc = issues.attempt(
        "kubelet config",
        lambda: read_config_file(config_file, source=config_path),
    )
    dropins = None
    if flags and flags.config_dir:
        dropin_root = root / flags.config_dir.lstrip("/")
        shown = flags.config_dir
        dropins = issues.attempt("kubelet drop-ins", lambda: read_dropin_dir(dropin_root, shown=shown))
        if dropins is not None and dropins.unread:
            issues.append(Issue(source="kubelet drop-ins", severity="warning", message=dropins.unread))
    settings = effective_settings(file=file_doc, dropins=dropins or (), flags=flags)
    return KubeletInfo(
        settings=_node_paths(settings.fields, root),
        config_file=config_path,
        config_dir=flags.config_dir if flags else None,
        flags=redact_argv(argv),
        kubeadm_managed=_kubeadm_managed(root),
    )


@dataclass
class _Holding:
    cpuset: str = ""
    memory: list[MemoryBlock] = field(default_factory=list)
    devices: list[DeviceAllocation] = field(default_factory=list)


def _state(
    root: Path, issues: _Issues
) -> tuple[CpuManagerState | None, dict[tuple[str, str], _Holding], DeviceCheckpoint | None]:
    state = root / DEFAULT_ROOT_DIR.lstrip("/")

    def raw(path: Path, what: str) -> bytes:
        return read_capped(path, limit=STATE_LIMIT, what=what, source=_on_node(root, path))

    cpu_file, mem_file = state / "cpu_manager_state", state / "memory_manager_state"
    cpu = issues.attempt(
        "cpu_manager_state",
        lambda: parse_cpu_manager_state(
            raw(cpu_file, "a cpu_manager_state checkpoint"), source=_on_node(root, cpu_file)
        ),
    )
    mem = issues.attempt(
        "memory_manager_state",
        lambda: parse_memory_manager_state(
            raw(mem_file, "a memory_manager_state checkpoint"), source=_on_node(root, mem_file)
        ),
    )
    checkpoint = state / "device-plugins" / "kubelet_internal_checkpoint"
    devices = issues.attempt(
        "device checkpoint",
        lambda: parse_device_checkpoint(
            raw(checkpoint, "a device manager checkpoint"), source=_on_node(root, checkpoint)
        ),
    )
    held: dict[tuple[str, str], _Holding] = defaultdict(_Holding)
    for uid, containers in (cpu.entries if cpu else {}).items():
        for container, cpuset in containers.items():
            held[(uid, container)].cpuset = str(cpuset)
    for uid, memory in (mem.entries if mem else {}).items():
        for container, blocks in memory.items():
            held[(uid, container)].memory = [
                MemoryBlock(type=b.type, size=b.size, numa=list(b.numa_affinity)) for b in blocks
            ]
    for e in devices.entries if devices else ():
        ids = [dev for _, group in sorted(e.devices.items()) for dev in group]
        held[(e.pod_uid, e.container)].devices.append(DeviceAllocation(resource=e.resource, ids=ids))
    return cpu, held, devices


def _state_files(root: Path) -> list[StateFile]:
    """The checkpoints as the kubelet's ``restoreState`` meets them at its next start."""
    state = root / DEFAULT_ROOT_DIR.lstrip("/")
    found = []
    files: tuple[tuple[Literal["cpu", "memory"], str], ...] = (
        ("cpu", "cpu_manager_state"),
        ("memory", "memory_manager_state"),
    )
    for manager, name in files:
        record = read_state_file(state / name, manager=manager, shown=f"{DEFAULT_ROOT_DIR}/{name}")
        if record is not None:
            found.append(record)
    return found


def _device_numa(root: Path, device_id: str, issues: _Issues) -> list[int] | None:
    """A device's NUMA node from PCI sysfs; an unreadable ``numa_node`` is an issue, not a lost node."""
    return issues.attempt(f"device {device_id}", lambda: _pci_numa(root, device_id))


def _devices(root: Path, checkpoint: DeviceCheckpoint | None, issues: _Issues) -> list[Device]:
    """Registered devices; NUMA from allocated entries or PCI sysfs (otherwise it is not on disk)."""
    if checkpoint is None:
        return []
    numa: dict[str, list[int]] = defaultdict(list)
    for e in checkpoint.entries:
        for node, group in e.devices.items():
            for dev in group:
                if node >= 0:
                    numa[dev].append(node)
    devices = [
        Device(resource=resource, id=dev, numa=numa.get(dev) or _device_numa(root, dev, issues))
        for resource, ids in checkpoint.registered.items()
        for dev in ids
    ]
    unplaced = sum(d.numa is None for d in devices)
    if unplaced:
        issues.append(
            Issue(
                source="device checkpoint",
                severity="warning",
                message=f"NUMA affinity of {unplaced} device(s) is not on disk (device plugins report it at run "
                "time); they are treated as having no topology",
            )
        )
    return devices


def read_node_root(root: str | Path, *, name: str, running: bytes | None = None) -> Node:
    """Build a Node from ``root`` laid out as a node's file system; ``running`` is the kubelet's
    ``/proc/<pid>/cmdline`` when it was collected (it beats the systemd unit)."""
    root = Path(root)
    try:
        sysfs = (root / NODE_SYSFS).is_dir() or (root / CPU_SYSFS).is_dir()
    except OSError as exc:  # a name too long, say
        raise InputError(f"cannot read: {exc.strerror}", source=str(root)) from None
    if not sysfs:
        raise InputError(f"no {NODE_SYSFS} or {CPU_SYSFS} here: expected a copy of a node's files", source=str(root))
    issues = _Issues()
    zones, cpus, topology_issues = read_topology(root)
    issues += topology_issues
    kubelet = _kubelet(root, issues, running)
    cpu_state, held, checkpoint = _state(root, issues)
    numa_of = {c.cpu: c.numa for c in cpus}
    allocations = [
        Allocation(
            pod_uid=uid,
            namespace="",
            pod="",
            container=container,
            cpuset=h.cpuset,
            exclusive=bool(h.cpuset),
            numa=sorted({numa_of[c] for c in CPUSet.parse(h.cpuset) if c in numa_of}),
            memory=h.memory,
            devices=h.devices,
        )
        for (uid, container), h in sorted(held.items())
    ]
    return Node(
        name=name,
        kubelet=kubelet,
        cpus=cpus,
        numa=zones,
        devices=_devices(root, checkpoint, issues),
        shared_pool=str(cpu_state.default_cpuset) if cpu_state else None,
        allocations=allocations,
        state_files=_state_files(root),
        issues=list(issues),
    )
