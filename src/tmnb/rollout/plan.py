"""The rollout plan: which nodes change, in which order, and exactly what is written on each.

Built from a snapshot and the readiness result for the same target, before anything runs. The
canary goes first, then waves; each node lists the files it will write (with a diff against the
node's file when the plan could read it), the state files it moves aside and whether it needs a
drain, with the reason. Nodes the what-if says would reject pods, or whose kubelet would refuse
the target, are excluded unless ``override`` names them; a field a command-line flag decides is
refused outright, since an edit of the file would not take effect.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from tmnb.errors import InputError
from tmnb.parse.jsonable import JsonDict
from tmnb.redact import redact_lines
from tmnb.replay import DrainSteps, NodePlan, show_value
from tmnb.replay.drain import KUBELET_ROOT
from tmnb.rollout.apply import APPLY_CHOICES, DROPIN_NAME, ApplyHow, ApplyMode, choose
from tmnb.rollout.arguments import validate_change_id
from tmnb.rollout.config_yaml import new_config
from tmnb.rollout.kubeadm import kubeadm_warning
from tmnb.snapshot import Node, Snapshot
from tmnb.snapshot.select import parse_selector
from tmnb.snapshot.taints import cordoned

if TYPE_CHECKING:
    from tmnb.analysis.readiness import Readiness

DrainPolicy = Literal["auto", "always", "never"]

#: What the plan says of a node cordoned before the change (``steps.NodeRun.uncordon`` keeps its word).
CORDONED_BEFORE = "cordoned before the change: the rollout leaves it cordoned (it uncordons only what it cordoned)"
CPU_STATE = f"{KUBELET_ROOT}/cpu_manager_state"
MEMORY_STATE = f"{KUBELET_ROOT}/memory_manager_state"


Reader = Callable[[str, str], bytes | None]


@dataclass(frozen=True)
class FileChange:
    """One file the rollout writes on a node, before and after, as it may be shown: every line that
    holds a credential is redacted (``redact.redact_lines``). The write itself never uses this text:
    it edits the backup's exact bytes, and the preflight compares the node's file with ``before_sha256``."""

    path: str
    how: Literal["edit", "drop-in"]
    fields: dict[str, Any]
    before: str | None
    after: str
    #: whether ``before`` is the node's file as read (False: not read; ``after`` holds only the fields set)
    read: bool
    #: sha256 of the node's file as read for the plan (None: absent, or not read)
    before_sha256: str | None
    #: the unified diff of the real texts, each line shown redacted (changed or unchanged, never its value)
    unified: str

    def diff(self) -> str:
        return self.unified


def _shown(lines: list[str], real: list[str], other: list[str], other_real: list[str], i: int, j: int) -> str:
    """An unchanged line as shown: redacted if either side's redaction touched it."""
    return lines[i] if lines[i] != real[i] or other[j] == other_real[j] else other[j]


def _range(start: int, stop: int) -> str:
    """A hunk's line range as ``diff -u`` writes it."""
    length = stop - start
    return f"{start + 1}" if length == 1 else f"{start + (1 if length else 0)},{length}"


def _redacted_diff(before: str | None, after: str, fromfile: str, tofile: str) -> str:
    """``diff -u`` of the real texts, each line printed from its redacted copy: a line holding a
    secret shows as changed or unchanged as it is, with the placeholder for the secret."""
    real_a = [] if before is None else before.splitlines(keepends=True)
    real_b = after.splitlines(keepends=True)
    show_a = [] if before is None else redact_lines(before)
    show_b = redact_lines(after)
    out: list[str] = []
    for group in difflib.SequenceMatcher(None, real_a, real_b, autojunk=False).get_grouped_opcodes(3):
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        out.append(f"@@ -{_range(group[0][1], group[-1][2])} +{_range(group[0][3], group[-1][4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + _shown(show_a, real_a, show_b, real_b, i, j1 + i - i1) for i in range(i1, i2)]
                continue
            out += ["-" + show_a[i] for i in range(i1, i2)] + ["+" + show_b[j] for j in range(j1, j2)]
    return "".join(out)


def _file_change(
    path: str, how: Literal["edit", "drop-in"], fields: Mapping[str, Any], raw: bytes | None, before: str | None,
    after: str, *, read: bool,
) -> FileChange:  # fmt: skip
    """The change of one file as the plan keeps it: texts redacted, the real file's checksum kept. Not
    read (an executor that cannot read the node), the diff is the lines the change sets."""
    if read:
        unified = _redacted_diff(before, after, path, path)
    else:
        added = "".join(f"+{line}" for line in redact_lines(after))
        unified = f"# {path} not read (the executor cannot read the node; preflight reads it): sets\n{added}"
    return FileChange(
        path,
        how,
        dict(fields),
        None if before is None else "".join(redact_lines(before)),
        "".join(redact_lines(after)),
        read,
        hashlib.sha256(raw).hexdigest() if raw is not None and read else None,
        unified,
    )


@dataclass(frozen=True)
class NodeChange:
    node: str
    gate: str
    pool: str
    #: field -> (current, planned) for each field the target changes on this node
    changes: dict[str, tuple[str, str]]
    files: list[FileChange]
    state_files: list[str]
    drain: bool
    drain_why: str
    warnings: list[str] = field(default_factory=list)
    #: the what-if replay of the node's pods under the target: admitted / rejected counts
    prediction: dict[str, int] = field(default_factory=dict)
    #: kubeadm manages the node: the change needs a kubeadm patch to survive ``kubeadm upgrade``
    kubeadm: bool = False


@dataclass(frozen=True)
class Excluded:
    node: str
    reason: str


@dataclass(frozen=True)
class RolloutPlan:
    change_id: str
    target: dict[str, Any]
    snapshot_captured_at: str
    nodes: list[NodeChange]
    excluded: list[Excluded]

    @property
    def gates(self) -> list[str]:
        return list(dict.fromkeys(n.gate for n in self.nodes))

    def in_gate(self, gate: str) -> list[NodeChange]:
        return [n for n in self.nodes if n.gate == gate]

    def kubeadm_nodes(self) -> list[str]:
        """The planned nodes kubeadm manages."""
        return [n.node for n in self.nodes if n.kubeadm]

    def node(self, name: str) -> NodeChange:
        for change in self.nodes:
            if change.node == name:
                return change
        raise InputError(f"node {name!r} is not in the plan of change {self.change_id}", where="node")

    def to_json(self) -> JsonDict:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RolloutPlan:
        try:
            nodes = [
                NodeChange(
                    **{
                        **n,
                        "changes": {k: tuple(v) for k, v in n["changes"].items()},
                        "files": [FileChange(**f) for f in n["files"]],
                    }
                )
                for n in doc["nodes"]
            ]
            return cls(
                change_id=doc["change_id"],
                target=dict(doc["target"]),
                snapshot_captured_at=doc["snapshot_captured_at"],
                nodes=nodes,
                excluded=[Excluded(**e) for e in doc["excluded"]],
            )
        except (KeyError, TypeError) as exc:
            raise InputError(f"not a tmnb rollout plan: {exc}", where="plan") from None

    def rows(self) -> list[dict[str, Any]]:
        """One row per node (planned or excluded), in rollout order, for a table."""
        rows = [
            {
                "order": i + 1,
                "node": n.node,
                "gate": n.gate,
                "pool": n.pool,
                "changes": "; ".join(f"{k}: {a} -> {b}" for k, a, b in ((k, *v) for k, v in n.changes.items())),
                "writes": ", ".join(f.path for f in n.files),
                "state files moved": ", ".join(n.state_files),
                "drain": "yes" if n.drain else "no",
                "why": n.drain_why,
                "warnings": " ".join(n.warnings),
            }
            for i, n in enumerate(self.nodes)
        ]
        rows += [{"node": e.node, "gate": "excluded", "why": e.reason} for e in self.excluded]
        return rows


def overridden_by(node: Node, target: Mapping[str, Any], how: str, written: str = DROPIN_NAME) -> list[str]:
    """Target fields that something other than what the plan writes decides, named with the layer and
    its file: a command-line flag (beats the file and every drop-in), a drop-in merged after the
    written layer, or a running kubelet (/configz) whose value no layer tmnb read explains. Every layer
    is looked at, not only the winning one: when configz reports a value, the files' layers sit under it."""
    reasons = []
    for name in target:
        setting = node.kubelet.settings.get(name)
        if setting is None:
            continue
        layers = (*setting.overridden, setting.as_layer())
        flags = [layer for layer in layers if layer.source == "flag"]
        later = [
            layer
            for layer in layers
            if layer.source == "dropin" and (how == "edit" or (layer.detail or "").rsplit("/", 1)[-1] > written)
        ]
        if flags:
            flag = flags[-1]
            reasons.append(
                f"{name} is set by the command-line flag {flag.detail or '(unknown flag)'}={show_value(flag.value)}, "
                "which beats the config file and its drop-ins; remove the flag from the kubelet's unit, its "
                "environment files or KUBELET_EXTRA_ARGS first"
            )
        elif later:
            reasons.append(
                f"{name} is set by the drop-in {later[-1].detail}, which the kubelet merges after the "
                + ("config file" if how == "edit" else written)
            )
        elif setting.source == "configz":
            files = [layer for layer in setting.overridden if layer.source in ("file", "dropin", "default")]
            if files and show_value(files[-1].value) != show_value(setting.value):
                where = files[-1].detail or "the default"
                reasons.append(
                    f"{name}: the running kubelet (/configz) has {show_value(setting.value)} but {where} says "
                    f"{show_value(files[-1].value)}: something tmnb did not read decides it, or the kubelet has not "
                    "been restarted since that file changed"
                )
    return reasons


def _files(node: Node, fields: Mapping[str, Any], mode: ApplyMode, read: Reader | None) -> FileChange:
    """The file ``mode`` writes, with the bytes read on the node as its 'before' (without a reader:
    none, and an edit shows as the fields it sets, since the rest of the file is not known)."""
    path = mode.path(node)
    if read is None:
        after = mode.content(None, fields, path) if mode.whole else new_config(fields, header=False)
        return _file_change(path, mode.word, fields, None, None, after, read=False)
    raw = read(node.name, path)
    before = _decode(raw, path)
    return _file_change(path, mode.word, fields, raw, before, mode.content(before, fields, path), read=True)


def _decode(raw: bytes | None, path: str) -> str | None:
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("the kubelet config is not UTF-8 text", source=path) from None


def _drain(node: str, steps: DrainSteps, policy: DrainPolicy) -> tuple[bool, str]:
    """The drain of ``steps`` (the decision readiness shows, ``replay.drain``) under the user's drain policy."""
    if policy == "always":
        return True, "drain requested for every node (drain='always')"
    if steps.drain and policy == "never":
        raise InputError(f"node {node}: drain='never' but {steps.why}", where="drain")
    if policy == "never":
        return False, "drain='never'"
    return steps.drain, steps.why


def select(snapshot: Snapshot, nodes: Iterable[str] | None, node_selector: str | None) -> list[Node]:
    """The nodes the rollout may touch: named ones (each must exist), or those a label selector matches."""
    if nodes:
        known = {n.name: n for n in snapshot.nodes}
        missing = [n for n in nodes if n not in known]
        if missing:
            raise InputError(f"unknown node(s) {', '.join(missing)} (not in the snapshot)", where="nodes")
        return [known[n] for n in dict.fromkeys(nodes)]
    matches = parse_selector(node_selector)
    return [n for n in snapshot.nodes if matches(n.labels)]


def _gates(
    canary: str, rest: Sequence[str], waves: int | Sequence[Sequence[str]], kind: Callable[[str], object]
) -> dict[str, str]:
    """The gate of each node: the canary's, then waves of at most ``waves`` nodes of one ``kind`` each (``rest``
    comes kind by kind), so a wave's failure points at one pool; waves given as lists are taken as they are."""
    gate = {canary: "canary"}
    if isinstance(waves, int):
        if waves < 1:
            raise InputError(f"expected a wave size of at least 1, got {waves}", where="waves")
        number = 0
        for _, members in itertools.groupby(rest, key=kind):
            same = list(members)
            for i in range(0, len(same), waves):
                number += 1
                gate.update({n: f"wave-{number}" for n in same[i : i + waves]})
        return gate
    listed = [n for wave in waves for n in wave]
    extra = sorted(set(listed) - set(rest) - {canary})
    if extra:
        raise InputError(f"node(s) {', '.join(extra)} in waves are not planned (excluded or unknown)", where="waves")
    for i, wave in enumerate(waves):
        gate.update({n: f"wave-{i + 1}" for n in wave if n != canary})
    unplaced = [n for n in rest if n not in gate]
    if unplaced:
        raise InputError(f"node(s) {', '.join(unplaced)} are planned but in no wave", where="waves")
    return gate


def _pick_canary(
    canary: str,
    included: Sequence[str],
    recommended: Sequence[str],
    not_canary: Mapping[str, str],
    cordoned: Collection[str],
) -> str:
    """The named canary, or for ``recommended`` readiness's choice: its pick of a pool among the planned
    nodes, else the first planned node that can be a canary (``Readiness.not_canary``), else none. A named
    canary may be anything the plan changes but a cordoned node, where no new pod would show the change."""
    if not included:
        raise InputError("no node is left to change: every selected node is excluded (see the plan's exclusions)")
    if canary != "recommended":
        if canary not in included:
            raise InputError(f"{canary!r} is not a planned node (excluded, unchanged or unknown)", where="canary")
        if canary in cordoned:
            raise InputError(
                f"{canary} is cordoned: no new pod lands there to show the change works; name another canary "
                "(the cordoned node can go in a wave, and stays cordoned)",
                where="canary",
            )
        return canary
    eligible = [n for n in recommended if n in included] + [n for n in included if n not in not_canary]
    if not eligible:
        from tmnb.report.tables import some

        why = some([f"{n}: {not_canary[n]}" for n in included], 3, "; ")
        raise InputError(
            f"no planned node can be the canary ({why}); fix what blocks one, or name the canary to start with",
            where="canary",
        )
    return eligible[0]


def _drained_prediction(
    node: Node, snapshot: Snapshot, readiness: Readiness, replayed: dict[str, Any] | None
) -> dict[str, int]:
    """Admitted and rejected pods when the node's pods are re-admitted after a drain: the readiness
    replay's counts when it replayed in drain mode (the same plan), else a replay of its own."""
    if readiness.mode == "drain" and replayed is not None:
        rejected = int(replayed["rejected"])
        return {"admitted": int(replayed["pods replayed"]) - rejected, "rejected": rejected}
    from tmnb.analysis.whatif import replay_node

    target = readiness.target
    drained = replay_node(node, snapshot.pods_on(node.name), target, mode="drain", plan=readiness.plans[node.name])
    return {
        "admitted": sum(r.admitted for r in drained.results),
        "rejected": sum(not r.admitted for r in drained.results),
    }


def build_plan(
    snapshot: Snapshot,
    readiness: Readiness,
    *,
    change_id: str,
    nodes: Iterable[str] | None = None,
    node_selector: str | None = None,
    canary: str = "recommended",
    waves: int | Sequence[Sequence[str]] = 5,
    override: Iterable[str] = (),
    apply: ApplyHow = "auto",
    drain: DrainPolicy = "auto",
    read: Reader | None = None,
) -> RolloutPlan:
    """The ordered plan for ``readiness.target`` (a ``tmnb.analysis.readiness.Readiness`` of the same
    snapshot). ``read(node, path)`` returns a node file's bytes (an executor's read) for exact diffs."""
    from tmnb.analysis.occupancy import pool_of

    validate_change_id(change_id)
    if apply not in APPLY_CHOICES:
        raise InputError(f"expected {', '.join(APPLY_CHOICES)}, got {apply!r}", where="apply")
    if drain not in ("auto", "always", "never"):
        raise InputError(f"expected auto, always or never, got {drain!r}", where="drain")
    target: dict[str, Any] = dict(readiness.target)
    override = set(override)
    unknown = override - {n.name for n in snapshot.nodes}
    if unknown:
        raise InputError(f"unknown node(s) {', '.join(sorted(unknown))}", where="override")
    verdicts = {r["node"]: r for r in readiness.verdicts.to_dict("records")}
    refusals = {r["node"]: r for r in readiness.nodes.to_dict("records")} if not readiness.nodes.empty else {}
    planned: list[tuple[Node, NodeChange]] = []
    excluded: list[Excluded] = []
    for node in select(snapshot, nodes, node_selector):
        plan: NodePlan = readiness.plans[node.name]
        changes = {k: (show_value(plan.current.get(k)), show_value(plan.planned.get(k))) for k in target}
        changes = {k: v for k, v in changes.items() if v[0] != v[1]}
        if not changes:
            excluded.append(Excluded(node.name, "already at the target: nothing to change"))
            continue
        steps = readiness.steps[node.name]
        verdict = verdicts.get(node.name, {})
        if steps.refused and node.name not in override:
            excluded.append(Excluded(node.name, f"the kubelet would refuse the target: {steps.refused}"))
            continue
        if verdict.get("rejected pods") and node.name not in override:
            excluded.append(
                Excluded(
                    node.name,
                    f"the what-if rejects {verdict['rejected pods']} pod(s) ({verdict['first rejection']}); "
                    "name the node in override to change it anyway",
                )
            )
            continue
        mode, cannot = choose(node, plan.kubelet, apply)
        blocked = [cannot] if cannot else overridden_by(node, target, mode.word)
        if blocked:
            excluded.append(Excluded(node.name, "refused: " + "; ".join(blocked)))
            continue
        files = [_files(node, target, mode, read)]
        warnings = [kubeadm_warning(files[0].path, files[0].how)] if node.kubelet.kubeadm_managed else []
        if cordoned(node):
            warnings.append(CORDONED_BEFORE)
        states = steps.state_files
        needs_drain, why = _drain(node.name, steps, drain)
        prediction = _drained_prediction(node, snapshot, readiness, refusals.get(node.name))
        change = NodeChange(
            node.name, "", pool_of(node), changes, files, states, needs_drain, why, warnings, prediction,
            node.kubelet.kubeadm_managed,
        )  # fmt: skip
        planned.append((node, change))

    def pool(name: str) -> str:
        return str(verdicts.get(name, {}).get("pool", ""))

    included = sorted((n.name for n, _ in planned), key=lambda name: (pool(name), name))
    recommended = [c for c in readiness.canary["canary"].tolist() if c] if not readiness.canary.empty else []
    if not planned:
        reasons = "; ".join(f"{e.node}: {e.reason}" for e in excluded) or "no node matches the selection"
        raise InputError(f"nothing to roll out: {reasons}", where="plan")
    held = {n.name for n, _ in planned if cordoned(n)}
    first = _pick_canary(canary, included, recommended, readiness.not_canary, held)
    # the canary's pool first, then pool by pool; the cordoned nodes last, in waves of their own: they take no
    # new pods, so a wave of them shows nothing of how the change admits pods
    rest = sorted((n for n in included if n != first), key=lambda n: (n in held, pool(n) != pool(first), pool(n), n))
    gates = _gates(first, rest, waves, lambda n: (n in held, pool(n)))
    by_name = {c.node: c for _, c in planned}
    order = [first, *rest]
    ordered = sorted(gates, key=lambda n: (0 if gates[n] == "canary" else int(gates[n].split("-")[1]), order.index(n)))
    nodes_out = [NodeChange(**{**asdict(by_name[n]), "files": by_name[n].files, "gate": gates[n]}) for n in ordered]
    return RolloutPlan(change_id, target, snapshot.captured_at, nodes_out, excluded)


def plan_json(plan: RolloutPlan) -> str:
    return json.dumps(plan.to_json(), indent=2, sort_keys=False, default=str)
