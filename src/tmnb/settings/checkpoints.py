"""What the kubelet's ``restoreState`` meets in each state file, recorded in a snapshot.

Whether a restart over the files works (the policy comparison, the static policies' ``validateState``)
is the kubelet model's start (``tmnb.kubelet.checkpoints`` and ``NodeSimulator``), one path for the
what-if, the sandbox and the rollout; here the collector records how each file loads, per reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tmnb.errors import InputError
from tmnb.kubelet.checkpoints.cpu_state import cpu_list_error
from tmnb.kubelet.checkpoints.files import load_errors
from tmnb.parse.documents import load_json
from tmnb.parse.files import STATE_LIMIT, go_read_error, read_capped
from tmnb.parse.state_files import (
    BadCpuList,
    CheckpointRefused,
    parse_cpu_manager_state,
    parse_memory_manager_state,
)
from tmnb.snapshot.model import StateFile

# ---------------------------------------------------------------------------------------------
# What restoreState meets in a state file, for the snapshot


def _refused_by(manager: Literal["cpu", "memory"], data: bytes, policy: str | None) -> dict[str, str] | None:
    """``load_errors`` of the file, or None where tmnb cannot load it as every reader does (a CPU id
    beyond the model's)."""
    try:
        return load_errors(manager, data, policy or "")
    except InputError:
        return None


def read_state_file(path: Path, *, manager: Literal["cpu", "memory"], shown: str) -> StateFile | None:
    """The checkpoint at ``path`` (``shown`` is its path on the node) as ``NewCheckpointState``
    meets it when the kubelet starts; None when there is none (the kubelet starts from a fresh
    state). The kubelet's words where it refuses the file:

    * a file it cannot read: ``os.ReadFile``'s error; an empty one: ``unexpected end of JSON input``;
      JSON that does not decode: the decoder fails (tmnb's description stands in for Go's text);
    * a v4 CPU / v3 memory checkpoint whose ``data`` does not match ``dataChecksum``:
      ``could not load v4 checkpoint: checkpoint is corrupted`` (it does not fall back to the older
      fields); the legacy ``checksum`` covers a Go struct dump tmnb does not recompute;
    * after the policy comparison, a CPU list ``cpuset.Parse`` refuses (``restoreState``):
      ``could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax`` or
      ``could not parse cpuset "asd" for container "c" in pod "p": ...`` (Go walks the entries in map
      order; with several bad ones tmnb names the first in the file).

    A file tmnb cannot read as the kubelet does (a v1 CPU checkpoint, migrated through the running
    containers' IDs; a value tmnb's reader refuses) is ``unknown``: no prediction rests on it."""
    unreadable = go_read_error(path, shown)
    if unreadable is not None and unreadable.endswith("no such file or directory"):
        return None  # store.Read: ErrKeyNotFound, a fresh state is written
    if unreadable is not None:
        return StateFile(manager=manager, path=shown, error=unreadable)
    what = f"a {manager}_manager_state checkpoint"
    try:
        data = read_capped(path, limit=STATE_LIMIT, what=what, source=shown)
    except InputError as err:
        return StateFile(manager=manager, path=shown, unknown=err.message)
    if not data.strip(b" \t\r\n"):
        return StateFile(manager=manager, path=shown, error="unexpected end of JSON input")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return StateFile(manager=manager, path=shown, unknown="not UTF-8 text")
    try:
        load_json(data, source=shown, expected=what)
    except InputError as err:
        return StateFile(manager=manager, path=shown, error=err.message)
    try:
        if manager == "cpu":
            cpu = parse_cpu_manager_state(data, source=shown)
            if cpu.version == "v1":
                return StateFile(
                    manager=manager,
                    path=shown,
                    policy=cpu.policy_name,
                    unknown="a v1 checkpoint, keyed by container ID: the kubelet migrates it through the containers "
                    "it finds running",
                )
            return StateFile(
                manager=manager,
                path=shown,
                policy=cpu.policy_name,
                refused_by=_refused_by(manager, data, cpu.policy_name),
            )
        memory = parse_memory_manager_state(data, source=shown)
        return StateFile(
            manager=manager,
            path=shown,
            policy=memory.policy_name,
            refused_by=_refused_by(manager, data, memory.policy_name),
        )
    except CheckpointRefused as err:  # the newest format's payload: older kubelets read the fields beside it
        return StateFile(manager=manager, path=shown, error=err.kubelet, refused_by=_refused_by(manager, data, None))
    except BadCpuList as err:
        return StateFile(
            manager=manager,
            path=shown,
            policy=err.policy,
            error=cpu_list_error(err),
            error_after_policy=True,
            refused_by=_refused_by(manager, data, err.policy),
        )
    except InputError as err:
        return StateFile(manager=manager, path=shown, unknown=err.message)
