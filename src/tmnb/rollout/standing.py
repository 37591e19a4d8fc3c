"""Where a change stands, from its folder alone: what ``tmnb rollout list`` and ``tmnb rollout status``
print (``cli.rollout_view`` lays it out), with the one next command.

A change's state folder holds its plan, journal and stored request; each run of 04-rollout copies the
journal and plan into its run folder and names the state folder in its manifest. Both are found
under the folders a user names (the demo's ``reports/<time>-demo/`` holds ``rollout-state/`` and
``04-rollout/``) as well as in the default state root, and a run folder stands for the state
folder it ran against while that one is there. The approvals the next run needs come from
``Rollout.approvals``, as in 04's verdict and summary, so every face prints the same next step.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmnb.errors import InputError, RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.report.commands import Value, command
from tmnb.report.places import change_folder
from tmnb.rollout.journal import (
    LEFT_CORDONED,
    NODE_STEP,
    WRITING_STEPS,
    Journal,
    left_cordoned,
    rollback_command,
)
from tmnb.rollout.plan import RolloutPlan
from tmnb.rollout.run import Outcome, Rollout

JOURNAL, PLAN, MANIFEST = "journal.jsonl", "plan.json", "manifest.json"


# ---------------------------------------------------------------------- the commands printed here
def _elsewhere(change_id: str, folder: Path) -> Path | None:
    """``folder`` when it is not the change's default state folder (a command must then name it)."""
    return None if folder.resolve() == change_folder(change_id).resolve() else folder


def execute_command(change_id: str, folder: Path, approve: Sequence[str]) -> str:
    """The CLI run that goes on with a change: its stored request, the gates ``approve`` names."""
    return command(
        "rollout", "execute", change_id=change_id, state_dir=_elsewhere(change_id, folder), approve=list(approve)
    )


def postmortem_command(evidence: Path) -> str:
    """06-postmortem over a change's folder: why it stopped, from the evidence alone (no cluster)."""
    return command("run", "06-postmortem", params={"evidence": evidence})


def compare_command(folder: Path, nodes: Sequence[str], context: str | None = None, node_files: str = "") -> str:
    """Collect the cluster again, then compare the changed ``nodes`` with the snapshot the plan used."""
    collected = folder / "after-inventory"
    collect: dict[str, Value] = {"source": "live", "context": context or None, "node_files": node_files or None}
    inventory = command("run", "01-inventory", params=collect, out=collected)
    compare = command(
        "run",
        "05-compare",
        params={
            "before": folder / "snapshots" / "before.json.gz",
            "after": collected / "snapshot.json.gz",
            "change": folder / JOURNAL,
            "node_selector": f"kubernetes.io/hostname in ({','.join(nodes)})",
        },
    )
    return f"{inventory} && {compare}"


# ---------------------------------------------------------------------- finding changes
def _manifest(folder: Path) -> JsonDict | None:
    try:
        doc = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def _plan(folder: Path) -> RolloutPlan:
    try:
        return RolloutPlan.from_json(json.loads((folder / PLAN).read_text()))
    except (OSError, ValueError):
        raise InputError("no readable plan.json: not a change's folder", source=str(folder)) from None


def _state_of(run: Path) -> Path | None:
    """The state folder a run folder of 04-rollout ran against, when it is still there."""
    manifest = _manifest(run)
    if manifest is None:
        return None
    params = manifest.get("parameters") or {}
    given = params.get("state_dir") if isinstance(params, dict) else None
    try:
        state = Path(given) if given else change_folder(_plan(run).change_id)
    except InputError:
        return None
    return state if (state / JOURNAL).is_file() and (state / PLAN).is_file() else None


def _candidates(root: Path) -> Iterable[Path]:
    """``root``, its sub-folders and theirs: a state root, a reports folder or a run folder."""
    yield root
    for child in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else ():
        yield child
        yield from sorted(p for p in child.iterdir() if p.is_dir())


def find_changes(roots: Sequence[Path]) -> list[Path]:
    """The folders of every change found under ``roots``, each once: a state folder, or for a run
    folder of 04-rollout the state folder it ran against (its own copies when that one is gone)."""
    found: dict[Path, None] = {}
    for root in roots:
        for folder in _candidates(root):
            if (folder / JOURNAL).is_file() and (folder / PLAN).is_file():
                state = _state_of(folder) if (folder / MANIFEST).is_file() else folder
                found[(state or folder).resolve()] = None
    return list(found)


# ---------------------------------------------------------------------- where a change stands
def _at(time: object) -> str:
    """A journal time (RFC 3339, UTC) to the minute, as a person reads it."""
    text = str(time or "")
    return f"{text[:10]} {text[11:16]} UTC" if len(text) >= 16 else "an unknown time"


def _running(journal: Journal) -> JsonDict | None:
    """The holder of the change's lock (pid, host, since) while a run holds it: a lock file whose
    process is gone on this host is a killed run's, and says nothing."""
    try:
        holder = json.loads(journal.lock_path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(holder, dict):
        return None
    if holder.get("host") != socket.gethostname():
        return holder
    try:
        os.kill(int(holder.get("pid") or 0), 0)
    except PermissionError:
        return holder
    except (OSError, ValueError, OverflowError):
        return None
    return holder


@dataclass(frozen=True)
class Standing:
    """One change as its folder tells it. ``line``: where it stands, in one line; ``why``: the error
    that stopped it; ``note``: the nodes it left cordoned as it found them; ``next``: what to do and
    the command that does it."""

    change_id: str
    folder: Path
    target: dict[str, Any]
    done: int
    total: int
    #: where it stands in a few words (``list``'s column)
    short: str
    line: str
    why: str
    next: tuple[str, str]
    note: str
    #: the time of the change's last record (the order ``list`` prints changes in)
    last: str
    records: tuple[JsonDict, ...]
    nodes: tuple[str, ...]


def standing(folder: Path) -> Standing:
    """Where the change kept in ``folder`` (a state folder, or a run folder's copies) stands."""
    if not (folder / PLAN).is_file() and (folder / JOURNAL).is_file():
        return _journal_only(folder)
    plan = _plan(folder)
    journal = Journal(folder / JOURNAL, plan.change_id)
    rollout = Rollout(plan, journal=journal, run_dir=folder)
    try:
        outcome = rollout.outcome()
    except RolloutError as exc:
        raise InputError(str(exc), source=str(folder / JOURNAL)) from None
    records = tuple(r for r in journal.records() if r.get("change_id") == plan.change_id)
    reading = _Reading(folder, rollout, outcome, records)
    said = {
        "completed": reading.completed,
        "rolled back": reading.rolled_back,
        "stopped": reading.stopped,
        "held": reading.held,
    }.get(outcome.status, reading.pending)()
    if (folder / MANIFEST).is_file():  # a run folder's copies: the state folder it ran against is gone
        said = (*said[:3], ("read its evidence with", postmortem_command(folder)))
    return Standing(
        plan.change_id,
        folder,
        dict(plan.target),
        reading.done,
        len(outcome.nodes),
        *said,
        reading.kept,
        str(records[-1].get("time", "")) if records else "",
        records,
        tuple(n.node for n in plan.nodes),
    )


def _journal_only(folder: Path) -> Standing:
    """A journal without its plan beside it (copied alone, say): its last record and the nodes it
    names, read as evidence; the gates and the nodes still to come are the plan's, unknown here."""
    records = tuple(Journal(folder / JOURNAL, "journal").records())
    if not records:
        raise InputError("an empty journal and no plan.json: nothing tells where a change stands", source=str(folder))
    last = records[-1]
    nodes = tuple(dict.fromkeys(str(r["node"]) for r in records if r.get("node")))
    done = sum(any(r.get("node") == n and r.get("step") == NODE_STEP and r.get("result") == "done" for r in records)
               for n in nodes)  # fmt: skip
    where = f" on {last['node']}" if last.get("node") else ""
    count = f"{done} of {len(nodes)} node{'' if len(nodes) == 1 else 's'} it names done"
    line = f"journal only, no plan.json: last {last.get('step')} {last.get('event')}{where} at {_at(last.get('time'))}"
    line += f"; {count}"
    evidence = ("read its evidence with", postmortem_command(folder))
    return Standing(str(last.get("change_id")), folder, {}, done, len(nodes), "journal only", line, "", evidence, "",
                    str(last.get("time", "")), records, nodes)  # fmt: skip


#: what ``_Reading`` tells of a change: where it stands in a few words and in a line, why it stopped,
#: the next step
_Said = tuple[str, str, str, tuple[str, str]]


@dataclass(frozen=True)
class _Reading:
    """One change's outcome read for a person: one method per way a change can stand."""

    folder: Path
    rollout: Rollout
    outcome: Outcome
    records: tuple[JsonDict, ...]

    @property
    def done(self) -> int:
        return sum(state == "done" for state in self.outcome.nodes.values())

    @property
    def count(self) -> str:
        total = len(self.outcome.nodes)
        return f"{self.done} of {total} node{'' if total == 1 else 's'} done"

    @property
    def change_id(self) -> str:
        return self.rollout.plan.change_id

    @property
    def kept(self) -> str:
        """The nodes the change found cordoned and leaves so (tmnb uncordons only what it cordoned)."""
        kept = [n for n in self.outcome.nodes if left_cordoned(list(self.records), n)]
        return f"{', '.join(kept)} {LEFT_CORDONED}" if kept else ""

    def _of(self, node: str, step: str | None = None) -> list[JsonDict]:
        return [r for r in self.records if r.get("node") == node and step in (None, r.get("step"))]

    def _failure(self, node: str) -> JsonDict:
        """The step that failed on ``node`` (its closing record and a rollback aside); {} for none."""
        failed = (
            r for r in self._of(node) if r.get("event") == "failed" and r.get("step") not in (NODE_STEP, "rollback")
        )
        return next(failed, {})

    def _go_on(self, label: str) -> tuple[str, str]:
        return label, execute_command(self.change_id, self.folder, self.rollout.approvals(self.outcome))

    def completed(self) -> _Said:
        line = f"done: {self.count}, each verified; the last step at {_at(self.records[-1].get('time'))}"
        nodes = [n.node for n in self.rollout.plan.nodes]
        return "done", line, "", ("compare before and after with", compare_command(self.folder, nodes))

    def rolled_back(self) -> _Said:
        node = self.outcome.rolled_back[0]
        failed, when = self._failure(node), _at(self._of(node, "rollback")[-1].get("time"))
        postmortem = ("find out why with", postmortem_command(self.folder))
        if not failed:  # a rollback a person asked for
            reason = str(next((r["reason"] for r in self._of(node) if r.get("reason")), ""))
            return (
                f"rolled back ({node})",
                f"rolled back on {node} at {when} on request; {self.count}",
                reason,
                postmortem,
            )
        step, why = failed["step"], str(failed.get("error", ""))
        line = f"rolled back on {node} at {when} after {step} failed; {self.count}"
        return f"rolled back ({node}: {step})", line, why, postmortem

    def stopped(self) -> _Said:
        """A node failed and was left as it is, or the canary's soak found a regression."""
        node = next((n for n, s in self.outcome.nodes.items() if s == "failed"), None)
        if node is None:
            soak = [r for r in self.records if r.get("step") == "soak" and r.get("event") == "failed"][-1]
            line = f"stopped after the {self.rollout.plan.gates[0]}'s soak at {_at(soak.get('time'))}; {self.count}"
            why = str(soak.get("error", ""))
            return "stopped after the soak", line, why, ("find out why with", postmortem_command(self.folder))
        failed = self._failure(node)
        step = str(failed.get("step") or "its rollback")
        wrote = any(r.get("step") in WRITING_STEPS and r.get("event") == "done" for r in self._of(node))
        unrestored = any(r.get("event") == "failed" for r in self._of(node, "rollback"))
        left = (
            "its rollback failed too" if unrestored else "the change is still on it" if wrote else "nothing was written"
        )
        line = f"failed at {step} on {node} at {_at(failed.get('time'))}; {left}; {self.count}"
        back = ("put it back with", rollback_command(self.change_id, node, self.folder).strip("`"))
        nxt = back if wrote else ("find out why with", postmortem_command(self.folder))
        return f"failed at {step} on {node}", line, str(failed.get("error", "")), nxt

    def held(self) -> _Said:
        held = self.rollout.hold() or {}
        gate = held.get("gate")
        line = f"held at {gate} by {held.get('operator')} at {_at(held.get('time'))}; {self.count}"
        return f"held at {gate}", line, "", self._go_on("resume with")

    def pending(self) -> _Said:
        """No failure and no hold: a run holds the change now, one was interrupted, or a gate waits."""
        busy = next((n for n, s in self.outcome.nodes.items() if s == "in progress"), None)
        latest = self._of(busy)[-1] if busy else {}
        holder = _running(self.rollout.journal)
        if holder is not None:
            doing = f"{latest.get('step')} on {busy}" if busy else f"gate {self.outcome.next_gate}"
            line = f"running: {doing}, pid {holder.get('pid')} on {holder.get('host')} since {_at(holder.get('since'))}"
            again = command(
                "rollout", "status", change_id=self.change_id, state_dir=_elsewhere(self.change_id, self.folder)
            )
            return f"running ({doing})", f"{line}; {self.count}", "", ("see it again with", again)
        if busy is not None:
            line = f"interrupted at {latest.get('step')} on {busy} at {_at(latest.get('time'))}; {self.count}"
            return f"interrupted at {latest.get('step')} on {busy}", line, "", self._go_on("resume with")
        gate = self.outcome.next_gate
        line = f"waiting at {gate} for its approval; {self.count}"
        return f"waiting at {gate}", line, "", self._go_on(f"approve {gate} with")
