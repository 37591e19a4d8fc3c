"""One profile per kubelet minor, and nothing else in tmnb that compares versions.

Expected values come from the kubelet trees of each minor (../shared/facts/kubelet-versions.md and
docs/kubelet-minors.md), not from the table under test.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tmnb.errors import InputError
from tmnb.kubelet import profiles
from tmnb.kubelet.profiles import parse_minor, profile, resolve
from tmnb.settings import target
from tmnb.versions import KubeVersion

PACKAGE = Path(profiles.__file__).parents[1]
#: The one place allowed to order versions; versions.py defines the ordering itself.
ALLOWED = {"kubelet/profiles.py", "versions.py"}


def _is_version(side: ast.expr) -> bool:
    text = ast.unparse(side).lower()
    return "version" in text or text.endswith(".minor") or re.search(r"_since\b", text) is not None


def _orders_versions(node: ast.AST) -> bool:
    """A <, <=, >, >= comparison with a version or a minor on either side, or a version or a minor
    subtracted: a distance between minors is an order, compared wherever it goes next."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return _is_version(node.left) or _is_version(node.right)
    if not isinstance(node, ast.Compare) or not any(
        isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE) for op in node.ops
    ):
        return False
    return any(_is_version(side) for side in (node.left, *node.comparators))


def _comparisons(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel in ALLOWED:
            continue
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if _orders_versions(node):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_version_comparison_outside_the_profiles():
    assert _comparisons(PACKAGE) == []


def test_the_scan_finds_a_comparison(tmp_path: Path):
    (tmp_path / "rule.py").write_text("def f(version):\n    return version.minor < 30\n")
    (tmp_path / "since.py").write_text("def g(v):\n    return v >= DROPIN_SINCE\n")
    (tmp_path / "skew.py").write_text(
        "def h(server, kubelet):\n    lag = server.minor - kubelet.minor\n    return lag > 3\n"
    )
    assert len(_comparisons(tmp_path)) == 3


@pytest.mark.parametrize(
    ("minor", "pod_level", "device_nodes", "empty_best_effort", "cgroup_v1"),
    [
        (33, "pinned", False, True, False),
        (34, "skipped-with-gate", False, True, False),
        (35, "skipped-with-gate", False, True, True),
        (36, "skipped-unless-pod-level-managers", True, True, True),
        (37, "skipped-unless-pod-level-managers", True, False, True),
    ],
)
def test_behaviour_facts_per_minor(minor, pod_level, device_nodes, empty_best_effort, cgroup_v1):
    p = profile(minor)
    assert p.pod_level_resources == pod_level
    assert p.device_hints_over_device_nodes is device_nodes
    assert p.empty_pod_resources_best_effort(None) is empty_best_effort
    assert p.fail_cgroup_v1 is cgroup_v1


def test_gate_facts():
    # kube_features.go of each tree
    assert profile(35).gates["MemoryManager"].locked
    assert "MemoryManager" not in profile(36).gates
    assert not profile(35).gates["TopologyManagerPolicyOptions"].locked
    assert profile(36).gates["TopologyManagerPolicyOptions"].locked
    assert profile(36).gate_default("PodLevelResourceManagers") is False
    assert profile(34).gate_default("PodLevelResources") is True
    assert profile(33).gate_default("PodLevelResources") is False
    assert profile(34).gate_dependencies == {}
    assert "PodLevelResources" in profile(36).gate_dependencies["InPlacePodLevelResourcesVerticalScaling"]


def test_fields_per_minor():
    assert not profile(35).knows_field("memoryReservationPolicy")
    assert profile(36).knows_field("memoryReservationPolicy")
    assert profile(36).field_since("defaultPodSysctls") == 37
    assert profile(37).field_since("defaultPodSysctls") is None


def test_a_node_outside_the_minors_is_the_nearest_and_not_modelled():
    old, new = resolve(KubeVersion(1, 30, 4)), resolve(KubeVersion(1, 38, 1))
    assert (old.profile.minor, old.modelled) == (33, False)
    assert (new.profile.minor, new.modelled) == (37, False)
    assert "v1.38.1" in (new.note() or "")
    own = resolve(KubeVersion(1, 35, 6))
    assert (own.profile.minor, own.modelled, own.note()) == (35, True, None)
    assert resolve(None).note() == "kubelet version unknown: predicted as kubelet 1.36"


@pytest.mark.parametrize(
    ("server", "kubelet", "skew", "lag"),
    [
        ((1, 36, 2), (1, 36, 0), "same", 0),
        ((1, 36, 2), (1, 33, 9), "behind", 3),  # kubelets may be up to three minors older (1.28+)
        ((1, 36, 2), (1, 32, 9), "beyond", 4),
        ((1, 35, 0), (1, 36, 0), "ahead", -1),  # and never newer than the API server
        ((2, 0, 0), (1, 36, 0), "beyond", None),
        ((1, 36, 0), (2, 0, 0), "ahead", None),
    ],
)
def test_kubelet_skew_follows_the_version_skew_policy(server, kubelet, skew, lag):
    """kubernetes.io/releases/version-skew-policy: kubelet must not be newer than kube-apiserver, and may
    be up to three minor versions older."""
    assert profiles.kubelet_skew(KubeVersion(*server), KubeVersion(*kubelet)) == (skew, lag)


def test_a_kubelet_older_than_a_gate_does_not_have_it():
    quota = "DisableCPUQuotaWithExclusiveCPUs"
    assert resolve(KubeVersion(1, 32, 0)).gate_on(quota, {}) is False
    assert resolve(KubeVersion(1, 33, 0)).gate_on(quota, {}) is True


@pytest.mark.parametrize("text", ["1.37", "v1.37.2", "1.33"])
def test_parse_minor(text):
    assert parse_minor(text, where="--kubelet-version").name == text.lstrip("v")[:4]


@pytest.mark.parametrize("text", ["1.32", "1.38", "2.0", "latest", ""])
def test_parse_minor_refuses_unsupported(text):
    with pytest.raises(InputError, match=re.escape("1.33, 1.34, 1.35, 1.36, 1.37")):
        parse_minor(text, where="--kubelet-version")


def test_the_target_key_is_the_profiles_key():
    assert target.KUBELET_VERSION == profiles.KUBELET_VERSION


@pytest.mark.parametrize(
    ("minor", "gates", "cpu", "memory", "memory_zero"),
    [
        # 1.33-1.35 restoreState: v1, then v2 (cpumanager/state/state_checkpoint.go 33:90-106); the memory
        # checkpoint is one struct whose VerifyChecksum has no zero escape
        (33, None, ["v1", "v2"], ["v1"], False),
        (35, None, ["v1", "v2"], ["v1"], False),
        # 1.36 loadAndMigrateCheckpointV2 / V3 (36:221), memory loadCheckpointV1 / loadAndMigrateCheckpointV2
        (36, None, ["v2", "v1"], ["v1"], True),
        (36, {"PodLevelResourceManagers": True}, ["v3", "v2", "v1"], ["v2", "v1"], False),
    ],
)
def test_checkpoint_read_order_per_minor(minor, gates, cpu, memory, memory_zero):
    p = profile(minor)
    assert [f.version for f in p.cpu_state_formats(gates)] == cpu
    assert [f.version for f in p.memory_state_formats(gates)] == memory
    assert p.memory_state_formats(gates)[0].zero_checksum is memory_zero


@pytest.mark.parametrize(("minor", "counts"), [(33, True), (34, True), (35, True), (36, True), (37, False)])
def test_strict_state_check_follows_the_tree_read(minor, counts):
    # OpenShift's trees compare the state with every CPU (policy_static.go 36:270-291), upstream (1.37)
    # with every CPU less the strictly reserved ones
    assert profile(minor).state_check_counts_reserved is counts


def test_v1_migration_error_words_per_minor():
    inner = "containerID 'x' not found in initial containers list"
    assert (
        profile(35).cpu_v1_migration_error(inner)
        == f"error migrating v1 checkpoint state to v2 checkpoint state: {inner}"
    )
    assert profile(36).cpu_v1_migration_error(inner) == f"failed to migrate checkpoint from v1 to v2: {inner}"


def test_device_restart_running_check_by_patch():
    """#135485 reached 1.34.7, 1.35.4 and 1.36.0; 1.33 never had it (kubelet-versions.md)."""
    from tmnb.kubelet.profiles import profile

    assert [profile(34).device_counts_any_running_id(p) for p in (6, 7)] == [False, True]
    assert [profile(35).device_counts_any_running_id(p) for p in (3, 4)] == [False, True]
    assert profile(36).device_counts_any_running_id(0) and not profile(33).device_counts_any_running_id(13)
    assert [profile(m).device_counts_any_running_id(None) for m in (33, 34, 35, 36, 37)] == [False, *[True] * 4]
