"""One rollout from its parameters: what notebooks/04-rollout.ipynb and ``tmnb rollout`` call.

The state of a change lives in its own folder, ``state_dir`` (default ``reports/rollouts/<change
id>`` at the repository root, wherever the kernel or the shell stands: ``report.places``): the plan,
the request that made it, the journal, its lock, the backups and the before/after snapshots. A run
folder is immutable evidence, so each run copies the journal and the plan into its own folder at the
end; the state folder is what a second run with the same change id resumes from.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.errors import InputError
from tmnb.report.commands import Value, command
from tmnb.report.places import anchored, change_folder
from tmnb.rollout.cluster import ClusterOps
from tmnb.rollout.executors import EXECUTORS, ExecutorFor, ExecutorKind, Reach, words
from tmnb.rollout.journal import Journal
from tmnb.rollout.kubeadm import PATCH_DIR, kubeadm_warning, patch_path, patch_text, write_patch
from tmnb.rollout.plan import Reader, RolloutPlan, build_plan, plan_json
from tmnb.rollout.request import RolloutRequest, from_notebook, stored_request
from tmnb.rollout.run import Outcome, Rollout
from tmnb.rollout.soak import Soak
from tmnb.rollout.standing import compare_command, postmortem_command
from tmnb.snapshot import Snapshot, load, save
from tmnb.sources.resolve import source_argument

if TYPE_CHECKING:
    import pandas as pd

    from tmnb.analysis.readiness import Readiness

#: The executor a printed command names when the plan was made with one that cannot write.
WRITING_DEFAULT = "ssh"
#: The state folder's files a resume re-reads: the snapshot and the plan of the change's first execute run.
BEFORE = "snapshots/before.json.gz"
PLAN = "plan.json"


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
        the parameters the change id stands for (a plan made with an executor that cannot write names
        ssh)."""
        kind = EXECUTORS.get(self.executor)
        executor = self.executor if kind is not None and kind.writes else WRITING_DEFAULT
        request = self.request or {"nodes": [n.node for n in self.plan.nodes]}
        source = str(request.get("source") or "live")
        params: dict[str, Value] = {
            "change_id": self.plan.change_id,
            "context": self.context or None,
            "source": source_argument(source) if source != "live" else None,
            "target": self.plan.target,
            "nodes": list(request.get("nodes") or []) or None,
            "node_selector": str(request.get("node_selector") or "") or None,
            "executor": executor,
            "state_dir": self.state_dir if self.state_dir != change_folder(self.plan.change_id) else None,
            "mode": "execute",
            "approve": approve,
        }
        return command("run", "04-rollout", params=params)

    @property
    def journal_path(self) -> Path:
        return self.state_dir / "journal.jsonl"

    def plan_table(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.plan.rows()).fillna("")

    def diffs(self) -> str:
        """Each file the change writes on a node, as a diff; then the kubeadm patch, when kubeadm manages a node."""
        files = [f"# {n.node} ({n.gate}): {f.how}\n{f.diff()}" for n in self.plan.nodes for f in n.files]
        return "\n".join([*files, *self.kubeadm_patch()])

    def kubeadm_patch(self) -> list[str]:
        """The kubeadm patch of this change and how to use it ([] when kubeadm manages no planned node)."""
        managed = self.plan.kubeadm_nodes()
        if not managed:
            return []
        files = [f for name in managed for f in self.plan.node(name).files]
        first = next((f for f in files if f.how == "edit"), files[0])  # an edit is what an upgrade undoes
        path = patch_path(self.state_dir)
        written = "written" if path.exists() else "written with the plan at the first execute run"
        return [
            f"# kubeadm patch for {', '.join(managed)}: {path} ({written}; the directory {PATCH_DIR}/ is what "
            f"`--patches` takes)\n{kubeadm_warning(first.path, first.how)}\n{patch_text(self.plan.target)}"
        ]

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
        return compare_command(self.state_dir, [n.node for n in self.plan.nodes], self.context, self.node_files)

    def next_command(self, outcome: Outcome) -> str:
        """The one next command of ``outcome``, which 04's verdict and its summary both print: the run
        that approves what comes next (``Rollout.approvals``), the comparison once every node has the
        change, the postmortem when the rollout stopped."""
        if outcome.status == "completed":
            return self.compare_command()
        if outcome.status in ("stopped", "rolled back"):
            return postmortem_command(self.state_dir)
        return self.rollout_command(self.rollout.approvals(outcome))

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
        if outcome.status in ("planned", "awaiting approval", "held"):
            label = "Resume and go on" if outcome.status == "held" else "Next"
            paragraphs.append(f"{label}: `{self.next_command(outcome)}`")
        return "\n".join(lines) + "\n\n" + "\n\n".join(paragraphs)


def prepare(request: RolloutRequest) -> Session:
    """Snapshot, readiness, plan and a ready-to-run ``Rollout`` for ``request``; the plan is fixed at
    the first execute run of a change id and re-read on every later one (resume), so the waves
    never shift under it."""
    from tmnb.analysis.readiness import assess

    kind = request.kind
    reach = Reach(request.context or None, request.kubeconfig or None, request.executor_options)
    executor_for = kind.executors(reach)
    spec = request.node_files or kind.files_spec(reach, executor_for, request.nodes)
    request.check_same_change()
    snapshot = _snapshot(request, spec)
    readiness = assess(snapshot, request.target)
    plan = _stored_plan(request) or _new_plan(request, snapshot, readiness, _reader(kind, executor_for))
    _check_state_files_movable(kind, plan)
    cluster = collect = None
    if request.mode == "execute":
        cluster, collect = _connect(request, reach, spec)
        _keep_first_run(request, snapshot, plan)
    rollout = Rollout(
        plan,
        journal=Journal(request.folder / "journal.jsonl", request.change_id),
        run_dir=request.folder,
        mode=request.mode,
        approve=request.approve,
        executor_for=executor_for if kind.writes else None,
        cluster=cluster,
        collect=collect,
        options=request.steps,
        pause=request.pause,
        soak=Soak.from_param(request.soak),
    )
    return Session(
        snapshot, readiness, plan, rollout, request.folder, reach.context, spec, request.executor,
        stored_request(request.folder) or request.change(),
    )  # fmt: skip


def _snapshot(request: RolloutRequest, spec: str) -> Snapshot:
    """The snapshot the change is planned on: the one its first execute run stored, when it stored a
    plan too (a resume), else read from the request's source."""
    from tmnb.sources.resolve import open_snapshot

    before = request.folder / BEFORE
    if before.exists() and (request.folder / PLAN).exists():
        return load(before)
    return open_snapshot(
        request.source,
        request.node_selector or None,
        context=request.context,
        kubeconfig=request.kubeconfig,
        node_files=spec if request.source == "live" else "",
    )


def _stored_plan(request: RolloutRequest) -> RolloutPlan | None:
    """The plan its first execute run stored (None before that run), which must be for the same target."""
    stored = request.folder / PLAN
    if not stored.exists():
        return None
    plan = RolloutPlan.from_json(json.loads(stored.read_text()))
    if plan.target != dict(request.target):
        raise InputError(
            f"change {request.change_id} was planned for {plan.target}, not {dict(request.target)}: "
            "use a new change id",
            where="target",
        )
    return plan


def _reader(kind: ExecutorKind, executor_for: ExecutorFor) -> Reader | None:
    """How the plan reads each node's files to diff them: through the executor, when it can read."""
    if not kind.reads:
        return None
    return lambda node, path: executor_for(node).read(path)  # reads are safe


def _new_plan(request: RolloutRequest, snapshot: Snapshot, readiness: Readiness, read: Reader | None) -> RolloutPlan:
    return build_plan(
        snapshot,
        readiness,
        change_id=request.change_id,
        nodes=list(request.nodes) or None,
        node_selector=request.node_selector or None,
        canary=request.canary,
        waves=request.waves,
        override=request.override,
        apply=request.apply,
        drain=request.drain,
        read=read,
    )


def _check_state_files_movable(kind: ExecutorKind, plan: RolloutPlan) -> None:
    """Moving a state file needs the kubelet stopped: an executor that writes must be able to stop it
    (a dry run plans for any executor)."""
    moving = [n.node for n in plan.nodes if n.state_files]
    if moving and kind.writes and not kind.stops:
        raise InputError(
            f"the {kind.word} executor cannot stop the kubelet, but {', '.join(moving)} need their state files "
            f"moved with the kubelet stopped: use {words(lambda k: k.stops and k.writes)}",
            where="executor",
        )


def _connect(request: RolloutRequest, reach: Reach, spec: str) -> tuple[ClusterOps, Callable[[str], Snapshot]]:
    """An execute run's cluster API, and how it collects one node again after changing it."""
    from tmnb.sources.cluster import connect
    from tmnb.sources.resolve import open_snapshot

    api_client, _ = connect(reach.context, reach.kubeconfig)

    def collect(name: str) -> Snapshot:
        return open_snapshot(
            "live",
            f"kubernetes.io/hostname={name}",
            context=request.context,
            kubeconfig=request.kubeconfig,
            node_files=spec,
            progress=False,
        )

    return ClusterOps(api_client), collect


def _keep_first_run(request: RolloutRequest, snapshot: Snapshot, plan: RolloutPlan) -> None:
    """What an execute run keeps in the state folder for every later run of the change: the snapshot
    and the plan of the first (with the request they stand for), and the kubeadm patch."""
    folder = request.folder
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / BEFORE).exists():
        save(snapshot, folder / BEFORE)
    if not (folder / PLAN).exists():
        (folder / PLAN).write_text(plan_json(plan))
        request.store()
    if plan.kubeadm_nodes():
        write_patch(folder, plan.target)


def open_session(*, options: Mapping[str, object] | None = None, **params: Any) -> Session:
    """``prepare`` from 04-rollout's parameters (``request.from_notebook``: ``options`` checked by
    name and type, every other parameter by the request)."""
    return prepare(from_notebook(options, **params))
