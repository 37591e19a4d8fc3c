"""What the kubelet would do with each pod under target settings: the replay behind readiness.

Each node's active pods are admitted in creation order by ``tmnb.kubelet`` with the node's
settings overlaid by the target. Mode ``drain`` starts from empty resource-manager state, as
after the drain + state-file removal a policy change requires. Mode ``restart`` is a kubelet restart
without a drain: the kubelet starts over today's state files (the snapshot's allocations and state
files, as today's kubelet wrote them), restores and validates them as the target minor does (a file
it refuses, such as one written under another policy or reservation, means it does not start, in
its words), then re-admits the running pods as one batch: nothing is cleaned up until the batch
ends, so a rejected pod's CPUs and memory, and those of pods deleted meanwhile, stay taken for the
rest of the batch; one clean-up pass follows.
"""

from __future__ import annotations

import multiprocessing
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from itertools import count, islice
from typing import Any, Protocol, TypeVar

import pandas as pd

from tmnb.collector import frozen
from tmnb.errors import ConfigRejected
from tmnb.kubelet.errors import Unpredictable
from tmnb.kubelet.node import NodeSimulator, PodResult
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.parse.quantity import parse_quantity
from tmnb.progress import disabled
from tmnb.replay import (
    Mode,
    NodePlan,
    config_refusal,
    model_for,
    model_pod,
    plan_for,
    plans_for,
    replay_order,
)
from tmnb.snapshot import Node, Pod, Snapshot

HEADROOM_LIMIT = 256
#: Headroom probes many admissions; beyond this many NUMA nodes each one enumerates 2^n masks.
HEADROOM_MAX_NUMA = 8
UNMODELLED = (
    "not predicted: the snapshot has no CPU and NUMA topology for this node (an API-only collection); "
    "collect the node's files (node collector: ssh, node pod or a copied root) to predict admission"
)
POD_COLUMNS = ["node", "namespace", "pod", "uid", "admitted", "reason", "message", "numa", "cpuset"]
#: Nodes per task of a pooled what-if (some tenths of a second of replay), and the fewest nodes for
#: which a pool pays for its start.
CHUNK = 64
POOL_MIN_NODES = 128


#: The node collector's steps that read the CPU and NUMA topology.
TOPOLOGY_STEPS = ("cpu topology", "numa")
T = TypeVar("T")


@dataclass
class NodeReplay:
    node: str
    results: list[PodResult]
    refused: str = ""
    unmodelled: str = ""
    headroom: dict[str, int | None] | None = None
    headroom_note: str = ""


def _row(node: str, r: PodResult) -> dict[str, Any]:
    return {
        "node": node,
        "namespace": r.namespace,
        "pod": r.name,
        "uid": r.uid,
        "admitted": r.admitted,
        "reason": r.reason,
        "message": r.message,
        "numa": {c.name: c.affinity.numa() for c in r.containers if c.affinity is not None and r.admitted},
        "cpuset": {c.name: str(c.cpuset) for c in r.containers if c.cpuset},
    }


def common_sizes(snapshot: Snapshot, count: int = 3) -> list[tuple[str, str]]:
    """The most frequent (cpu, memory) requests of Guaranteed single-container pods, whole CPUs only; among
    sizes as frequent, the smaller first (CPUs, then memory), so the pick does not depend on pod order."""
    sizes = Counter(
        (p.containers[0].requests.get("cpu", ""), p.containers[0].requests.get("memory", ""))
        for p in snapshot.pods
        if p.qos_class == "Guaranteed"
        and len(p.containers) == 1
        and parse_quantity(p.containers[0].requests.get("cpu", "0")) % 1 == 0
    )
    ranked = sorted(
        (s for s in sizes if s[0] and s[1]),
        key=lambda s: (-sizes[s], parse_quantity(s[0]), parse_quantity(s[1]), s),
    )
    return ranked[:count] or [("2", "4Gi"), ("4", "8Gi"), ("8", "16Gi")]


def _probes(cpu: str, memory: str) -> Iterator[ModelPod]:
    """Guaranteed pods of one size, one after another: each its own pod, all with the same (frozen)
    container, whose requests are parsed once for a node's hundreds of probes."""
    res = {"cpu": cpu, "memory": memory}
    containers = (ModelContainer("probe", res, res),)
    for i in count():
        yield ModelPod(
            uid=f"headroom-{cpu}-{memory}-{i}",
            name=f"probe-{i}",
            namespace="tmnb-headroom",
            containers=containers,
            qos_class="Guaranteed",
        )


def _fits(node: Node, admitted: Iterable[Pod], cpu: str, memory: str) -> int | None:
    """Pods of this size that still fit the node's allocatable (the kubelet's resource-fit check)."""
    left = {}
    for resource in ("cpu", "memory"):
        if resource not in node.allocatable:
            return None
        used = sum(parse_quantity(c.requests.get(resource, "0")) for p in admitted for c in p.containers)
        left[resource] = parse_quantity(node.allocatable[resource]) - used
    return max(int(min(left["cpu"] / parse_quantity(cpu), left["memory"] / parse_quantity(memory))), 0)


def headroom(
    node: Node, sim: NodeSimulator, admitted: list[tuple[Pod, ModelPod]], sizes: list[tuple[str, str]]
) -> dict[str, int | None]:
    """How many more Guaranteed pods of each size the node admits after the replay (``sim``, as the
    replay left it): the Topology Manager's answer capped by allocatable (None = at least
    HEADROOM_LIMIT, allocatable unknown). Each size's probes are admitted one by one, then removed as
    the kubelet removes a pod (every manager gives back what it took), so the next size starts from
    the same state; ``sim`` is left as it was."""
    out: dict[str, int | None] = {}
    for cpu, memory in sizes:
        fit = _fits(node, (p for p, _ in admitted), cpu, memory)
        limit = HEADROOM_LIMIT if fit is None else min(fit, HEADROOM_LIMIT)
        taken: list[ModelPod] = []
        probes = _probes(cpu, memory)
        while len(taken) < limit:
            probe = next(probes)
            if not sim.admits(probe):
                break
            taken.append(probe)
        for probe in taken:
            sim.remove_pod(probe)
        out[f"{cpu} CPU / {memory}"] = None if len(taken) == HEADROOM_LIMIT else len(taken)
    return out


def _no_topology(node: Node) -> str:
    """Why a node has no topology: what its collection could not read, else an API-only collection."""
    why = next((i.message for i in node.issues if i.source in TOPOLOGY_STEPS and i.severity != "info"), None)
    return f"not predicted: the node's CPU and NUMA topology could not be read: {why}" if why else UNMODELLED


def replay_node(
    node: Node,
    pods: Iterable[Pod],
    target: Mapping[str, Any],
    *,
    mode: Mode = "drain",
    sizes: list[tuple[str, str]] | None = None,
    plan: NodePlan | None = None,
) -> NodeReplay:
    if not node.cpus or not node.numa:
        return NodeReplay(node.name, [], unmodelled=_no_topology(node))
    refusal = config_refusal(node)
    if refusal is not None:
        return NodeReplay(node.name, [], refused=refusal)
    ordered = replay_order(pods)
    models = [model_pod(p) for p in ordered]
    try:
        model = model_for(plan if plan is not None else plan_for(node, target), mode)
        sim = NodeSimulator(model)
    except ConfigRejected as err:
        return NodeReplay(node.name, [], refused=err.message)
    except Unpredictable as err:
        return NodeReplay(node.name, [], unmodelled=err.message)
    results = sim.restart(models) if mode == "restart" else [sim.admit(p) for p in models]
    replay = NodeReplay(node.name, results)
    if sizes and len(node.numa) > HEADROOM_MAX_NUMA:
        replay.headroom_note = (
            f"not computed: with {len(node.numa)} NUMA nodes every admission enumerates 2^{len(node.numa)} NUMA masks"
        )
    elif sizes:
        kept = [(p, m) for p, m, r in zip(ordered, models, results, strict=True) if r.admitted]
        replay.headroom = headroom(node, sim, kept, sizes)
    return replay


class Fleet(Protocol):
    """What a what-if reads of a fleet: its nodes in order and each node's pods (a ``Snapshot``, or a
    fleet that builds its nodes on demand)."""

    @property
    def nodes(self) -> Sequence[Node]: ...

    def pods_on(self, node: str) -> list[Pod]: ...


#: Node rows of a what-if: per node, its pods' rows and its own row.
NodeRows = tuple[list[dict[str, Any]], dict[str, Any]]


def node_rows(
    fleet: Fleet,
    index: int,
    target: Mapping[str, Any],
    mode: Mode,
    sizes: list[tuple[str, str]] | None,
    plans: Mapping[str, NodePlan] | None,
) -> NodeRows:
    """The rows of the fleet's ``index``-th node: its pods' and its own."""
    node = fleet.nodes[index]
    plan = plans[node.name] if plans is not None else plan_for(node, target)
    replay = replay_node(node, fleet.pods_on(node.name), target, mode=mode, sizes=sizes, plan=plan)
    rows = [_row(node.name, r) for r in replay.results]
    # an upgrade what-if is predicted as the target minor, which is always modelled
    note = "" if plan.upgrades else plan.kubelet.note() or ""
    rejected = [r for r in rows if not r["admitted"]]
    return rows, {
        "node": node.name,
        "kubelet": plan.planned_kubelet.name,
        "modelled": not replay.unmodelled and not note,
        "kubelet note": note,
        "kubelet starts": not replay.refused,
        "refusal": replay.refused or replay.unmodelled,
        "pods replayed": len(rows),
        "rejected": len(rejected),
        "first rejection": f"{rejected[0]['namespace']}/{rejected[0]['pod']}: {rejected[0]['reason']}"
        if rejected
        else "",
        **{f"headroom {k}": v for k, v in (replay.headroom or {}).items()},
        "headroom note": replay.headroom_note,
    }


#: What the pool's forked workers run for a node's index: set in the parent just before the pool forks
#: them, so the fleet reaches them as the parent's memory (copy on write), never through a pipe.
_FORKED: Callable[[int], Any] | None = None


def _run_span(span: tuple[int, int]) -> list[Any]:
    assert _FORKED is not None, "a pooled worker runs in a process forked by pooled"
    return [_FORKED(i) for i in range(*span)]


def pooled(count: int, work: Callable[[int], T], workers: int) -> Iterator[T]:
    """``work(i)`` for each of ``count`` nodes, in order. With ``workers`` > 1 and at least
    ``POOL_MIN_NODES`` nodes, runs of up to ``CHUNK`` nodes go to forked processes; at most two runs per
    worker are in flight and each is handed on as it comes back, in order, so memory holds those runs,
    not the fleet's results. ``work`` reads one node and returns what pickles; nodes are independent,
    so the results are the serial ones."""
    if workers <= 1 or count < POOL_MIN_NODES:
        for i in range(count):
            yield work(i)
        return
    chunk = max(1, min(CHUNK, count // (workers * 4)))
    global _FORKED
    _FORKED = work
    try:
        spans = iter([(lo, min(lo + chunk, count)) for lo in range(0, count, chunk)])
        with frozen(), ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
            flight = deque(pool.submit(_run_span, span) for span in islice(spans, 2 * workers))
            while flight:
                done: list[T] = flight.popleft().result()
                for span in islice(spans, 1):
                    flight.append(pool.submit(_run_span, span))
                yield from done
    finally:
        _FORKED = None


def whatif_rows(
    fleet: Fleet,
    target: Mapping[str, Any],
    *,
    mode: Mode = "drain",
    sizes: list[tuple[str, str]] | None = None,
    plans: Mapping[str, NodePlan] | None = None,
    workers: int = 1,
) -> Iterator[NodeRows]:
    """Each node's rows, in fleet order, replayed by ``workers`` processes (``pooled``). ``plans``: each
    node's plan by name (made per node when None)."""
    return pooled(len(fleet.nodes), lambda i: node_rows(fleet, i, target, mode, sizes, plans), workers)


def frames(replays: Iterable[NodeRows]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The (per pod, per node) frames of the nodes' rows."""
    pod_rows, per_node = [], []
    for rows, node_row in replays:
        pod_rows += rows
        per_node.append(node_row)
    nodes = pd.DataFrame(per_node)
    for column in (c for c in nodes.columns if c.startswith("headroom ") and c != "headroom note"):
        nodes[column] = nodes[column].astype("Int64")  # whole pods; <NA> where not computed
    return pd.DataFrame(pod_rows, columns=POD_COLUMNS), nodes


def whatif(
    snapshot: Snapshot,
    target: Mapping[str, Any],
    *,
    mode: Mode = "drain",
    with_headroom: bool = True,
    plans: Mapping[str, NodePlan] | None = None,
    progress: bool | None = False,
    workers: int = 1,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per pod, per node) frames for ``target`` on every node of the snapshot. ``progress=None``
    shows a bar on a terminal (a fleet takes minutes); the default keeps reports free of one.
    ``workers``: processes replaying the nodes (``whatif_rows``); the frames are the same."""
    from tqdm.auto import tqdm

    sizes = common_sizes(snapshot) if with_headroom else None
    plans = plans if plans is not None else plans_for(snapshot.nodes, target)
    replays = whatif_rows(snapshot, target, mode=mode, sizes=sizes, plans=plans, workers=workers)
    bar = tqdm(replays, total=len(snapshot.nodes), desc="what-if", unit="node", delay=2, disable=disabled(progress))
    return frames(bar)
