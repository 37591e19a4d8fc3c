"""What one rollout run is asked to do, checked once: ``RolloutRequest``.

``tmnb rollout`` builds it from its flags, 04-rollout from its parameters (``from_notebook``), and
``session.prepare`` takes nothing else. Building it checks every field that the request alone can
tell is wrong (names, choices, types, an executor that cannot write asked to execute), so a bad
parameter is refused before a cluster, a node or a file is touched. The fields that make a change
what it is (``CHANGE``) are stored beside its plan as ``request.json`` at its first execute run;
a later run of the same change id must ask for the same change (``check_same_change``), and a
resume or rollback may leave them out (``resumed``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, get_args

from tmnb.errors import InputError
from tmnb.report.places import change_folder
from tmnb.rollout.apply import APPLY_CHOICES, ApplyHow
from tmnb.rollout.arguments import check_arguments, notebook_options
from tmnb.rollout.executors import EXECUTORS, ExecutorKind
from tmnb.rollout.plan import DrainPolicy
from tmnb.rollout.run import Mode
from tmnb.rollout.steps import Options

#: The fields one change id stands for: stored at its first execute run, compared on every later one.
CHANGE = ("target", "nodes", "node_selector", "source", "executor", "apply", "drain")
#: The stored request of a change, in its state folder.
REQUEST = "request.json"


def _choice(value: object, choices: Sequence[str], where: str) -> None:
    if value not in choices:
        raise InputError(f"expected {', '.join(choices[:-1])} or {choices[-1]}, got {value!r}", where=where)


def _names(value: object, where: str) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not all(isinstance(v, str) for v in value):
        raise InputError(f"expected a list of node names, got {value!r}", where=where)
    return tuple(value)


@dataclass(frozen=True)
class RolloutRequest:
    """One run of one change. ``waves``: nodes per wave after the canary, or the waves by name;
    ``executor_options``: the executor's own keyword options; ``steps``: how each node's steps run;
    ``soak``: the canary's soak (``tmnb.rollout.soak``)."""

    change_id: str
    target: Mapping[str, Any]
    source: str = "live"
    context: str = ""
    kubeconfig: str = ""
    nodes: tuple[str, ...] = ()
    node_selector: str = ""
    canary: str = "recommended"
    waves: int | tuple[tuple[str, ...], ...] = 5
    override: tuple[str, ...] = ()
    mode: Mode = "plan"
    approve: tuple[str, ...] = ()
    executor: str = "dry-run"
    executor_options: Mapping[str, object] = field(default_factory=dict)
    node_files: str = ""
    state_dir: str = ""
    apply: ApplyHow = "auto"
    drain: DrainPolicy = "auto"
    pause: float = 0.0
    steps: Options = field(default_factory=Options)
    soak: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("source", "context", "kubeconfig", "node_selector", "canary", "node_files", "state_dir"):
            if not isinstance(getattr(self, name), str):
                raise InputError(f"expected a string, got {getattr(self, name)!r}", where=name)
        check_arguments(  # what 04-rollout's parameters meet before a kernel starts, in the same words
            target=self.target,
            change_id=self.change_id,
            mode=self.mode,
            executor=self.executor,
            waves=self.waves,
            state_dir=self.state_dir,
            node_selector=self.node_selector,
        )
        object.__setattr__(self, "nodes", _names(self.nodes, "nodes"))
        object.__setattr__(self, "override", _names(self.override, "override"))
        object.__setattr__(self, "approve", _names(self.approve, "approve"))
        waves = self.waves
        if isinstance(waves, bool) or not isinstance(waves, int):
            object.__setattr__(self, "waves", tuple(_names(w, "waves") for w in _waves(waves)))
        _choice(self.apply, APPLY_CHOICES, "apply")
        _choice(self.drain, get_args(DrainPolicy), "drain")
        if (
            isinstance(self.pause, bool)
            or not isinstance(self.pause, int | float)
            or not 0 <= self.pause < float("inf")
        ):
            raise InputError(f"expected a number of seconds, at least 0, got {self.pause!r}", where="pause")

    @property
    def kind(self) -> ExecutorKind:
        return EXECUTORS[self.executor]

    @property
    def folder(self) -> Path:
        """The change's state folder."""
        return change_folder(self.change_id, self.state_dir)

    def change(self) -> dict[str, Any]:
        """What this change is (``CHANGE``): the content of its ``request.json``."""
        return {
            "target": dict(self.target),
            "nodes": sorted(self.nodes),
            "node_selector": self.node_selector,
            "source": self.source,
            "executor": self.executor,
            "apply": self.apply,
            "drain": self.drain,
        }

    def store(self) -> None:
        """Write ``request.json`` (once: the first execute run of the change id)."""
        path = self.folder / REQUEST
        if not path.exists():
            path.write_text(json.dumps(self.change(), indent=2, sort_keys=True) + "\n")

    def resumed(self, stored: Mapping[str, Any]) -> RolloutRequest:
        """This request with the change's own fields taken from its stored request (a resume or a
        rollback need not restate them)."""
        given = {key: stored[key] for key in CHANGE}
        return replace(self, **{**given, "target": dict(given["target"]), "nodes": tuple(given["nodes"])})

    def check_same_change(self) -> None:
        """One change per change id: a run with other parameters would report the earlier change's
        outcome for nodes it never touched, so it is refused, naming both."""
        before = stored_request(self.folder)
        if before is None:
            return
        now = self.change()
        differ = [key for key, value in now.items() if before.get(key) != value]
        if differ:
            was = "; ".join(f"{key}={json.dumps(before.get(key))}" for key in differ)
            asked = "; ".join(f"{key}={json.dumps(now[key])}" for key in differ)
            raise InputError(
                f"change {self.change_id} was run with {was}, not {asked}: resume it with its own parameters, "
                "or start another change with a new change id",
                where="change_id",
            )


def _waves(value: object) -> Sequence[object]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise InputError(f"expected a wave size or a list of waves (lists of node names), got {value!r}", where="waves")
    return value


def stored_request(folder: Path) -> dict[str, Any] | None:
    """What the change id was first run with (None before its first execute run)."""
    path = folder / REQUEST
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        raise InputError("unreadable: the change's state folder is damaged", source=str(path)) from None
    if not isinstance(value, dict) or any(key not in value for key in CHANGE):
        raise InputError(f"not a change request (expected {', '.join(CHANGE)})", source=str(path))
    return value


#: 04-rollout's parameters that are request fields under the same name.
_NOTEBOOK_FIELDS = {f.name for f in fields(RolloutRequest)} - {"steps", "override", "node_files", "soak"}


def from_notebook(options: Mapping[str, object] | None = None, **params: Any) -> RolloutRequest:
    """The request of 04-rollout's parameters; ``options`` (``arguments.NOTEBOOK_OPTIONS``) checked by name and
    type, the step knobs folded into ``Options``. ``params`` are the notebook's other parameters as
    papermill injected them (Any): the request checks each one."""
    o = notebook_options(options)
    extra = sorted(set(params) - _NOTEBOOK_FIELDS)
    if extra:
        raise InputError(f"not a rollout parameter: {extra[0]!r}", where="parameters")
    steps = Options(
        drain_timeout=float(o["drain_timeout"]),
        ready_timeout=float(o["ready_timeout"]),
        auto_rollback=o["auto_rollback"],
        allow_emptydir=o["allow_emptydir"],
        test_pod_namespace=o["test_namespace"],
        test_pod_image=o["test_image"],
    )
    return RolloutRequest(
        steps=steps, override=tuple(o["override"]), node_files=o["node_files"], soak=o["soak"], **params
    )
