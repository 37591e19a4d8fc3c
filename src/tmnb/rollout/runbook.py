"""The cells of notebooks/04-rollout.ipynb, one call each: plan, canary, verify, waves, summary.

Each prints what happened on which node. With a person at the notebook the canary cell shows the
gate panel and the panel chains the waves; the waves cell then only says so, because it runs
before any click is seen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tmnb.report.verdict import Tone, Verdict
from tmnb.rollout.gates import decide, describe_gate, pass_gate
from tmnb.rollout.run import Outcome
from tmnb.rollout.session import Session

if TYPE_CHECKING:
    import pandas as pd
    from IPython.display import DisplayHandle

# IPython ships py.typed, but its display functions and classes have no annotations: the calls
# below are untyped calls.


def _show(obj: object) -> None:
    from IPython.display import display

    display(obj)  # type: ignore[no-untyped-call]  # IPython ships py.typed, but display has no annotations


def _markdown(text: str) -> None:
    from IPython.display import Markdown

    _show(Markdown(text))  # type: ignore[no-untyped-call]  # Markdown has no annotations


def answer(session: Session, outcome: Outcome) -> Verdict:
    """The rollout's answer: what is done, what waits or failed, and the exact next command."""
    plan = session.plan
    gates = [f"**{g}**: {', '.join(n.node for n in plan.in_gate(g))}" for g in plan.gates]
    states = [f"**{node}** ({plan.node(node).gate}): {state}" for node, state in outcome.nodes.items()]
    states = states if outcome.status != "planned" else []  # all pending: the gates say it
    excluded = [f"**{e.node}**: {e.reason}" for e in plan.excluded]
    done = [g for g in plan.gates if session.rollout.gate_state(g) == "done"]
    tone: Tone
    if outcome.status == "planned":
        tone, headline = "ok", f"Plan ready: {len(plan.nodes)} node(s) in {len(plan.gates)} gate(s); nothing written."
        steps, command = (
            ["Carry out the canary (writes to the canary node only):"],
            session.rollout_command(done + plan.gates[:1]),
        )
    elif outcome.status == "awaiting approval":
        tone, headline = "warn", f"Waiting at gate {outcome.next_gate}: {outcome.message}."
        steps = [f"Check the canary's comparison (below), then approve {outcome.next_gate}:"]
        command = session.rollout_command([*done, str(outcome.next_gate)])
    elif outcome.status == "completed":
        tone, headline = "ok", f"Rollout complete: {outcome.message}."
        steps, command = ["Collect the cluster again and compare before and after:"], session.compare_command()
    else:
        tone, headline = "stop", f"Rollout {outcome.status}: {outcome.message}."
        steps = ["Approve no further gate; find out why from the evidence (no cluster needed):"]
        command = f"tmnb run notebooks/06-postmortem.ipynb -p evidence {session.state_dir}"
    sections = [("Gates", gates), ("Nodes", states), ("Excluded", excluded), ("What to do next", steps)]
    return Verdict(tone, headline, sections, [command])


def verdict(session: Session) -> DisplayHandle | None:
    """The verdict block at the top of the report, completed by ``summary`` once the gates ran
    (None outside IPython, where ``display`` prints and keeps no handle)."""
    from IPython.display import display

    block = answer(session, session.rollout.outcome())
    handle: DisplayHandle | None = display(block, display_id=True)  # type: ignore[no-untyped-call]  # unannotated in IPython
    return handle


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
    _markdown(
        f"**Change `{plan.change_id}`**: {', '.join(f'`{k}: {v}`' for k, v in plan.target.items())}. "
        f"Mode **{session.rollout.mode}**. Gates in order: {gates}. "
        f"{len(plan.excluded)} node(s) excluded (reasons in the table)."
    )
    from tmnb.report.tables import show

    table, common = shared_warning(session.plan_table())
    if common:
        _markdown(f"**Every planned node**: {common}")
    show(table, "plan", out_dir, empty="No node selected: nothing to plan.")
    diffs = session.diffs()
    if diffs:
        print("Files that will be written:\n")
        print(diffs)


def _report(session: Session, outcome: Outcome, gate: str) -> None:
    for change in session.plan.in_gate(gate):
        print(f"{gate}: {change.node}: {outcome.nodes.get(change.node)}")
        for record in session.rollout.journal.records():
            if record.get("node") == change.node and record.get("event") in ("done", "failed", "skipped"):
                detail = record.get("error") or record.get("result") or ""
                print(f"    {record['step']:<15} {record['event']:<8} {detail}")
    print(f"gate {gate}: {session.rollout.gate_state(gate)}")


def canary(session: Session) -> Outcome:
    """The first gate: carried out when approved, offered as a panel to a person, else closed."""
    gate = session.plan.gates[0] if session.plan.gates else None
    if gate is None:
        print("nothing to roll out: every selected node is excluded or already at the target")
        return session.rollout.outcome()
    if decide(session.rollout, gate) == "done":
        print(f"{gate}: already done (journal {session.journal_path})")
        _report(session, session.rollout.outcome(), gate)
        return session.rollout.outcome()
    if decide(session.rollout, gate) == "plan":
        print(describe_gate(session.rollout, gate))
        print("mode='plan': nothing written. Run again with mode='execute' and approve=['canary'].")
        return session.rollout.outcome()
    outcome = pass_gate(session.rollout, gate)
    _report(session, outcome, gate)
    return outcome


def waves(session: Session) -> Outcome:
    """Every later gate that a parameter approves, in order, stopping at the first failure."""
    rollout = session.rollout
    while True:
        gate = rollout.next_gate()
        decision = decide(rollout, gate)
        if gate is None or decision in ("done", "stopped", "plan"):
            break
        if decision == "ask":
            print(f"gate {gate}: offered in the panel above once the earlier gate completes")
            break
        if decision == "closed":
            print(f"gate {gate}: not approved; nothing written. Approve it with approve=[..., '{gate}'].")
            break
        if gate == session.plan.gates[0]:
            break  # the canary cell decides the canary
        outcome = pass_gate(rollout, gate)
        _report(session, outcome, gate)
    return rollout.outcome()


def summary(session: Session, top: DisplayHandle | None) -> Outcome:
    """The outcome: each node's state, the journal, the snapshots and the next command; the
    verdict block at the top (``top``) updated to it."""
    outcome = session.rollout.outcome()
    if top is not None:
        top.update(answer(session, outcome))  # type: ignore[no-untyped-call]  # unannotated in IPython
    _markdown(session.summary(outcome))
    return outcome


def keep_and_glue(session: Session, out_dir: str) -> None:
    """The journal and plan copied into the run folder; the values ``tmnb run`` reads back."""
    from tmnb.report.glue import glue

    outcome = session.rollout.outcome()
    kept = session.keep(out_dir)
    glue("rollout", outcome.to_json())
    glue("journal", kept.get("journal.jsonl", ""))
    if outcome.status in ("rolled back", "stopped"):
        glue("alert", {"why": outcome.message})
    elif outcome.status == "awaiting approval":
        glue("pending", {"why": outcome.message, "gate": outcome.next_gate})


def rollback(session: Session, node: str) -> Outcome | None:
    """The manual rollback cell: with ``rollback`` naming a node (and mode execute, approve rollback)."""
    if not node:
        print("no manual rollback asked (set rollback to a node name, approve 'rollback', mode 'execute')")
        return None
    outcome = session.rollout.rollback_node(node)
    print(f"{node}: {outcome.nodes.get(node)}: files restored byte for byte, kubelet restarted, old settings verified")
    return outcome
