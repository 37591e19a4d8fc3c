"""Taints and tolerations matched as Kubernetes matches them.

The toleration cases are those of TestTolerationToleratesTaint and TestTolerationsTolerateTaintsWithFilter
(k8s.io/api core/v1, toleration_test.go and taint_test.go); the cordon cases those of the scheduler's
NodeUnschedulable filter (a pod that tolerates node.kubernetes.io/unschedulable:NoSchedule passes a cordon).
"""

from __future__ import annotations

import pytest

from factories import node, pod, snapshot
from published_schema import schema_errors
from tmnb.errors import InputError
from tmnb.snapshot import Taint, Toleration, from_dict, to_dict
from tmnb.snapshot.taints import CORDON_TAINT, cordoned, keeps_off, taint_text, tolerates, untolerated

FOO = Taint(key="foo", effect="NoSchedule")
FOO_BAR = Taint(key="foo", value="bar", effect="NoSchedule")


@pytest.mark.parametrize(
    ("toleration", "taint", "expected"),
    [
        (Toleration(key="foo", operator="Exists", effect="NoSchedule"), FOO, True),
        (Toleration(key="foo", operator="Exists", effect="NoSchedule"), FOO_BAR, True),
        (Toleration(key="", operator="Exists", effect="NoSchedule"), FOO_BAR, True),  # empty key: every taint
        (Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"), FOO_BAR, True),
        (Toleration(key="foo", operator="Equal", value="value1", effect="NoSchedule"),
         Taint(key="foo", value="value2", effect="NoSchedule"), False),
        (Toleration(key="foo", operator="Equal", value="bar", effect="NoSchedule"),
         Taint(key="foo", value="bar", effect="NoExecute"), False),
        (Toleration(key="foo", value="bar"), Taint(key="foo", value="bar", effect="NoExecute"), True),  # no effect: all
        (Toleration(key="foo", operator="", value="bar", effect="NoSchedule"), FOO_BAR, True),  # empty operator: Equal
        (Toleration(key="foo", operator="Gt", value="1", effect="NoSchedule"),
         Taint(key="foo", value="2", effect="NoSchedule"), False),  # behind an alpha gate, off by default
    ],
)  # fmt: skip
def test_a_toleration_tolerates_a_taint_as_kubernetes_says(
    toleration: Toleration, taint: Taint, expected: bool
) -> None:
    assert tolerates(toleration, taint) is expected


def test_untolerated_keeps_only_the_effects_asked_for_in_node_order() -> None:
    exists_foo_noexecute = [Toleration(key="foo", operator="Exists", effect="NoExecute")]
    taints = [Taint(key="foo", effect="NoExecute"), Taint(key="bar", effect="NoSchedule")]
    assert untolerated(taints, exists_foo_noexecute, ("NoExecute",)) == []
    assert untolerated(taints, exists_foo_noexecute) == [taints[1]]
    assert untolerated([Taint(key="x", effect="PreferNoSchedule")], []) == []  # only lowers the score
    assert untolerated([], [Toleration(key="foo", operator="Exists")]) == []


def test_the_scheduler_keeps_a_pod_off_a_cordon_unless_it_tolerates_the_cordons_taint() -> None:
    cordon = node("w1", unschedulable=True)
    assert cordoned(cordon) and keeps_off(cordon, []) == "cordoned"
    daemon = [Toleration(key=CORDON_TAINT, operator="Exists", effect="NoSchedule")]  # the DaemonSet controller's
    assert keeps_off(cordon, daemon) == ""
    assert keeps_off(cordon, [Toleration(operator="Exists")]) == ""
    only_the_taint = node("w2", taints=[Taint(key=CORDON_TAINT, effect="NoSchedule")])
    assert cordoned(only_the_taint) and keeps_off(only_the_taint, []) == "cordoned"


def test_a_taint_the_pod_does_not_tolerate_is_named_as_kubectl_writes_it() -> None:
    gpu = node("g1", taints=[Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule"),
                             Taint(key="dedicated", value="ml", effect="PreferNoSchedule")])  # fmt: skip
    assert keeps_off(gpu, []) == "tainted nvidia.com/gpu=present:NoSchedule, which the pod does not tolerate"
    assert keeps_off(gpu, [Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")]) == ""
    assert taint_text(Taint(key=CORDON_TAINT, effect="NoSchedule")) == "node.kubernetes.io/unschedulable:NoSchedule"
    assert not cordoned(gpu)


def test_files_written_before_taints_load_without_them_and_a_bad_effect_is_refused_with_its_path() -> None:
    """The fields were added without a schema bump (docs/snapshot.md): a node or pod without them reads as
    untainted and tolerating nothing, for the model and for the published schema alike."""
    document = to_dict(snapshot([node("w1")], [pod("p")]))
    del document["nodes"][0]["taints"], document["pods"][0]["tolerations"]
    assert schema_errors(document) == []
    older = from_dict(document)
    assert older.nodes[0].taints == [] and older.pods[0].tolerations == []
    document["nodes"][0]["taints"] = [{"key": "a", "effect": "NoScheduleX"}]
    assert schema_errors(document)
    with pytest.raises(InputError, match=r"\$\.nodes\[0\]\.taints\[0\]\.effect"):
        from_dict(document)
