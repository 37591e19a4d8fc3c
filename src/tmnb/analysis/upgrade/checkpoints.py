"""The resource managers' checkpoints across the change of minor: whether the planned minor reads the
files today's kubelet wrote, and whether today's minor reads the ones it writes (a rollback)."""

from __future__ import annotations

from collections.abc import Iterator

from tmnb.analysis.minors import PLRM
from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.analysis.upgrade.gates import AREA, feature_gates
from tmnb.kubelet.checkpoints.restore import Manager as StateManager
from tmnb.kubelet.checkpoints.restore import could_not_restore
from tmnb.kubelet.profiles import CPU_STATE, MEMORY_STATE

_MANAGERS: dict[str, StateManager] = {CPU_STATE: "cpu", MEMORY_STATE: "memory"}


def _checkpoints(c: LintContext, *, rollback: bool) -> Iterator[tuple[str, Hit]]:
    """The checkpoint each resource manager's kubelet writes and how the other minor restores it, as
    ("refused" | "inline", hit); every kubelet writes both files, whatever its policies."""
    if not c.plan.upgrades:
        return
    writer, reader = (c.profile, c.today) if rollback else (c.today, c.profile)
    gates = feature_gates(c.plan.planned if rollback else c.plan.current) or {}
    for name, manager in _MANAGERS.items():
        written = writer.state_written(name, gates)
        read = reader.reads_state(name, written)
        if read == written:
            continue
        path = f"/var/lib/kubelet/{name}"
        gated = f" ({PLRM} is on)" if written != writer.state_written(name, {}) else ""
        wrote = f"Kubelet {writer.name} writes {name} as {written.upper()}{gated}"
        reads = ", ".join(sorted(f.upper() for f in reader.state_read(name)))
        expected = f"a format kubelet {reader.name} reads ({reads})"
        fill = {"path": path, "minor": reader.name}
        if read is None:
            text = could_not_restore(manager, path, "checkpoint is corrupted")
            moment = "on a rollback" if rollback else "at start"
            yield (
                "refused",
                Hit(
                    name,
                    expected,
                    written.upper(),
                    f'{wrote}; kubelet {reader.name} reads {reads} only and refuses the file {moment}: "{text}".',
                    fill=fill,
                ),
            )
            continue
        lost = (
            f", without the pod-level assignments ({PLRM} is on) that only {written.upper()}'s data holds"
            if writer.gate_on(PLRM, gates)
            else f"; with {PLRM} off there are no pod-level assignments to lose"
        )
        moment = "on a rollback, " if rollback else ""
        yield (
            "inline",
            Hit(
                name,
                expected,
                written.upper(),
                f"{wrote}, which keeps the {read.upper()} fields inline for older kubelets: {moment}kubelet "
                f"{reader.name} restores those{lost}.",
                fill=fill,
            ),
        )


def _checkpoint_refused(c: LintContext) -> Iterator[Hit]:
    return (hit for kind, hit in _checkpoints(c, rollback=False) if kind == "refused")


def _rollback_checkpoint_refused(c: LintContext) -> Iterator[Hit]:
    return (hit for kind, hit in _checkpoints(c, rollback=True) if kind == "refused")


def _checkpoint_inline(c: LintContext) -> Iterator[Hit]:
    for rollback in (False, True):
        yield from (hit for kind, hit in _checkpoints(c, rollback=rollback) if kind == "inline")


UPGRADE_CHECKPOINT_REFUSED = Rule[LintContext](
    "upgrade.checkpoint-refused",
    AREA,
    "warning",
    "Manual action: drain the node, stop the kubelet, remove {path}, install kubelet {minor}, start it, verify, "
    "uncordon.",
    _checkpoint_refused,
    manual=True,
    summary="the planned minor cannot read the checkpoint today's kubelet wrote: it does not start over it",
)
UPGRADE_ROLLBACK_CHECKPOINT_REFUSED = Rule[LintContext](
    "upgrade.rollback-checkpoint-refused",
    AREA,
    "warning",
    "Plan the rollback with it: drain the node, stop the kubelet, remove {path}, then start kubelet {minor}.",
    _rollback_checkpoint_refused,
    summary="today's minor cannot read the checkpoint the planned one writes: a rollback needs the file removed",
)
UPGRADE_CHECKPOINT_INLINE = Rule[LintContext](
    "upgrade.checkpoint-inline",
    AREA,
    "info",
    "Nothing to do: kubelet {minor} restores the fields kept inline; pod-level assignments do not survive.",
    _checkpoint_inline,
    summary="a checkpoint one minor writes, the other restores from the older fields it keeps inline",
)
