"""A sandbox node's kubelet journal, as ``journalctl -u kubelet -o short-iso`` prints a real one.

Each line has journalctl's prefix (time with zone, host, identifier[pid]) and either a klog
structured line of the kubelet (header ``Lmmdd hh:mm:ss.uuuuuu pid file:line]``, the message
Go-quoted, then key=value pairs) or one of systemd's lines about the unit. The node collector
reads the file as a text journal (``/journal.log``), so a sandbox collection exercises the same
parser as a real node's excerpt. Sources are the kubelet's own ``file:line`` as real kubelets
print them (line numbers move between releases; readers go by the message).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tmnb.parse.klog_values import format_value

#: the unit as kubeadm's kubelet.service describes it (tmnb.sources.node_render writes the same)
UNIT = "kubelet.service - kubelet: The Kubernetes Node Agent"
#: the kubelet's sources for the lines the sandbox writes
KUBELET_VERSION = "server.go:529"
TOPOLOGY_MANAGER = "topology_manager.go:136"
TOPOLOGY_MANAGER_NONE = "topology_manager.go:138"
CPU_MANAGER = "cpu_manager.go:223"
#: per manager, where its ``Start`` logs a checkpoint it cannot restore and a policy that refuses the state
MANAGER_START = {
    "cpu": (CPU_MANAGER, "cpu_manager.go:253"),
    "memory": ("memory_manager.go:199", "memory_manager.go:206"),
}
CONTAINER_MANAGER = "kubelet.go:1392"
ADMISSION = "kubelet.go:2357"
COMMAND = "run.go:74"


def _prefix(host: str, ident: str, pid: int, now: datetime) -> str:
    return f"{now:%Y-%m-%dT%H:%M:%S%z} {host} {ident}[{pid}]: "


def klog(host: str, pid: int, level: str, source: str, message: str, /, **values: object) -> str:
    """One structured klog line of the kubelet (``values`` in the order the kubelet logs them)."""
    now = datetime.now(UTC)
    pairs = "".join(f" {key}={format_value(value)}" for key, value in values.items())
    header = f"{level}{now:%m%d %H:%M:%S.%f} {pid:>7} {source}]"
    return f"{_prefix(host, 'kubelet', pid, now)}{header} {json.dumps(message, ensure_ascii=False)}{pairs}"


def systemd(host: str, text: str) -> str:
    return _prefix(host, "systemd", 1, datetime.now(UTC)) + text


def stopped(host: str) -> list[str]:
    """``systemctl stop kubelet`` of a running kubelet."""
    return [systemd(host, f"Stopping {UNIT}..."), systemd(host, "kubelet.service: Deactivated successfully."),
            systemd(host, f"Stopped {UNIT}.")]  # fmt: skip


def started(host: str) -> list[str]:
    return [systemd(host, f"Started {UNIT}.")]


def exited(host: str) -> list[str]:
    """The kubelet exited with status 1 at start-up."""
    return [systemd(host, "kubelet.service: Main process exited, code=exited, status=1/FAILURE"),
            systemd(host, "kubelet.service: Failed with result 'exit-code'.")]  # fmt: skip
