"""Carry a plan out gate by gate: canary first, then each wave, stopping at the first surprise.

A gate is the unit of approval ("canary", "wave-1", ...). Nothing is written unless the mode is
``execute`` and the gate is approved (by parameter, or by a person through ``tmnb.rollout.gates``).
Nodes of a gate change one at a time; a node that fails or is rolled back stops the rollout with
every later node untouched. The journal decides what is already done, so a second run with the
same change id resumes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tmnb.errors import InputError, RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.rollout.cluster import ClusterOps
from tmnb.rollout.journal import LEFT_CORDONED, NODE_STEP, account, left_cordoned, resumed_node
from tmnb.rollout.plan import RolloutPlan
from tmnb.rollout.soak import Soak, check
from tmnb.rollout.steps import NodeResult, NodeRun, Options
from tmnb.snapshot import Snapshot

if TYPE_CHECKING:
    from tmnb.rollout.journal import Event, Journal
    from tmnb.rollout.ops import NodeOps

Mode = Literal["plan", "execute"]
Status = Literal["planned", "completed", "awaiting approval", "held", "stopped", "rolled back"]
#: ``tmnb run`` / ``tmnb rollout`` exit statuses (README "Exit status").
EXIT_CODES: dict[str, int] = {
    "planned": 0,
    "completed": 0,
    "awaiting approval": 5,
    "held": 5,
    "stopped": 3,
    "rolled back": 3,
}
#: the approval a manual rollback needs besides naming the node
ROLLBACK_GATE = "rollback"
#: the approval that lifts a hold (an Abort at the notebook); the gate itself still needs its own
RESUME_GATE = "resume"


@dataclass
class Outcome:
    status: Status
    nodes: dict[str, str]
    next_gate: str | None
    message: str
    mode: Mode
    rolled_back: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_json(self) -> JsonDict:
        return {
            "status": self.status,
            "nodes": self.nodes,
            "next_gate": self.next_gate,
            "message": self.message,
            "mode": self.mode,
            "rolled_back": self.rolled_back,
            "exit_code": self.exit_code,
        }


class Rollout:
    def __init__(
        self,
        plan: RolloutPlan,
        *,
        journal: Journal,
        run_dir: str | Path,
        mode: Mode = "plan",
        approve: Iterable[str] = (),
        executor_for: Callable[[str], NodeOps] | None = None,
        cluster: ClusterOps | None = None,
        collect: Callable[[str], Snapshot] | None = None,
        options: Options | None = None,
        pause: float = 0.0,
        soak: Soak | None = None,
    ) -> None:
        if mode not in ("plan", "execute"):
            raise InputError(f"expected plan or execute, got {mode!r}", where="mode")
        approve = list(approve)
        unknown = [g for g in approve if g not in (*plan.gates, ROLLBACK_GATE, RESUME_GATE)]
        if unknown:
            raise InputError(
                f"unknown gate(s) {', '.join(unknown)}: this plan has {', '.join(plan.gates) or 'no gates'}",
                where="approve",
            )
        if mode == "execute" and (executor_for is None or cluster is None or collect is None):
            raise InputError("execute mode needs an executor, a cluster connection and a node collector")
        self.plan = plan
        self.journal = journal
        self.run_dir = Path(run_dir)
        self.mode: Mode = mode
        self.approved = set(approve)
        self.executor_for = executor_for
        self.cluster = cluster
        self.collect = collect
        self.options = options or Options()
        self.pause = pause
        self.soak = soak

    # ------------------------------------------------------------------ state from the journal
    def node_state(self, node: str) -> str:
        """'pending', 'in progress', 'done', 'rolled back' or 'failed', as the journal tells."""
        state = "pending"
        for record in self.journal.records():
            if record.get("node") != node:
                continue
            if record.get("step") == NODE_STEP and record.get("event") in ("done", "failed"):
                state = str(record.get("result"))
            elif state == "pending":
                state = "in progress"
        return state

    def gate_state(self, gate: str) -> str:
        states = {self.node_state(n.node) for n in self.plan.in_gate(gate)}
        if states <= {"done"}:
            return "done"
        if states & {"rolled back", "failed"}:
            return "failed"
        return "pending"

    def next_gate(self) -> str | None:
        return next((g for g in self.plan.gates if self.gate_state(g) != "done"), None)

    def approvals(self, outcome: Outcome) -> list[str]:
        """What the run after ``outcome`` approves to go on: the gates done, ``resume`` when the change is
        held, and the next gate. Every printed next run carries this list (04's verdict and summary,
        ``tmnb rollout status``); empty when no gate is left."""
        if outcome.next_gate is None:
            return []
        done = [g for g in self.plan.gates if self.gate_state(g) == "done"]
        return [*done, *([RESUME_GATE] if outcome.status == "held" else []), outcome.next_gate]

    def hold(self) -> JsonDict | None:
        """The Abort that holds this change: its journal record, unless a resume came after it."""
        last = None
        for record in self.journal.records():
            mine = record.get("change_id") == self.plan.change_id and record.get("step") == "gate"
            if mine and record.get("hold") in ("abort", "resume"):
                last = record
        return last if last is not None and last.get("hold") == "abort" else None

    def abort(self, gate: str, who: str = "a person at the notebook") -> None:
        """Hold the change at ``gate``: no gate runs, here or in a later run, until it is resumed."""
        self.journal.record(None, "gate", "info", gate=gate, hold="abort", result=f"aborted by {who}")

    def _resume(self, gate: str) -> None:
        held = self.hold()
        if held is None:
            return
        if RESUME_GATE not in self.approved:
            raise RolloutError(f"gate {gate}: the change is held ({self._held_message(held)})")
        self.journal.record(None, "gate", "info", gate=gate, hold="resume", result=f"resumed (approve {RESUME_GATE})")

    @staticmethod
    def _held_message(held: JsonDict) -> str:
        return (
            f"held at gate {held.get('gate')}: {held.get('result')} at {held.get('time')}; nothing runs until "
            f"the change is resumed (approve {RESUME_GATE})"
        )

    def soak_failure(self) -> str:
        failed = [r for r in self.journal.records() if r.get("step") == "soak" and r.get("event") == "failed"]
        return str(failed[-1].get("error", "")) if failed else ""

    def outcome(self, message: str = "") -> Outcome:
        nodes = {n.node: self.node_state(n.node) for n in self.plan.nodes}
        back = [n for n, s in nodes.items() if s == "rolled back"]
        failed = [n for n, s in nodes.items() if s == "failed"]
        nxt = self.next_gate()
        soaked = self.soak_failure()
        held = self.hold()
        status: Status
        if back:
            status = "rolled back"
        elif failed or soaked:
            status = "stopped"
        elif nxt is None:
            status = "completed"
        elif held is not None:
            status = "held"
        elif self.mode == "plan":
            status = "planned"
        else:
            status = "awaiting approval"
        if not message:
            records, here = self.journal.records(), self.journal.path.parent
            interrupted = [account(records, n, here) for n, s in nodes.items() if s == "in progress"]
            resumed = [account(records, n, here) for n in nodes if resumed_node(records, n)]
            kept = [f"{n} {LEFT_CORDONED}" for n in nodes if left_cordoned(records, n)]
            message = {
                "rolled back": "; ".join(account(records, n, here) for n in back) + "; the rollout stopped there",
                "stopped": "; ".join(account(records, n, here) for n in failed)
                if failed
                else f"stopped after the canary's soak: {soaked}",
                "completed": "; ".join([f"every planned node has the change ({len(nodes)} node(s))", *kept, *resumed]),
                "planned": "; ".join([f"plan only: nothing was written by this run; next gate {nxt}", *interrupted]),
                "awaiting approval": "; ".join([f"waiting at gate {nxt}: approve it to continue", *kept, *interrupted]),
                "held": self._held_message(held) if held else "",
            }[status]
        return Outcome(status, nodes, nxt, message, self.mode, back)

    # ------------------------------------------------------------------ acting
    def run_gate(self, gate: str) -> Outcome:
        """Carry out every node of ``gate`` (the caller has the approval); stop at the first failure."""
        if self.mode != "execute":
            raise RolloutError(f"gate {gate}: mode is {self.mode!r}, nothing is written outside mode='execute'")
        if gate != self.next_gate():
            raise RolloutError(f"gate {gate} is not next: {self.next_gate() or 'nothing'} is")
        with self.journal.lock():
            self._resume(gate)
            return self._run_gate(gate)

    def _run_gate(self, gate: str) -> Outcome:
        assert self.executor_for is not None and self.cluster is not None and self.collect is not None
        nodes = [n.node for n in self.plan.in_gate(gate)]
        self.journal.record(None, "gate", "info", gate=gate, result="running", nodes=nodes)
        for change in self.plan.in_gate(gate):
            if self.node_state(change.node) == "done":
                continue
            run = NodeRun(
                change,
                self.plan,
                self.executor_for(change.node),
                self.cluster,
                self.journal,
                self.run_dir,
                self.options,
                self.collect,
            )
            result: NodeResult
            try:
                result = run.run()
            except RolloutError:  # the step that failed (preflight, or the rollback) has journaled it
                result = "failed"
            event: Event = "done" if result == "done" else "failed"
            self._close(change.node, event, result=result, gate=gate)
            if result != "done":
                return self.outcome()
        if gate == "canary" and self.soak is not None:
            self._soak()
        return self.outcome()

    def _soak(self) -> None:
        """Application metrics after the canary; a regression (or no metrics at all) stops the rollout."""
        assert self.soak is not None
        if self.journal.completed(None, "soak"):
            return
        self.journal.record(None, "soak", "intent", intent=f"soak {self.soak.minutes:g} min, then compare metrics")
        try:
            regressions, compared = check(self.soak, self.journal.path)
        except InputError as exc:
            self.journal.record(None, "soak", "failed", error=str(exc))
            return
        if regressions:
            self.journal.record(None, "soak", "failed", error="; ".join(regressions), compared=compared)
        else:
            self.journal.record(
                None, "soak", "done", result=f"no regression beyond {self.soak.threshold_pct:g}%: {compared}"
            )

    def _close(self, node: str, event: Event, **fields: str) -> None:
        """The node's last record, with the journal's account of what was applied and restored."""
        closing: JsonDict = {"node": node, "step": NODE_STEP, "event": event, **fields}
        summary = account([*self.journal.records(), closing], node, self.journal.path.parent)
        self.journal.record(node, NODE_STEP, event, summary=summary, **fields)

    def rollback_node(self, node: str, reason: str = "manual rollback") -> Outcome:
        """Put back what was there on ``node`` (from its backup), whatever state it is in."""
        if self.mode != "execute" or ROLLBACK_GATE not in self.approved:
            raise RolloutError(f"a rollback writes: it needs mode='execute' and approve=[..., '{ROLLBACK_GATE}']")
        change = self.plan.node(node)
        assert self.executor_for is not None and self.cluster is not None and self.collect is not None
        with self.journal.lock():
            run = NodeRun(
                change, self.plan, self.executor_for(node), self.cluster, self.journal, self.run_dir, self.options,
                self.collect,
            )  # fmt: skip
            if run.done("backup") is None:
                raise RolloutError("nothing to roll back: the journal has no backup of this node", node=node)
            run.rollback(reason=reason)
            self._close(node, "failed", result="rolled back", reason=reason)
        return self.outcome()

    def run(self) -> Outcome:
        """Every approved gate in order; stops at the first unapproved gate or failure."""
        first = True
        while True:
            gate = self.next_gate()
            current = self.outcome()
            if gate is None or current.status in ("rolled back", "stopped") or self.mode == "plan":
                return current
            if gate not in self.approved or (current.status == "held" and RESUME_GATE not in self.approved):
                return current
            if not first and self.pause:
                self.journal.record(None, "pause", "info", result=f"pausing {self.pause:g}s before {gate}")
                time.sleep(self.pause)
            first = False
            result = self.run_gate(gate)
            if result.status in ("rolled back", "stopped"):
                return result
