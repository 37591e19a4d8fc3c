"""Collect a live snapshot: nodes, pods, per-node /configz, NodeResourceTopology, events, PDBs.

Per-node calls run on a bounded thread pool. A node whose /configz cannot be read keeps an issue
naming why (and, for 403, the RBAC it needs); optional cluster-wide lists that fail (events, PDBs,
ReplicaSets, Jobs, NRT) are named in ``source.detail``. Only nodes, pods and the server version are
required: without them there is no snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from datetime import UTC, datetime

from pydantic import ValidationError
from tqdm.auto import tqdm

from tmnb.errors import InputError
from tmnb.parse.jsonable import JsonDict
from tmnb.progress import disabled
from tmnb.snapshot import Cluster, Issue, Node, NrtZone, Pod, Setting, Snapshot, SnapshotSource
from tmnb.sources.cluster.api import NRT, ClusterApi, connect, explain
from tmnb.sources.cluster.convert import (
    configz_forbidden,
    configz_settings,
    event_from_api,
    node_from_api,
    nrt_settings,
    nrt_zones,
    owner_controllers,
    pdb_from_api,
    with_controllers,
)
from tmnb.sources.cluster.retry import describe, status_of
from tmnb.sources.kube_objects import pod_from_api
from tmnb.sources.node import NodeBundle, merge_node

#: Event reasons of kubelet admission failures (the 1.16-era spelling had spaces).
EVENT_REASONS = ("TopologyAffinityError", "Topology Affinity Error", "UnexpectedAdmissionError", "SMTAlignmentError")
DEFAULT_WORKERS = 16


def collect_cluster(
    context: str | None = None,
    kubeconfig: str | None = None,
    *,
    api: ClusterApi | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: bool | None = None,
    bundles: Mapping[str, NodeBundle | Node | Issue] | None = None,
    node_selector: str | None = None,
    node_name: str | None = None,
) -> Snapshot:
    """Snapshot of the cluster behind ``context`` (or ``api``). ``bundles`` come from the node
    collector (``tmnb.sources.node.collect_nodes``; an Issue for a node it could not reach) and
    are merged over what the API says. ``node_selector`` (label selector) limits the nodes, and so
    the per-node calls, on the server; ``node_name`` limits them to that node and the pods to its own
    (a question about one node reads one node, not the cluster's pods). ``progress=None`` shows a
    bar on a terminal or notebook."""
    if api is None:
        api_client, name = connect(context, kubeconfig, pool_size=workers)
        api = ClusterApi(api_client, context=name)
    captured = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        raw_nodes = api.list_all(
            api.core.list_node,
            label_selector=node_selector or None,
            field_selector=f"metadata.name={node_name}" if node_name else None,
        )
    except Exception as exc:
        raise explain(exc, f"cannot read nodes from the cluster (context {api.context or 'in-cluster'})") from exc
    nodes = [node_from_api(obj) for obj in raw_nodes]
    skipped: list[str] = []
    try:
        version = api.server_version()
    except Exception as exc:
        version = None
        skipped.append(f"server version ({describe(exc)})")

    # Cluster-wide lists get their own threads so that they never queue behind per-node calls.
    with (
        ThreadPoolExecutor(max_workers=len(LISTS) + 1, thread_name_prefix="tmnb-list") as list_pool,
        ThreadPoolExecutor(max_workers=max(workers, 1), thread_name_prefix="tmnb-node") as pool,
    ):
        pods_listed = list_pool.submit(_list_pods, api, f"spec.nodeName={node_name}" if node_name else None)
        lists = {key: list_pool.submit(call, api) for key, call in LISTS.items()}
        configz = {pool.submit(_configz, api, node): node.name for node in nodes}
        results: dict[str, dict[str, Setting] | Issue] = {}
        bar = tqdm(total=len(nodes), desc="kubelet /configz", unit="node", disable=disabled(progress))
        with bar:
            for future in as_completed(configz):
                results[configz[future]] = future.result()
                bar.update()
        try:
            pods_raw = pods_listed.result()
        except Exception as exc:
            raise explain(exc, "cannot list pods in all namespaces") from exc
        raw = {key: _optional(key, future, skipped) for key, future in lists.items()}
    nrt = {(o.get("metadata") or {}).get("name"): o for o in raw["nrt"] or ()}
    nodes = [_complete(node, results[node.name], nrt.get(node.name)) for node in nodes]
    pods = _pods(pods_raw, owner_controllers([*(raw["replicasets"] or ()), *(raw["jobs"] or ())]), skipped)
    if bundles:
        by_uid = {p.uid: p for p in pods}
        nodes = [merge_node(n, bundles[n.name], by_uid) if n.name in bundles else n for n in nodes]
    events = [event_from_api(o) for reason in EVENT_REASONS for o in raw[f"events:{reason}"] or ()]
    return Snapshot(
        captured_at=captured,
        source=SnapshotSource(
            kind="live",
            context=api.context,
            detail=("not collected: " + "; ".join(dict.fromkeys(skipped))) if skipped else None,
        ),
        cluster=Cluster(server_version=version),
        nodes=nodes,
        pods=pods,
        events=events,
        disruption_budgets=[pdb_from_api(o) for o in raw["pdbs"] or ()],
    )


def _list_pods(api: ClusterApi, field_selector: str | None) -> list[Pod | None]:
    """Every pod (of the nodes ``field_selector`` names), converted page by page (None for a malformed
    one): required, unlike ``LISTS``."""
    return api.list_all(api.core.list_pod_for_all_namespaces, item=_pod, field_selector=field_selector)


def _nrt(api: ClusterApi) -> list[JsonDict]:
    try:
        return api.list_all(api.custom.list_cluster_custom_object, *NRT)
    except Exception as exc:
        if status_of(exc) == 404:  # the CRD is not installed: nothing was published
            return []
        raise


def _events(reason: str) -> Callable[[ClusterApi], list[JsonDict]]:
    return lambda api: api.list_all(api.core.list_event_for_all_namespaces, field_selector=f"reason={reason}")


#: The optional cluster-wide lists: one that fails is named in ``source.detail`` and left out.
LISTS: dict[str, Callable[[ClusterApi], list[JsonDict]]] = {
    "pdbs": lambda api: api.list_all(api.policy.list_pod_disruption_budget_for_all_namespaces),
    "replicasets": lambda api: api.list_all(api.apps.list_replica_set_for_all_namespaces),
    "jobs": lambda api: api.list_all(api.batch.list_job_for_all_namespaces),
    "nrt": _nrt,
    **{f"events:{reason}": _events(reason) for reason in EVENT_REASONS},
}


def _optional(key: str, future: Future[list[JsonDict]], skipped: list[str]) -> list[JsonDict] | None:
    try:
        return future.result()
    except Exception as exc:
        skipped.append(f"{key.split(':')[0]} ({describe(exc)})")
        return None


def _configz(api: ClusterApi, node: Node) -> dict[str, Setting] | Issue:
    try:
        return configz_settings(api.configz(node.name), node)
    except InputError as exc:
        return Issue(source="configz", message=f"unreadable /configz: {exc}")
    except Exception as exc:
        if status_of(exc) == 403:
            return configz_forbidden(describe(exc))
        return Issue(source="configz", message=f"cannot read /configz through the API server: {describe(exc)}")


def _complete(node: Node, configz: dict[str, Setting] | Issue, nrt: JsonDict | None) -> Node:
    issues = [configz] if isinstance(configz, Issue) else []
    zones: list[NrtZone] = []
    from_nrt: dict[str, Setting] = {}
    if nrt:
        try:  # written by a third-party exporter: a malformed object costs this node its NRT only
            zones, from_nrt = nrt_zones(nrt), nrt_settings(nrt)
        except (KeyError, TypeError, ValueError, ValidationError) as exc:
            issues.append(Issue(source="nrt", message=f"malformed NodeResourceTopology object: {exc!r}"))
    settings = configz if isinstance(configz, dict) else from_nrt
    return dataclasses.replace(
        node, kubelet=dataclasses.replace(node.kubelet, settings=settings), nrt=zones, issues=issues
    )


def _pod(obj: JsonDict) -> Pod | None:
    try:
        return pod_from_api(obj, source="pods")
    except InputError:
        return None


def _pods(items: list[Pod | None], controllers: Mapping[str, tuple[str, str]], skipped: list[str]) -> list[Pod]:
    pods = [with_controllers(p, controllers) for p in items if p is not None]
    if len(pods) < len(items):
        skipped.append(f"{len(items) - len(pods)} malformed pod object(s)")
    return pods
