"""The cells of notebooks/04-rollout.ipynb, one call each: plan, canary, verify, waves, summary.

Each shows what happened on which node, from the journal. With a person at the notebook the next
pending gate gets a panel (the canary's under Canary, a later one under Waves); a panel offers the
gate after it once its own gate ran, and every click redraws the verdict, step log and summary
(``board``). A re-run draws the same state from the journal and offers the same next gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tmnb.report import display
from tmnb.report.glue import glue
from tmnb.report.tables import show
from tmnb.rollout.board import Board, step_log
from tmnb.rollout.gates import decide, describe_gate
from tmnb.rollout.run import Outcome
from tmnb.rollout.session import Session

if TYPE_CHECKING:
    import pandas as pd


def board(session: Session) -> Board:
    """The verdict block at the top of the report; the board the later cells and clicks keep current."""
    shown = Board(session)
    shown.show_verdict()
    return shown


def shared_warning(table: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """A warning that every planned node carries (kubeadm's, on a kubeadm fleet) is said once
    above the plan, not on each row; the table loses the column then, as it does when no node has
    a warning at all."""
    if "warnings" not in table:
        return table, ""
    planned = table[table["gate"] != "excluded"]
    common = set(planned["warnings"])
    if common <= {""}:
        return table.drop(columns="warnings"), ""
    if len(planned) < 2 or len(common) != 1 or "" in common:
        return table, ""
    return table.drop(columns="warnings"), common.pop()


def show_plan(session: Session, out_dir: str) -> None:
    plan = session.plan
    gates = ", ".join(f"{g} ({len(plan.in_gate(g))} node(s))" for g in plan.gates) or "none"
    display.markdown(
        f"**Change `{plan.change_id}`**: {', '.join(f'`{k}: {v}`' for k, v in plan.target.items())}. "
        f"Mode **{session.rollout.mode}**. Gates in order: {gates}. "
        f"{len(plan.excluded)} node(s) excluded (reasons in the table)."
    )
    table, common = shared_warning(session.plan_table())
    if common:
        display.markdown(f"**Every planned node**: {common}")
    show(table, "plan", out_dir, empty="No node selected: nothing to plan.")
    diffs = session.diffs()
    if diffs:
        print("Files that will be written:\n")
        print(diffs)


def canary(session: Session, shown: Board) -> None:
    """The first gate: carried out when approved, offered as a panel to a person, else closed;
    a person re-running the notebook after the canary gets the next gate's panel under Waves."""
    gate = session.plan.gates[0] if session.plan.gates else None
    if gate is None:
        print("nothing to roll out: every selected node is excluded or already at the target")
        return
    decision = decide(session.rollout, gate, interactive=shown.interactive)
    if decision == "plan":
        print(describe_gate(session.rollout, gate))
        print("mode='plan': nothing written. Run again with mode='execute' and approve=['canary'].")
        return
    if decision == "approved":
        session.rollout.run_gate(gate)
    shown.show_log()
    if decision == "held":
        print(session.rollout.outcome().message)
    elif decision == "ask":
        shown.offer(gate)
    elif decision == "closed":
        print(f"gate {gate} is not approved (approve=[...] or a person at the notebook): nothing written")


def waves(session: Session, shown: Board) -> None:
    """Every later gate that a parameter approves, in order, stopping at the first failure; with a
    person at the notebook, the next gate's panel unless the canary's panel leads to it."""
    rollout = session.rollout
    first = session.plan.gates[0] if session.plan.gates else None
    while (gate := rollout.next_gate()) is not None and gate != first:
        decision = decide(rollout, gate, interactive=shown.interactive)
        if decision == "ask":
            shown.offer(gate)
        elif decision == "held":
            print(rollout.outcome().message)
        elif decision == "closed":
            print(describe_gate(rollout, gate))
            print(f"gate {gate}: not approved; nothing written. Approve it with approve=[..., '{gate}'].")
        if decision != "approved":
            return
        print(describe_gate(rollout, gate))
        outcome = rollout.run_gate(gate)
        print(step_log(session, [gate]))
        if outcome.status in ("rolled back", "stopped"):
            return
    if gate == first and shown.offered == gate:
        print(f"the later gates follow in the {gate}'s panel above once it is approved and verified")


def summary(session: Session, shown: Board) -> None:
    """The outcome: each node's state, the journal, the snapshots and the next command; the
    verdict block at the top brought up to date with it."""
    shown.show_summary()


def keep_and_glue(session: Session, out_dir: str) -> None:
    """The journal and plan copied into the run folder; the values ``tmnb run`` reads back."""
    outcome = session.rollout.outcome()
    kept = session.keep(out_dir)
    glue("rollout", {k: v for k, v in outcome.to_json().items() if k != "exit_code"})
    glue("journal", kept.get("journal.jsonl", ""))
    if outcome.status in ("rolled back", "stopped"):
        glue("alert", {"why": outcome.message})
    elif outcome.status in ("awaiting approval", "held"):
        glue("pending", {"why": outcome.message, "gate": outcome.next_gate})


def rollback(session: Session, node: str) -> Outcome | None:
    """The manual rollback cell: with ``rollback`` naming a node (and mode execute, approve rollback)."""
    if not node:
        print("no manual rollback asked (set rollback to a node name, approve 'rollback', mode 'execute')")
        return None
    outcome = session.rollout.rollback_node(node)
    print(f"{node}: {outcome.nodes.get(node)}: files restored byte for byte, kubelet restarted, old settings verified")
    return outcome
