"""/proc/<pid>/cgroup lines, kubepods cgroup paths (systemd, cgroupfs, OCI) and cpuset files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.cgroup import (
    CPUSET_FILES,
    KubeCgroupRef,
    cpuset_cgroup,
    parse_cpuset_file,
    parse_kube_cgroup_path,
    parse_proc_cgroup,
)

CGROUP = Path(__file__).parents[1] / "fixtures" / "node" / "cgroup"
CID = "4f1d2c3b5a69e0f7d8c9b0a1e2f3d4c5b6a7980e1f2d3c4b5a6978e0f1d2c3b4"


def test_cgroup_v2_guaranteed_pod_systemd_containerd() -> None:
    lines = parse_proc_cgroup((CGROUP / "proc-pid-cgroup.v2").read_text(), source="/proc/41872/cgroup")
    path, version = cpuset_cgroup(lines, source="x")
    assert version == "v2" and CPUSET_FILES[version][0] == "cpuset.cpus.effective"
    assert parse_kube_cgroup_path(path) == KubeCgroupRef(
        "8c1f5a1e-3f0b-4d2a-9a7e-2b6f1c3d4e5f", "guaranteed", "systemd", CID, "cri-containerd"
    )
    assert parse_cpuset_file((CGROUP / "cpuset.cpus.effective").read_text(), source="f") == CPUSet.parse("2-3,34-35")


def test_cgroup_v1_burstable_cgroupfs() -> None:
    lines = parse_proc_cgroup((CGROUP / "proc-pid-cgroup.v1").read_text(), source="/proc/1/cgroup")
    assert lines[1].controllers == ("cpuset",) and lines[-1].hierarchy == 0
    assert lines[4].controllers == ("cpu", "cpuacct")
    path, version = cpuset_cgroup(lines, source="x")
    assert version == "v1" and CPUSET_FILES[version][0] == "cpuset.effective_cpus"
    ref = parse_kube_cgroup_path(path)
    assert ref is not None and (ref.pod_uid, ref.qos, ref.driver) == (
        "0e7c9a52-1d3b-4c8e-8f61-5a2b7d9c3e14",
        "burstable",
        "cgroupfs",
    )
    assert ref.container_id == "9b5e0c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (
            "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podd5e3a8f0_4d51_4b0e_8e3d_2a1c4f5a8b9c.slice/crio-"
            + CID
            + ".scope",
            KubeCgroupRef("d5e3a8f0-4d51-4b0e-8e3d-2a1c4f5a8b9c", "burstable", "systemd", CID, "crio"),
        ),
        (
            "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podd5e3a8f0_4d51_4b0e_8e3d_2a1c4f5a8b9c.slice/crio-conmon-"
            + CID
            + ".scope",
            KubeCgroupRef("d5e3a8f0-4d51-4b0e-8e3d-2a1c4f5a8b9c", "besteffort", "systemd", None, "crio-conmon"),
        ),
        (
            "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-podd5e3a8f0_4d51_4b0e_8e3d_2a1c4f5a8b9c.slice",
            KubeCgroupRef("d5e3a8f0-4d51-4b0e-8e3d-2a1c4f5a8b9c", "guaranteed", "systemd"),
        ),
        (
            "kubepods-burstable-pod6b1c0c2e_8a7e_4f38_9d7b_2a9a3c1e5f10.slice:cri-containerd:" + CID,
            KubeCgroupRef("6b1c0c2e-8a7e-4f38-9d7b-2a9a3c1e5f10", "burstable", "systemd", CID, "cri-containerd"),
        ),
        (
            "/kubepods/pod6b1c0c2e-8a7e-4f38-9d7b-2a9a3c1e5f10/crio-" + CID,
            KubeCgroupRef("6b1c0c2e-8a7e-4f38-9d7b-2a9a3c1e5f10", "guaranteed", "cgroupfs", CID, "crio"),
        ),
        (
            "/kubepods/besteffort/pod0a1b2c3d4e5f60718293a4b5c6d7e8f9",  # a static pod's hash UID
            KubeCgroupRef("0a1b2c3d4e5f60718293a4b5c6d7e8f9", "besteffort", "cgroupfs"),
        ),
        ("/system.slice/containerd.service", None),
        ("/kubepods.slice/kubepods-burstable.slice", None),
        ("/kubepods/burstable", None),
        ("/kubepods/burstable/notapod/x", None),
        ("/", None),
        ("system.slice:cri-containerd:" + CID, None),
    ],
)
def test_kube_cgroup_paths(path: str, expected: KubeCgroupRef | None) -> None:
    assert parse_kube_cgroup_path(path) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("cpuset:/kubepods\n", "ID:controllers:/path"), ("0::/\n12:cpuset\n", "ID:controllers:/path")],
)
def test_malformed_proc_cgroup(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_proc_cgroup(text, source="/proc/1/cgroup")


def test_no_cpuset_hierarchy() -> None:
    lines = parse_proc_cgroup("3:memory:/a\n", source="p")
    with pytest.raises(InputError, match="no cpuset controller line"):
        cpuset_cgroup(lines, source="p")


def test_malformed_cpuset_file() -> None:
    with pytest.raises(InputError, match="invalid CPU list"):
        parse_cpuset_file("0-3,x\n", source="cpuset.cpus.effective")
    assert parse_cpuset_file("\n", source="cpuset.cpus") == CPUSet()
