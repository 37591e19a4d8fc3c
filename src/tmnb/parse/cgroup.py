"""Container cgroups: whose container a kubepods cgroup path is.

A kubepods cgroup path (the node collector lists each with its effective cpuset) tells whose
container it is: systemd driver ``…/kubepods-burstable-pod<uid with _>.slice/cri-containerd-<id>.scope``
(Guaranteed pods have no QoS slice), cgroupfs driver ``/kubepods/burstable/pod<uid>/<id>``, and the
OCI ``cgroupsPath`` form ``kubepods-pod<uid>.slice:cri-containerd:<id>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Qos = Literal["guaranteed", "burstable", "besteffort"]
#: The QoS classes a kubepods slice or folder names; a pod directly under kubepods is guaranteed.
_NAMED_QOS: dict[str, Qos] = {"burstable": "burstable", "besteffort": "besteffort"}

_SYSTEMD_POD = re.compile(r"kubepods(?:-(burstable|besteffort))?-pod([0-9a-fA-F_]+)\.slice$")
_SYSTEMD_SCOPE = re.compile(r"^(cri-containerd|crio|docker|crio-conmon)-([0-9a-f]{64})\.scope$")
_CGROUPFS_POD = re.compile(r"^pod([0-9a-fA-F-]+)$")
_CGROUPFS_CONTAINER = re.compile(r"^(?:(crio)-)?([0-9a-f]{64})$")
_OCI_SYSTEMD = re.compile(r"^(?P<slice>[^:/]+\.slice):(?P<prefix>[^:]+):(?P<id>[0-9a-f]{64})$")


@dataclass(frozen=True)
class KubeCgroupRef:
    """Whose cgroup a path is. ``container_id`` is None for the pod-level cgroup and for conmon."""

    pod_uid: str
    qos: Qos
    driver: Literal["systemd", "cgroupfs"]
    container_id: str | None = None
    runtime: str | None = None


def parse_kube_cgroup_path(path: str) -> KubeCgroupRef | None:
    """Identify a kubepods cgroup path (systemd, cgroupfs or OCI ``slice:prefix:id``); None if the
    path is not under a pod (system services, the kubepods root, QoS slices)."""
    oci = _OCI_SYSTEMD.match(path)
    if oci:
        pod = _SYSTEMD_POD.search(oci.group("slice"))
        if not pod:
            return None
        return KubeCgroupRef(
            pod_uid=pod.group(2).replace("_", "-"),
            qos=_NAMED_QOS.get(pod.group(1) or "", "guaranteed"),
            driver="systemd",
            container_id=oci.group("id"),
            runtime=oci.group("prefix"),
        )
    parts = [p for p in path.split("/") if p]
    for i, part in enumerate(parts):
        pod = _SYSTEMD_POD.search(part)
        if pod:
            qos = _NAMED_QOS.get(pod.group(1) or "", "guaranteed")
            ref = KubeCgroupRef(pod.group(2).replace("_", "-"), qos, "systemd")
            if i + 1 < len(parts):
                scope = _SYSTEMD_SCOPE.match(parts[i + 1])
                if scope:
                    runtime = scope.group(1)
                    cid = None if runtime == "crio-conmon" else scope.group(2)
                    return KubeCgroupRef(ref.pod_uid, ref.qos, "systemd", cid, runtime)
            return ref
        if part == "kubepods":
            return _cgroupfs(parts[i + 1 :])
    return None


def _cgroupfs(rest: list[str]) -> KubeCgroupRef | None:
    qos: Qos = "guaranteed"
    if rest and rest[0] in _NAMED_QOS:
        qos = _NAMED_QOS[rest[0]]
        rest = rest[1:]
    if not rest:
        return None
    pod = _CGROUPFS_POD.match(rest[0])
    if not pod:
        return None
    container = _CGROUPFS_CONTAINER.match(rest[1]) if len(rest) > 1 else None
    if container is None:
        return KubeCgroupRef(pod.group(1), qos, "cgroupfs")
    return KubeCgroupRef(pod.group(1), qos, "cgroupfs", container.group(2), container.group(1))
