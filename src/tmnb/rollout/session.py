"""One rollout from its parameters: what notebooks/04-rollout.ipynb and ``tmnb rollout`` call.

The state of a change lives in its own folder, ``state_dir`` (default ``reports/rollouts/<change
id>`` at the repository root, wherever the kernel or the shell stands: ``report.places``): the plan,
the request that made it, the journal, its lock, the backups and the before/after snapshots. A run
folder is immutable evidence, so each run copies the journal and the plan into its own folder at the
end; the state folder is what a second run with the same change id resumes from.
"""

from __future__ import annotations

import json
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.errors import InputError
from tmnb.report.places import anchored, change_folder
from tmnb.rollout.arguments import check_arguments, notebook_options
from tmnb.rollout.plan import ApplyHow, DrainPolicy, RolloutPlan, build_plan, plan_json
from tmnb.rollout.run import RESUME_GATE, Mode, Outcome, Rollout
from tmnb.rollout.soak import Soak
from tmnb.rollout.steps import Options
from tmnb.snapshot import Snapshot

if TYPE_CHECKING:
    import pandas as pd

    from tmnb.analysis.readiness import Readiness
    from tmnb.rollout.ops import NodeOps

#: The executor of each node, by name.
ExecutorFor = Callable[[str], "NodeOps"]

EXECUTOR_NODE_FILES = {"ssh": "ssh", "node-pod": "pod"}


@dataclass
class Session:
    snapshot: Snapshot
    readiness: Readiness
    plan: RolloutPlan
    rollout: Rollout
    state_dir: Path
    context: str | None
    #: how this rollout re-reads node files (the node_files parameter of a live collection)
    node_files: str = ""
    #: the executor kind ("sandbox", "ssh", ...), for the commands a report prints
    executor: str = ""
    #: the parameters this change id stands for (``_request``): a printed command restates them
    request: Mapping[str, Any] = field(default_factory=dict)

    def rollout_command(self, approve: list[str]) -> str:
        """This change's notebook run in execute mode with ``approve``: the exact next command, with
        the parameters the change id stands for (a plan made without an executor names ssh, since a
        dry run cannot write)."""
        executor = self.executor if self.executor not in ("", "dry-run") else "ssh"
        request = self.request or {"nodes": [n.node for n in self.plan.nodes]}
        params = [("change_id", self.plan.change_id)]
        params += [("context", self.context)] if self.context else []
        params += [("source", str(request["source"]))] if request.get("source", "live") != "live" else []
        params.append(("target", json.dumps(self.plan.target)))
        params += [("nodes", json.dumps(request["nodes"]))] if request.get("nodes") else []
        params += [("node_selector", str(request["node_selector"]))] if request.get("node_selector") else []
        params.append(("executor", executor))
        if self.state_dir != change_folder(self.plan.change_id):
            params.append(("state_dir", str(self.state_dir)))
        params += [("mode", "execute"), ("approve", f"[{', '.join(approve)}]")]
        return "tmnb run notebooks/04-rollout.ipynb " + " ".join(f"-p {k} {shlex.quote(v)}" for k, v in params)

    @property
    def journal_path(self) -> Path:
        return self.state_dir / "journal.jsonl"

    def plan_table(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.plan.rows()).fillna("")

    def diffs(self) -> str:
        return "\n".join(f"# {n.node} ({n.gate}): {f.how}\n{f.diff()}" for n in self.plan.nodes for f in n.files)

    def keep(self, out_dir: str | Path) -> dict[str, str]:
        """Copy the journal and the plan into a run folder; the paths a summary links."""
        out = anchored(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        kept = {}
        for name in ("journal.jsonl", "plan.json"):
            source = self.state_dir / name
            if source.exists():
                shutil.copyfile(source, out / name)
                kept[name] = str(out / name)
        return kept

    def compare_command(self) -> str:
        """Collect the cluster again, then compare the changed nodes with the snapshot the plan used."""
        before = self.state_dir / "snapshots" / "before.json.gz"
        collected = self.state_dir / "after-inventory"
        after = collected / "snapshot.json.gz"
        nodes = ",".join(n.node for n in self.plan.nodes)
        context = f" -p context {self.context}" if self.context else ""
        files = f" -p node_files {self.node_files}" if self.node_files else ""
        return (
            f"tmnb run notebooks/01-inventory.ipynb -p source live{context}{files} --out {collected} && "
            f"tmnb run notebooks/05-compare.ipynb -p before {before} -p after {after} "
            f"-p journal {self.journal_path} -p node_selector 'kubernetes.io/hostname in ({nodes})'"
        )

    def summary(self, outcome: Outcome) -> str:
        lines = [f"Change {self.plan.change_id}: **{outcome.status}**. {outcome.message}.", ""]
        for node, state in outcome.nodes.items():
            gate = self.plan.node(node).gate
            lines.append(f"- `{node}` ({gate}): {state}")
        for e in self.plan.excluded:
            lines.append(f"- `{e.node}`: not in the rollout: {e.reason}")
        after = sorted((self.state_dir / "snapshots").glob("after-*.json.gz"))
        paragraphs = [
            f"Journal: `{self.journal_path}`. Before snapshot: `{self.state_dir / 'snapshots' / 'before.json.gz'}`.",
            "After snapshots: " + (", ".join(f"`{p}`" for p in after) or "none yet") + ".",
            f"Compare: `{self.compare_command()}`",
        ]
        if outcome.next_gate and outcome.status in ("planned", "awaiting approval"):
            paragraphs.append(f"Next: `{self.rollout_command([outcome.next_gate])}`")
        elif outcome.next_gate and outcome.status == "held":
            paragraphs.append(f"Resume and go on: `{self.rollout_command([RESUME_GATE, outcome.next_gate])}`")
        return "\n".join(lines) + "\n\n" + "\n\n".join(paragraphs)


def _executor_factory(
    kind: str, context: str | None, kubeconfig: str | None, options: Mapping[str, object]
) -> ExecutorFor:
    from tmnb.rollout.executors import SandboxClient, make_executor

    if kind == "sandbox":
        api = SandboxClient.from_kubeconfig(kubeconfig, context)
        return lambda node: make_executor("sandbox", node, root=api.node_root(node), api=api, **options)
    if kind == "node-pod":
        from tmnb.sources.cluster import connect

        api_client, _ = connect(context, kubeconfig)
        return lambda node: make_executor("node-pod", node, api_client=api_client, **options)
    if kind == "ssh":
        return lambda node: make_executor(
            "ssh", node, host=options.get("host") or node, **{k: v for k, v in options.items() if k != "host"}
        )
    return lambda node: make_executor(kind, node, **options)


def _any_node(context: str | None, kubeconfig: str | None) -> str | None:
    """One node's name: the sandbox executor finds every node's files beside it."""
    from kubernetes import client

    from tmnb.sources.cluster import connect

    api_client, _ = connect(context, kubeconfig)
    items = client.CoreV1Api(api_client).list_node(limit=1, _request_timeout=(5, 30)).items
    meta = items[0].metadata if items else None
    return meta.name if meta else None


def _node_files(kind: str, node_files: str, executor_for: ExecutorFor | None, first: str | None) -> str:
    if node_files or kind == "dry-run":
        return node_files
    if kind in EXECUTOR_NODE_FILES:
        return EXECUTOR_NODE_FILES[kind]
    if kind == "sandbox" and first and executor_for is not None:
        from tmnb.rollout.executors import CommandExecutor

        ops = executor_for(first)
        if isinstance(ops, CommandExecutor):  # a sandbox node's files: beside every other node's
            return f"dir:{Path(ops.root).parent}"
    return node_files


def prepare(
    *,
    target: Mapping[str, Any],
    change_id: str,
    source: str = "live",
    context: str = "",
    kubeconfig: str = "",
    nodes: Sequence[str] = (),
    node_selector: str = "",
    canary: str = "recommended",
    waves: int | Sequence[Sequence[str]] = 5,
    override: Sequence[str] = (),
    mode: Mode = "plan",
    approve: Sequence[str] = (),
    executor: str = "dry-run",
    executor_options: Mapping[str, object] | None = None,
    node_files: str = "",
    state_dir: str = "",
    apply: ApplyHow = "auto",
    drain: DrainPolicy = "auto",
    pause: float = 0.0,
    options: Options | None = None,
    soak: Mapping[str, Any] | None = None,
) -> Session:
    """Snapshot, readiness, plan and a ready-to-run ``Rollout``; the plan is fixed at the first run
    of a change id and re-read on every later one (resume), so the waves never shift under it."""
    from tmnb.analysis.readiness import assess
    from tmnb.rollout.journal import Journal
    from tmnb.snapshot import load, save
    from tmnb.sources.resolve import open_snapshot

    check_arguments(
        target=target,
        change_id=change_id,
        mode=mode,
        executor=executor,
        waves=waves,
        state_dir=state_dir,
        node_selector=node_selector,
    )
    ctx, kcfg = context or None, kubeconfig or None
    executor_for = _executor_factory(executor, ctx, kcfg, executor_options or {}) if executor else None
    folder = change_folder(change_id, state_dir)
    before = folder / "snapshots" / "before.json.gz"
    stored_plan = folder / "plan.json"
    first = next(iter(nodes), None) or (_any_node(ctx, kcfg) if executor == "sandbox" and not node_files else None)
    spec = _node_files(executor, node_files, executor_for, first)
    if before.exists() and stored_plan.exists():
        snapshot = load(before)
    else:
        snapshot = open_snapshot(
            source,
            node_selector or None,
            context=context,
            kubeconfig=kubeconfig,
            node_files=spec if source == "live" else "",
        )
    request = _request(target, nodes, node_selector, source, executor, apply, drain)
    _check_same_change(change_id, folder, request)
    readiness = assess(snapshot, target)
    if stored_plan.exists():
        plan = RolloutPlan.from_json(json.loads(stored_plan.read_text()))
        if plan.target != dict(target):
            raise InputError(
                f"change {change_id} was planned for {plan.target}, not {dict(target)}: use a new change id",
                where="target",
            )
    else:
        read = None
        if executor_for is not None and executor != "dry-run":
            read = lambda node, path: executor_for(node).read(path)  # noqa: E731 - reads are safe
        plan = build_plan(
            snapshot,
            readiness,
            change_id=change_id,
            nodes=list(nodes) or None,
            node_selector=node_selector or None,
            canary=canary,
            waves=waves,
            override=override,
            apply=apply,
            drain=drain,
            read=read,
        )
    moving = [n.node for n in plan.nodes if n.state_files]
    if executor == "node-pod" and moving:
        raise InputError(
            f"the node-pod executor cannot stop the kubelet (its pods need a running kubelet), but "
            f"{', '.join(moving)} need their state files moved with the kubelet stopped: use ssh or local",
            where="executor",
        )
    journal = Journal(folder / "journal.jsonl", change_id)
    cluster = collect = None
    if mode == "execute":
        from tmnb.rollout.cluster import ClusterOps
        from tmnb.sources.cluster import connect

        api_client, _ = connect(ctx, kcfg)
        cluster = ClusterOps(api_client)

        def collect(name: str) -> Snapshot:
            return open_snapshot(
                "live",
                f"kubernetes.io/hostname={name}",
                context=context,
                kubeconfig=kubeconfig,
                node_files=spec,
                progress=False,
            )

        folder.mkdir(parents=True, exist_ok=True)
        if not before.exists():
            save(snapshot, before)
        if not stored_plan.exists():
            stored_plan.write_text(plan_json(plan))
            (folder / REQUEST).write_text(json.dumps(request, indent=2, sort_keys=True) + "\n")
    rollout = Rollout(
        plan,
        journal=journal,
        run_dir=folder,
        mode=mode,
        approve=approve,
        executor_for=executor_for,
        cluster=cluster,
        collect=collect,
        options=options,
        pause=pause,
        soak=Soak.from_param(soak),
    )
    return Session(snapshot, readiness, plan, rollout, folder, ctx, spec, executor, stored_request(folder) or request)


#: The parameters a change id stands for, stored beside its plan at the first execute run.
REQUEST = "request.json"


def _request(
    target: Mapping[str, Any],
    nodes: Sequence[str],
    node_selector: str,
    source: str,
    executor: str,
    apply: str,
    drain: str,
) -> dict[str, Any]:
    return {
        "target": dict(target),
        "nodes": sorted(nodes),
        "node_selector": node_selector,
        "source": source,
        "executor": executor,
        "apply": apply,
        "drain": drain,
    }


def stored_request(folder: Path) -> dict[str, Any] | None:
    """What the change id was first run with (None before its first execute run)."""
    path = folder / REQUEST
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        raise InputError("unreadable: the change's state folder is damaged", source=str(path)) from None
    if not isinstance(value, dict):
        raise InputError("not a change request", source=str(path))
    return value


def _check_same_change(change_id: str, folder: Path, request: Mapping[str, Any]) -> None:
    """One change per change id: a run with other parameters would report the earlier change's
    outcome for nodes it never touched, so it is refused, naming both."""
    before = stored_request(folder)
    if before is None:
        return
    differ = [key for key, value in request.items() if before.get(key) != value]
    if differ:
        was = "; ".join(f"{key}={json.dumps(before.get(key))}" for key in differ)
        now = "; ".join(f"{key}={json.dumps(request[key])}" for key in differ)
        raise InputError(
            f"change {change_id} was run with {was}, not {now}: resume it with its own parameters, or start "
            "another change with a new change id",
            where="change_id",
        )


def open_session(*, options: Mapping[str, object] | None = None, **params: Any) -> Session:
    """``prepare`` from 04-rollout's parameters; ``options`` (``NOTEBOOK_OPTIONS``) checked by name
    and type, the step knobs folded into ``Options``. ``params`` are the notebook's other
    parameters, as papermill injected them (Any): ``prepare`` takes them by name and checks them."""
    o = notebook_options(options)
    steps = Options(
        drain_timeout=float(o["drain_timeout"]),
        ready_timeout=float(o["ready_timeout"]),
        auto_rollback=o["auto_rollback"],
        allow_emptydir=o["allow_emptydir"],
        test_pod_namespace=o["test_namespace"],
        test_pod_image=o["test_image"],
    )
    return prepare(options=steps, override=o["override"], node_files=o["node_files"], soak=o["soak"], **params)
