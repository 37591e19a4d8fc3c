"""How the two minors' resource managers treat the node's pods: pods with pod-level resources (and
their QoS class), and device hints on a node whose devices sit on some NUMA nodes only."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.analysis.upgrade.gates import AREA, feature_gates
from tmnb.kubelet.names import TOPOLOGY_NONE
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.replay import ACTIVE_PHASES, model_pod
from tmnb.snapshot import Node


def pod_level_handling(profile: KubeletProfile, gates: Mapping[str, object] | None) -> str:
    """How ``profile``'s static CPU and Memory managers treat a pod with pod-level ``spec.resources``."""
    skips = profile.skips_pod_level_resources(gates)
    if skips is None:
        return "allocated as one pod-level block (PodLevelResources and PodLevelResourceManagers on)"
    if skips:
        return "skipped: no NUMA hints and no exclusive CPUs or memory"
    return "pinned as its containers ask (the managers do not read spec.resources)"


def _pod_level(c: LintContext) -> Iterator[Hit]:
    if not c.plan.upgrades:
        return
    gates_today, gates_after = feature_gates(c.plan.current) or {}, feature_gates(c.plan.planned) or {}
    before, after = pod_level_handling(c.today, gates_today), pod_level_handling(c.profile, gates_after)
    qos_before = c.today.empty_pod_resources_best_effort(gates_today)
    qos_after = c.profile.empty_pod_resources_best_effort(gates_after)
    for pod in c.pods:
        if pod.phase not in ACTIVE_PHASES:
            continue
        model = model_pod(pod)
        if model.pod_level_resources_set and before != after:
            yield Hit(
                f"{pod.namespace}/{pod.name}",
                f"as kubelet {c.today.name}: {before}",
                f"as kubelet {c.profile.name}: {after}",
                f"The pod sets pod-level resources (spec.resources). Kubelet {c.today.name}'s static CPU and Memory "
                f"managers: {before}; kubelet {c.profile.name}'s: {after}.",
            )
        elif model.pod_resources_given and not model.has_pod_level_resources and qos_before != qos_after:
            yield Hit(
                f"{pod.namespace}/{pod.name}",
                f"QoS as kubelet {c.today.name}",
                f"QoS as kubelet {c.profile.name}",
                f"The pod has an empty spec.resources: kubelet {c.today.name} "
                f"{'treats it as BestEffort' if qos_before else 'takes its QoS class from its containers'}, kubelet "
                f"{c.profile.name} "
                f"{'treats it as BestEffort' if qos_after else 'takes its QoS class from its containers'} "
                "(PodLevelResourcesFixKubeletQOSClass, #137150).",
            )


UPGRADE_POD_LEVEL_RESOURCES = Rule[LintContext](
    "upgrade.pod-level-resources",
    AREA,
    "warning",
    "Check the pod's placement in the upgrade table, and move its resources to its containers if it needs pinning.",
    _pod_level,
    summary="the planned minor's resource managers treat a pod with pod-level resources differently",
)


def device_nodes(node: Node) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for device in node.devices:
        out.setdefault(device.resource, set()).update(device.numa or ())
    return out


def _device_hints(c: LintContext) -> Iterator[Hit]:
    if not c.plan.upgrades or c.today.device_hints_over_device_nodes == c.profile.device_hints_over_device_nodes:
        return
    if c.plan.planned.get("topologyManagerPolicy", TOPOLOGY_NONE) == TOPOLOGY_NONE:
        return
    zones = {z.id for z in c.node.numa}
    for resource, hosting in sorted(device_nodes(c.node).items()):
        hosting &= zones
        if not hosting or hosting == zones:
            continue  # hints over all NUMA nodes either way
        before, after = _hint_words(c.today, hosting, zones), _hint_words(c.profile, hosting, zones)
        yield Hit(
            resource,
            f"as kubelet {c.today.name}: hints {before}",
            f"as kubelet {c.profile.name}: hints {after}",
            f"Kubelet {c.profile.name} offers {resource} hints {after}; kubelet {c.today.name} offers them {before} "
            f"(#138244). Pods asking for {resource} may be admitted or aligned differently.",
        )


def _hint_words(profile: KubeletProfile, hosting: set[int], zones: set[int]) -> str:
    if profile.device_hints_over_device_nodes:
        return f"only over the NUMA nodes holding its devices ({', '.join(map(str, sorted(hosting)))})"
    return f"over all {len(zones)} NUMA nodes, adding the wider masks with NUMA nodes that hold none"


UPGRADE_DEVICE_HINTS = Rule[LintContext](
    "upgrade.device-hints",
    AREA,
    "info",
    "Check the pods asking for {setting} in the upgrade table (pods admitted or pinned differently).",
    _device_hints,
    summary="the planned minor's device hints differ on a node whose devices sit on some NUMA nodes only",
)
