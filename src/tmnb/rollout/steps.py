"""The steps of one node's change and its rollback, each idempotent and journaled.

A step first looks at the journal (and, where it can, the node) and skips what is already done,
so a rollout killed at any point resumes where it stopped. Every step writes an ``intent`` record
before it acts and a ``done``/``failed`` record after, with checksums of what it wrote. The code
is the same whatever the executor: all node access goes through ``NodeOps``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tmnb.errors import InputError, RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.parse.klog import parse_kubelet_log
from tmnb.redact import redact_log_line
from tmnb.replay import show_value
from tmnb.rollout.apply import APPLY_MODES
from tmnb.rollout.cluster import (
    ClusterOps,
    is_daemonset_pod,
    is_mirror_pod,
    restarts,
    uses_emptydir,
)
from tmnb.rollout.journal import LEFT_CORDONED
from tmnb.rollout.plan import CPU_STATE, NodeChange, RolloutPlan, overridden_by
from tmnb.rollout.verify import (
    VerifyPodPrediction,
    actual_placement,
    predict_verify_pod,
    repinned,
    restart_drift,
    verify_pod_manifest,
)
from tmnb.snapshot import Snapshot
from tmnb.sources.node_root import FLAG_STEPS

if TYPE_CHECKING:
    from tmnb.rollout.journal import Journal
    from tmnb.rollout.ops import KubeletAction, NodeOps

#: How a node's run ends (``NodeRun.run``).
NodeResult = Literal["done", "failed", "rolled back"]

CONFIG_MODE = 0o644
STATE_MODE = 0o644
#: the suffix of the CPU checkpoint kept before a restart over it, to verify the running pods against
BEFORE_RESTART = ".before-restart"


@dataclass
class Options:
    drain_timeout: float = 300.0
    evict_retry: float = 5.0
    ready_timeout: float = 180.0
    allow_emptydir: bool = False
    auto_rollback: bool = True
    test_pod: bool = True
    test_pod_namespace: str = "default"
    test_pod_image: str = "busybox:1.37"
    test_pod_timeout: float = 60.0
    poll: float = 0.25


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _name(pod: JsonDict) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def sha256(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


class NodeRun:
    """One node of the plan: ``run()`` carries the change out, ``rollback()`` puts back what was there."""

    def __init__(
        self,
        change: NodeChange,
        plan: RolloutPlan,
        ops: NodeOps,
        cluster: ClusterOps,
        journal: Journal,
        run_dir: Path,
        options: Options,
        collect: Callable[[str], Snapshot],
    ) -> None:
        self.change = change
        self.plan = plan
        self.ops = ops
        self.cluster = cluster
        self.journal = journal
        self.run_dir = Path(run_dir)
        self.options = options
        self.collect = collect
        self.node = change.node

    # ------------------------------------------------------------------ journal helpers
    def done(self, step: str) -> JsonDict | None:
        """The ``done``/``skipped`` record of ``step`` for this node, if any."""
        found = None
        for record in self.journal.records():
            if (
                record.get("node") == self.node
                and record.get("step") == step
                and record.get("event")
                in (
                    "done",
                    "skipped",
                )
            ):
                found = record
        return found

    def _step(self, step: str, intent: str, action: Callable[[], JsonDict]) -> JsonDict:
        previous = self.done(step)
        if previous is not None:
            return previous
        self.journal.record(self.node, step, "intent", intent=intent)
        try:
            result = action()
        except (RolloutError, InputError) as exc:
            self.journal.record(self.node, step, "failed", error=str(exc))
            raise RolloutError(str(exc).removeprefix(f"node {self.node}: "), node=self.node, step=step) from exc
        return self.journal.record(self.node, step, result.pop("event", "done"), **result)

    def _skip(self, step: str, why: str) -> None:
        if self.done(step) is None:
            self.journal.record(self.node, step, "skipped", result=why)

    # ------------------------------------------------------------------ the change
    def run(self) -> NodeResult:
        """'done', or 'rolled back' / 'failed' (with the failure journaled); never moves on after a failure."""
        started = self._step("preflight", "check the node before touching it", self.preflight)
        since = str(started.get("time", now()))
        try:
            self._step("cordon", "mark the node unschedulable", self.cordon)
            if self.change.drain:
                self._step("drain", f"evict the node's pods ({self.change.drain_why})", self.drain)
            else:
                self._skip("drain", self.change.drain_why)
            self._step("backup", "copy every file that will change, with sha256", self.backup)
        except RolloutError:
            self.release()
            return "failed"
        try:
            if self.change.state_files:
                self._step("stop", "stop the kubelet before its state files move", lambda: self.kubelet("stop"))
                self._step("state-files", "move the state files aside", self.move_state)
            else:
                self._skip("stop", "no state file changes")
                self._skip("state-files", "no state file changes")
            self._step("apply", "write the change", self.apply)
            action: KubeletAction = "start" if self.change.state_files else "restart"
            self._step("start", f"{action} the kubelet", lambda: self.kubelet(action))
            self._step("wait-ready", "wait for the node to report Ready", self.wait_ready)
            self._step("verify", "compare the node with the prediction", lambda: self.verify(since))
        except RolloutError as exc:
            if not self.options.auto_rollback:
                self.journal.record(self.node, "rollback", "info", result=f"automatic rollback is off: {exc}")
                return "failed"
            self.rollback(reason=str(exc))
            return "rolled back"
        self._step("uncordon", "make the node schedulable again", self.uncordon)
        self._step("after-snapshot", "collect the node after the change", self.after_snapshot)
        return "done"

    def preflight(self) -> JsonDict:
        if not self.cluster.ready(self.node):
            raise RolloutError("the node is not Ready: fix it before changing it")
        configz = self.cluster.configz(self.node)
        drifted = [
            f"{name}: the plan saw {was}, the kubelet runs {show_value(configz.get(name))}"
            for name, (was, _) in self.change.changes.items()
            if show_value(configz.get(name)) != was
        ]
        for f in self.change.files:
            if f.read and sha256(self.ops.read(f.path)) != f.before_sha256:
                drifted.append(f"{f.path} changed since the plan was made")
        if drifted:
            raise RolloutError("settings drifted since the plan: " + "; ".join(drifted) + " (make a new plan)")
        fresh = self.collect(self.node)
        from tmnb.analysis.whatif import replay_node

        node = fresh.node(self.node)
        how = self.change.files[0].how if self.change.files else "edit"
        deciders = overridden_by(node, self.plan.target, how)
        deciders += [  # flags tmnb could not read, or that the restart would add, may decide it too
            f"{i.source}: {i.message}" for i in node.issues if i.source in FLAG_STEPS and i.severity != "info"
        ]
        if deciders:  # read from the node just now, before the cordon: nothing has been written
            raise RolloutError("something else decides the target on the node: " + "; ".join(deciders))
        replay = replay_node(node, fresh.pods_on(self.node), self.plan.target, mode="drain")
        rejected = [f"{r.namespace}/{r.name}: {r.reason}" for r in replay.results if not r.admitted]
        if replay.refused:
            raise RolloutError(f"the kubelet would refuse the target now: {replay.refused}")
        if rejected:
            raise RolloutError(f"the what-if now rejects {len(rejected)} pod(s): {', '.join(rejected[:5])}")
        pods = self.cluster.pods_on(self.node)
        budgets = self.cluster.blocking_budgets(self._evictable(), self.node) if self.change.drain else []
        return {
            "result": "ready, no drift, the what-if admits every pod"
            + (
                f"; budgets that allow no eviction now (the drain waits for them): {', '.join(budgets)}"
                if budgets
                else ""
            ),
            "budgets_blocking": budgets,
            "was_unschedulable": self.cluster.unschedulable(self.node),
            "restarts": {_name(p): restarts(p) for p in pods},
        }

    def cordon(self) -> JsonDict:
        if self.cluster.unschedulable(self.node):
            return {"event": "skipped", "result": "already unschedulable"}
        self.cluster.set_unschedulable(self.node, True)
        return {"result": "cordoned"}

    def _evictable(self) -> list[JsonDict]:
        pods = [p for p in self.cluster.pods_on(self.node) if not is_daemonset_pod(p) and not is_mirror_pod(p)]
        local = [p for p in pods if uses_emptydir(p)]
        if local and not self.options.allow_emptydir:
            names = ", ".join(f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in local)
            raise RolloutError(f"pods with local storage (emptyDir) need allow_emptydir=True: {names}")
        return pods

    def drain(self) -> JsonDict:
        deadline = time.monotonic() + self.options.drain_timeout
        evicted: list[str] = []
        while True:
            pending = self._evictable()
            if not pending:
                return {"result": f"drained: {len(evicted)} pod(s) evicted", "evicted": evicted}
            blocked = []
            for pod in pending:
                name = f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"
                status = self.cluster.evict(pod, self.node)
                if status in (201, 404):
                    evicted.append(name)
                else:
                    blocked.append(f"{name} ({'disruption budget' if status == 429 else 'API error'})")
            if not blocked:
                continue
            if time.monotonic() + self.options.evict_retry > deadline:
                raise RolloutError(
                    f"global timeout reached after {self.options.drain_timeout:g}s: "
                    f"could not evict {', '.join(blocked)}"
                )
            time.sleep(self.options.evict_retry)

    def _backup_path(self, path: str) -> Path:
        return self.run_dir / "backup" / self.node / path.lstrip("/")

    def backup(self) -> JsonDict:
        sums: dict[str, str | None] = {}
        for path in [*(f.path for f in self.change.files), *self.change.state_files]:
            data = self.ops.read(path)
            target = self._backup_path(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            absent = target.with_name(target.name + ".absent")
            if data is None:
                absent.write_text("the file did not exist before the change\n")
                target.unlink(missing_ok=True)
            else:
                target.write_bytes(data)
                absent.unlink(missing_ok=True)
            sums[path] = sha256(data)
        kept: JsonDict = {}
        if not self.change.state_files:  # the kubelet restarts over its checkpoint: keep it to verify against
            held = self.ops.read(CPU_STATE)
            if held is not None:
                target = self._backup_path(CPU_STATE + BEFORE_RESTART)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(held)
                kept = {"before_restart": {CPU_STATE: sha256(held)}}
        result = f"{len(sums)} file(s) backed up in {self.run_dir / 'backup' / self.node}"
        return {"result": result, "checksums": sums, **kept}

    def _backed_up(self, path: str) -> bytes | None:
        target = self._backup_path(path)
        return target.read_bytes() if target.exists() else None

    def kubelet(self, action: KubeletAction) -> JsonDict:
        self.ops.kubelet(action)
        return {"result": f"kubelet {action} issued", "action": action}

    def _aside(self, path: str) -> str:
        return f"{path}.tmnb-{self.plan.change_id}"

    def move_state(self) -> JsonDict:
        moved: dict[str, str | None] = {}
        for path in self.change.state_files:
            if self.ops.checksum(path) is None:
                moved[path] = "absent (already moved or never written)"
                continue
            moved[path] = self.ops.move_aside(path, f".tmnb-{self.plan.change_id}")
        return {"result": "state files moved aside", "moved": moved}

    def _new_content(self, index: int) -> bytes:
        """The file's new bytes, from the bytes backed up before the change (what was read on the node)."""
        f = self.change.files[index]
        before = self._backed_up(f.path)
        text = before.decode("utf-8") if before is not None else None
        return APPLY_MODES[f.how].content(text, f.fields, f"{self.node}:{f.path}").encode()

    def apply(self) -> JsonDict:
        written = {}
        for i, f in enumerate(self.change.files):
            data = self._new_content(i)
            before = self.ops.checksum(f.path)
            if before == sha256(data):
                written[f.path] = {"before": before, "after": before, "result": "already applied"}
                continue
            self.ops.write(f.path, data, CONFIG_MODE)
            after = self.ops.checksum(f.path)
            if after != sha256(data):
                raise RolloutError(f"{f.path}: checksum after writing is {after}, expected {sha256(data)}")
            written[f.path] = {"before": before, "after": after, "how": f.how}
        return {"result": f"wrote {', '.join(written)}", "files": written}

    def wait_ready(self) -> JsonDict:
        started = time.monotonic()
        if self.cluster.wait_ready(self.node, self.options.ready_timeout, self.options.poll):
            return {"result": f"Ready after {time.monotonic() - started:.1f}s"}
        tail = self._journal_tail()
        raise RolloutError(
            f"the node did not report Ready within {self.options.ready_timeout:g}s"
            + (f"; kubelet: {tail}" if tail else "")
        )

    def _journal_tail(self) -> str:
        try:
            lines = self.ops.journal_since(datetime.now(UTC).replace(microsecond=0)).strip().splitlines()
        except RolloutError:
            return ""
        errors = [lines[r.line - 1] for r in parse_kubelet_log(lines).records if r.level in ("E", "F")]
        return redact_log_line((errors or lines or [""])[-1])[-300:]  # as a snapshot's journal excerpt

    def verify(self, since: str) -> JsonDict:
        configz = self.cluster.configz(self.node)
        wrong = [
            f"{name}: expected {show_value(value)}, the kubelet runs {show_value(configz.get(name))}"
            for name, value in self.plan.target.items()
            if show_value(configz.get(name)) != show_value(value)
        ]
        if wrong:
            raise RolloutError("configz does not show the target: " + "; ".join(wrong))
        result: JsonDict = {"configz": "shows the target"}
        if self.options.test_pod:
            result["test_pod"] = self._test_pod()
        drift = self._restart_drift()
        if drift:
            raise RolloutError(f"running pods changed at the kubelet restart: {'; '.join(drift[:5])}")
        failures = [f for f in self.cluster.admission_failures(self.node, since) if "tmnb-verify-" not in f]
        if failures:
            raise RolloutError(f"new admission failures on the node: {', '.join(failures[:5])}")
        before = (self.done("preflight") or {}).get("restarts") or {}
        now_counts = {
            f"{p['metadata']['namespace']}/{p['metadata']['name']}": restarts(p)
            for p in self.cluster.pods_on(self.node)
        }
        restarted = [name for name, count in now_counts.items() if count > before.get(name, count)]
        if restarted:
            raise RolloutError(f"running pods restarted: {', '.join(restarted[:5])}")
        result["result"] = "configz shows the target; the test pod did what tmnb.kubelet predicted; no new rejections"
        return result

    def _restart_drift(self) -> list[str]:
        """Every pod that ran through the restart against its entry in the checkpoint kept before it
        (none kept: the state files moved, so the kubelet started afresh)."""
        before = self._backed_up(CPU_STATE + BEFORE_RESTART)
        after = self.ops.read(CPU_STATE)
        if self.change.state_files or before is None or after is None:
            return []
        try:
            return restart_drift(before, after, self.cluster.pods_on(self.node))
        except InputError as err:
            raise RolloutError(f"{self.node}: {err}") from None

    def _test_pod(self) -> JsonDict:
        fresh = self.collect(self.node)
        prediction: VerifyPodPrediction = predict_verify_pod(fresh, self.node)
        body = verify_pod_manifest(prediction, self.node, self.plan.change_id, self.options.test_pod_image)
        namespace = self.options.test_pod_namespace
        created = self.cluster.create_pod(namespace, body, self.node)
        name = created["metadata"]["name"]
        try:
            deadline = time.monotonic() + self.options.test_pod_timeout
            pod = self.cluster.pod(namespace, name, self.node) or created  # look first: a kubelet may have decided
            while (pod.get("status") or {}).get("phase") not in ("Running", "Failed"):
                if time.monotonic() > deadline:
                    raise RolloutError(f"test pod {namespace}/{name} was neither admitted nor rejected in time")
                time.sleep(self.options.poll)
                pod = self.cluster.pod(namespace, name, self.node) or pod
            actual = actual_placement(pod, self.ops, fresh.node(self.node))
        finally:
            self.cluster.delete_pod(namespace, name, self.node)
        expected = prediction.as_dict()
        if actual != expected:
            raise RolloutError(
                f"the kubelet disagrees with the prediction for test pod {namespace}/{name}: "
                f"predicted {_placement(expected)}; got {_placement(actual)}"
            )
        return {"pod": f"{namespace}/{name}", **actual}

    def cordoned_here(self) -> bool:
        """This change cordoned the node: its cordon step did it (a node someone else cordoned, before the
        preflight or between it and the cordon, skips that step, and stays cordoned)."""
        cordon = self.done("cordon")
        return cordon is not None and cordon.get("event") == "done"

    def uncordon(self) -> JsonDict:
        if not self.cordoned_here():
            return {"event": "skipped", "result": LEFT_CORDONED if self.done("cordon") else "never cordoned"}
        self.cluster.set_unschedulable(self.node, False)
        return {"result": "uncordoned"}

    def release(self, why: str = "nothing was applied") -> None:
        """Undo the cordon: after a failure before anything was written, or once a rollback restored
        what was (``why`` says which, as the journal's record of the uncordon); a node this change did not
        cordon is left cordoned, and the journal says so."""
        if self.done("cordon") is not None and not self.cordoned_here():
            self._skip("uncordon", LEFT_CORDONED)
        if self.cordoned_here():
            try:
                self.cluster.set_unschedulable(self.node, False)
                self.journal.record(self.node, "uncordon", "done", result=f"uncordoned: {why}")
            except RolloutError as exc:
                self.journal.record(self.node, "uncordon", "failed", error=str(exc))

    def after_snapshot(self) -> JsonDict:
        from tmnb.snapshot import save

        path = self.run_dir / "snapshots" / f"after-{self.node}.json.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        save(self.collect(self.node), path)
        return {"result": f"saved {path}", "path": str(path)}

    # ------------------------------------------------------------------ rollback
    def rollback(self, reason: str) -> None:
        """Put back the backed-up files byte for byte and the state files (the CPU checkpoint too when the
        restart re-pinned running pods), restart, verify, uncordon."""
        self.journal.record(self.node, "rollback", "intent", intent="restore what was there", reason=reason)
        try:
            backup = self.done("backup") or {}
            sums: dict[str, str | None] = backup.get("checksums") or {}
            moved = self.done("state-files")
            states = moved is not None and moved.get("event") == "done"
            repinned_at_restart = self._repinned_at_restart()
            self.ops.kubelet("stop")
            restored = {}
            for f in self.change.files:
                restored[f.path] = self._restore(f.path, sums.get(f.path), CONFIG_MODE)
            for path in self.change.state_files if states else ():
                restored[path] = self._restore_state(path, sums.get(path))
            if repinned_at_restart:
                kept = (backup.get("before_restart") or {}).get(CPU_STATE)
                restored[CPU_STATE] = self._restore(CPU_STATE, kept, STATE_MODE, CPU_STATE + BEFORE_RESTART)
                restored[CPU_STATE]["why"] = "running pods were re-pinned at the restart: the checkpoint from before it"
            self.ops.kubelet("start")
            if not self.cluster.wait_ready(self.node, self.options.ready_timeout, self.options.poll):
                raise RolloutError(
                    f"the node did not report Ready within {self.options.ready_timeout:g}s after rollback"
                )
            configz = self.cluster.configz(self.node)
            wrong = [
                f"{name}: expected {was}, runs {show_value(configz.get(name))}"
                for name, (was, _) in self.change.changes.items()
                if show_value(configz.get(name)) != was
            ]
            if wrong:
                raise RolloutError("configz after rollback does not show the old settings: " + "; ".join(wrong))
            self.release(f"the rollback put back {', '.join(restored) or 'nothing'}; the old settings are in configz")
        except RolloutError as exc:
            self.journal.record(self.node, "rollback", "failed", error=str(exc))
            raise
        self.journal.record(
            self.node, "rollback", "done", result="restored, Ready, old settings in configz", files=restored
        )

    def _repinned_at_restart(self) -> bool:
        """Running pods hold other CPUs than in the checkpoint kept before the kubelet's restart (and
        none holds CPUs it did not hold then): the rollback puts that checkpoint back, with the kubelet
        stopped. Read from the node and the journal before anything is touched."""
        kept = ((self.done("backup") or {}).get("before_restart") or {}).get(CPU_STATE)
        before = self._backed_up(CPU_STATE + BEFORE_RESTART)
        after = self.ops.read(CPU_STATE)
        if self.change.state_files or kept is None or before is None or after is None:
            return False
        try:
            return repinned(before, after, self.cluster.pods_on(self.node))
        except InputError:  # a checkpoint the verification could not read either: left as it is
            return False

    def _restore(self, path: str, checksum: str | None, mode: int, backup: str | None = None) -> JsonDict:
        """``path`` put back from its backup (``backup``: the backup kept under another name)."""
        data = self._backed_up(backup or path)
        if sha256(data) != checksum:
            raise RolloutError(f"the backup of {path} does not match its recorded checksum: not restoring from it")
        if data is None:
            self.ops.remove(path)
        else:
            self.ops.write(path, data, mode)
        after = self.ops.checksum(path)
        if after != checksum:
            raise RolloutError(f"{path}: checksum after restore is {after}, expected {checksum}")
        return {"restored": checksum or "removed (did not exist before)"}

    def _restore_state(self, path: str, checksum: str | None) -> JsonDict:
        """The moved-aside file is the kubelet's last word before the change: it goes back as it is."""
        aside = self._aside(path)
        data = self.ops.read(aside)
        if data is None:
            return self._restore(path, checksum, STATE_MODE)
        self.ops.write(path, data, STATE_MODE)
        if self.ops.checksum(path) != sha256(data):
            raise RolloutError(f"{path}: checksum after restore differs from {aside}")
        self.ops.remove(aside)
        return {"restored": sha256(data), "from": aside}


def _placement(placement: JsonDict) -> str:
    """A test pod's placement in words (a report shows it; a dict's repr is no sentence)."""
    if not placement.get("admitted"):
        return f"rejected ({placement.get('reason') or 'no reason given'})"
    numa = ", ".join(str(n) for n in placement.get("numa") or []) or "none"
    return f"admitted, exclusive CPUs {placement.get('cpuset') or 'none'}, NUMA node(s) {numa}"
