"""kubepods cgroup paths (systemd, cgroupfs, OCI), some as captured in /proc/<pid>/cgroup."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.parse.cgroup import KubeCgroupRef, parse_kube_cgroup_path

CGROUP = Path(__file__).parents[1] / "fixtures" / "node" / "cgroup"
CID = "4f1d2c3b5a69e0f7d8c9b0a1e2f3d4c5b6a7980e1f2d3c4b5a6978e0f1d2c3b4"


def captured_path(name: str, controllers: str) -> str:
    """The path on the line of one hierarchy ("" for cgroup v2's unified line) of a captured file."""
    for line in (CGROUP / name).read_text().splitlines():
        _, listed, path = line.split(":", 2)
        if listed == controllers:
            return path
    raise AssertionError(f"no {controllers!r} line in {name}")


def test_cgroup_v2_guaranteed_pod_systemd_containerd() -> None:
    assert parse_kube_cgroup_path(captured_path("proc-pid-cgroup.v2", "")) == KubeCgroupRef(
        "8c1f5a1e-3f0b-4d2a-9a7e-2b6f1c3d4e5f", "guaranteed", "systemd", CID, "cri-containerd"
    )


def test_cgroup_v1_burstable_cgroupfs() -> None:
    ref = parse_kube_cgroup_path(captured_path("proc-pid-cgroup.v1", "cpuset"))
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
