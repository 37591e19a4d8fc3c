"""The node collector: run ``collect_node.sh`` through a transport, read its bundle into a Node,
and merge that Node over what the API server says about the node.

A bundle is a gzip tar of the node's files under their node paths (so ``read_node_root`` reads it
unchanged) plus command outputs under ``tmnb/``: the running kubelet's command line, lscpu,
container cpusets from the cgroup tree, ``crictl inspect``, the kubelet journal and the script's
own notes (refused, missing or dropped files), which become node issues.
"""

from __future__ import annotations

import dataclasses
import io
import json
import tarfile
import tempfile
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, TypedDict, Unpack

from tqdm.auto import tqdm

from tmnb.cpuset import CPUSet
from tmnb.errors import CollectError, InputError
from tmnb.parse.cgroup import parse_kube_cgroup_path
from tmnb.parse.files import read_text
from tmnb.parse.lscpu import parse_lscpu_summary
from tmnb.progress import disabled
from tmnb.snapshot import Allocation, Issue, Node, Pod, Setting
from tmnb.sources.node_journal import journal_excerpt, read_meta
from tmnb.sources.node_root import read_node_root

if TYPE_CHECKING:
    from tmnb.sources.transports import Transport

DEFAULT_MAX_BYTES = 8 << 20
#: the kubelet journal excerpt's own cap (the script's -J), inside the bundle's
DEFAULT_JOURNAL_BYTES = 256 << 10
CMDLINE = "tmnb/kubelet.cmdline"


@dataclass(frozen=True)
class NodeBundle:
    """One node's collection: the Node read from it (with its redacted kubelet journal excerpt) and the
    bundle as the node sent it (not redacted; tmnb never writes it anywhere)."""

    node: Node
    raw: bytes

    @property
    def journal(self) -> tuple[str, ...]:
        """The excerpt's lines (redacted), oldest first."""
        excerpt = self.node.kubelet_journal
        return tuple(excerpt.lines) if excerpt else ()


def script_args(
    *,
    since: str = "-24h",
    max_bytes: int = DEFAULT_MAX_BYTES,
    journal_bytes: int = DEFAULT_JOURNAL_BYTES,
    extra_paths: Iterable[str] = (),
) -> list[str]:
    args = ["-s", since, "-m", str(max_bytes), "-J", str(journal_bytes)]
    for path in extra_paths:
        args += ["-p", path]
    return args


def collect_node(
    transport: Transport,
    name: str,
    *,
    since: str = "-24h",
    max_bytes: int = DEFAULT_MAX_BYTES,
    journal_bytes: int = DEFAULT_JOURNAL_BYTES,
    timeout: float = 120.0,
    extra_paths: Iterable[str] = (),
) -> NodeBundle:
    """Collect one node through ``transport`` and read the bundle. ``since`` and ``journal_bytes``
    bound the kubelet journal excerpt (newest lines kept), ``max_bytes`` the whole bundle."""
    args = script_args(since=since, max_bytes=max_bytes, journal_bytes=journal_bytes, extra_paths=extra_paths)
    raw = transport.run(args, timeout=timeout)
    return read_bundle(raw, name=name)


class CollectOptions(TypedDict, total=False):
    """The keyword arguments of ``collect_node`` that ``collect_nodes`` passes on to each node."""

    since: str
    max_bytes: int
    journal_bytes: int
    timeout: float
    extra_paths: Iterable[str]


def collect_nodes(
    names: Iterable[str],
    transport_for: Callable[[str], Transport],
    *,
    workers: int = 8,
    progress: bool | None = None,
    **kwargs: Unpack[CollectOptions],
) -> dict[str, NodeBundle | Issue]:
    """Collect many nodes in parallel; a node that fails gets an Issue instead of a bundle.
    ``kwargs`` go to ``collect_node``; ``progress=None`` shows a bar on a terminal or notebook."""

    def one(name: str) -> NodeBundle | Issue:
        try:
            return collect_node(transport_for(name), name, **kwargs)
        except (CollectError, InputError) as exc:
            return Issue(source="node collector", message=f"node not collected: {exc}")
        except Exception as exc:  # one node's surprise must not cost the others
            return Issue(
                source="node collector",
                message=f"node not collected: unexpected {type(exc).__name__} reading its files: {exc}",
            )

    names = list(names)
    with (
        ThreadPoolExecutor(max_workers=max(workers, 1), thread_name_prefix="tmnb-node") as pool,
        tqdm(total=len(names), desc="node collector", unit="node", disable=disabled(progress)) as bar,
    ):
        futures = {pool.submit(one, name): name for name in names}
        results = {}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            bar.update()
    return {name: results[name] for name in names}


def read_bundle(raw: bytes, *, name: str) -> NodeBundle:
    """Parse a collector bundle with the same readers as a node root on disk."""
    with tempfile.TemporaryDirectory(prefix="tmnb-bundle-") as tmp:
        root = Path(tmp)
        try:
            with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
                tar.extractall(root, filter="data")
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise CollectError(f"{name}: the node bundle is not a readable gzip tar: {exc}") from exc
        cmdline = root / CMDLINE
        try:
            node = read_node_root(root, name=name, running=cmdline.read_bytes() if cmdline.is_file() else None)
        except InputError as exc:
            notes = _notes(root)
            raise CollectError(f"{name}: {exc}" + (f" (collector notes: {notes[0].message})" if notes else "")) from exc
        notes = _notes(root)
        issues = [*node.issues, *notes]
        issues += _lscpu_check(root, node)
        allocations, more = _cgroup_allocations(root, node)
        excerpt, journal_issues = journal_excerpt(root, read_meta(root), notes)
        node = dataclasses.replace(
            node, allocations=allocations, issues=issues + more + journal_issues, kubelet_journal=excerpt
        )
    return NodeBundle(node=node, raw=raw)


def _notes(root: Path) -> list[Issue]:
    path = root / "tmnb" / "errors.txt"
    if not path.is_file():
        return [Issue(source="node collector", message="no tmnb/errors.txt: not a collect_node.sh bundle")]
    issues = []
    for line in path.read_text(errors="replace").splitlines():
        what, _, message = line.partition("\t")
        severity: Literal["error", "info"] = (
            "error" if message.startswith(("refused", "unreadable", "missing")) else "info"
        )
        issues.append(Issue(source=what, message=message, severity=severity))
    return issues


def _lscpu_check(root: Path, node: Node) -> list[Issue]:
    path = root / "tmnb" / "lscpu.txt"
    if not path.is_file():
        return []
    try:
        summary = parse_lscpu_summary(read_text(path, what="LC_ALL=C lscpu output", source="lscpu"), source="lscpu")
    except InputError as exc:
        return [Issue(source="lscpu", message=str(exc), severity="warning")]
    lscpu = {n: str(c) for n, c in summary.numa_nodes.items()}
    sysfs = {z.id: str(CPUSet.parse(z.cpus)) for z in node.numa}
    if lscpu and lscpu != sysfs:
        return [Issue(source="lscpu", message=f"lscpu NUMA map {lscpu} differs from sysfs {sysfs}")]
    return []


def _cgroup_cpusets(root: Path) -> dict[str, str]:
    """Container id → effective cpuset, from the kubepods cgroup tree (v2, else v1)."""
    out = {}
    for name in ("cpusets-v2.txt", "cpusets-v1.txt"):
        path = root / "tmnb" / name
        if not path.is_file():
            continue
        # cgroup paths are ASCII; a line mangled into other bytes simply names no container
        for line in path.read_text(errors="replace").splitlines():
            cgroup, _, cpus = line.rpartition(":")
            ref = parse_kube_cgroup_path(cgroup.rsplit("/", 1)[0])
            if ref and ref.container_id:
                out[ref.container_id] = cpus.strip()
    return out


def _crictl_names(root: Path) -> dict[str, tuple[str, str, str, str]]:
    """Container id → (pod uid, namespace, pod, container) from ``crictl inspect``."""
    path = root / "tmnb" / "crictl.json"
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text())
    except ValueError:
        return {}
    out = {}
    for item in doc if isinstance(doc, list) else [doc]:
        status = item.get("status") or {}
        labels = status.get("labels") or {}
        if status.get("id") and labels.get("io.kubernetes.pod.uid"):
            out[status["id"]] = (
                labels["io.kubernetes.pod.uid"],
                labels.get("io.kubernetes.pod.namespace", ""),
                labels.get("io.kubernetes.pod.name", ""),
                labels.get("io.kubernetes.container.name") or (status.get("metadata") or {}).get("name", ""),
            )
    return out


def _cgroup_allocations(root: Path, node: Node) -> tuple[list[Allocation], list[Issue]]:
    """Check exclusive allocations against the cgroups' effective cpusets and add the shared-pool
    containers that crictl can name (the state file lists only exclusive ones)."""
    cpusets, names = _cgroup_cpusets(root), _crictl_names(root)
    if not cpusets or not names:
        return node.allocations, []
    numa_of = {c.cpu: c.numa for c in node.cpus}
    held = {(a.pod_uid, a.container): a for a in node.allocations}
    allocations, issues = list(node.allocations), []
    for cid, cpus in sorted(cpusets.items()):
        if cid not in names or not cpus:
            continue
        uid, namespace, pod, container = names[cid]
        known = held.get((uid, container))
        if known is None:
            numa = sorted({numa_of[c] for c in CPUSet.parse(cpus) if c in numa_of})
            allocations.append(
                Allocation(pod_uid=uid, namespace=namespace, pod=pod, container=container, cpuset=cpus,
                           exclusive=False, numa=numa)
            )  # fmt: skip
        elif known.exclusive and CPUSet.parse(cpus) != CPUSet.parse(known.cpuset):
            issues.append(
                Issue(
                    source="cgroup cpuset",
                    severity="warning",
                    message=f"{namespace}/{pod} {container}: runs on {cpus} but cpu_manager_state assigns "
                    f"{known.cpuset} (not reconciled yet, or changed outside the kubelet)",
                )
            )
    return allocations, issues


def merge_node(api: Node, bundle: NodeBundle | Node | Issue, pods: Mapping[str, Pod] | None = None) -> Node:
    """A node as the API sees it, completed by its bundle: hardware, devices, allocations and the
    on-disk kubelet layers. /configz, when read, stays on top and the disk layers become its history
    (so a file edited without a restart shows as a difference)."""
    if isinstance(bundle, Issue):
        return dataclasses.replace(api, issues=[*api.issues, bundle])
    if isinstance(bundle, NodeBundle):
        bundle = bundle.node
    settings, disk = api.kubelet.settings, bundle.kubelet.settings
    if any(s.source == "configz" for s in settings.values()):
        settings = {
            key: _over(settings.get(key) or Setting(value=None, source="configz"), disk.get(key))
            for key in sorted(settings.keys() | disk.keys())
        }
    else:
        settings = disk
    allocations = [_named(a, pods or {}) for a in bundle.allocations]
    return dataclasses.replace(
        api,
        kubelet=dataclasses.replace(bundle.kubelet, settings=settings),
        cpus=bundle.cpus,
        numa=bundle.numa,
        devices=bundle.devices,
        shared_pool=bundle.shared_pool,
        allocations=allocations,
        state_files=bundle.state_files,
        issues=[*api.issues, *bundle.issues],
        kubelet_journal=bundle.kubelet_journal,
    )


def _over(running: Setting, on_disk: Setting | None) -> Setting:
    if on_disk is None:
        return running
    return dataclasses.replace(running, overridden=(*on_disk.overridden, on_disk.as_layer()))


def _named(a: Allocation, pods: Mapping[str, Pod]) -> Allocation:
    pod = pods.get(a.pod_uid)
    if pod is None or (a.namespace and a.pod):
        return a
    return dataclasses.replace(a, namespace=pod.namespace, pod=pod.name)
