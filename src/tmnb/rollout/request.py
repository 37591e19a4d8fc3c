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
from tmnb.rollout.executors import EXECUTORS, ExecutorKind, words
from tmnb.rollout.plan import DrainPolicy, validate_change_id
from tmnb.rollout.run import Mode
from tmnb.rollout.steps import Options
from tmnb.settings.target import check_target_fields

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
        validate_change_id(self.change_id)
        if not isinstance(self.target, Mapping):
            raise InputError(f"expected a mapping of KubeletConfiguration fields, got {self.target!r}", where="target")
        check_target_fields(self.target, upgrades=False)  # a rollout writes configuration, never a kubelet version
        for name in ("source", "context", "kubeconfig", "node_selector", "canary", "node_files", "state_dir"):
            if not isinstance(getattr(self, name), str):
                raise InputError(f"expected a string, got {getattr(self, name)!r}", where=name)
        object.__setattr__(self, "nodes", _names(self.nodes, "nodes"))
        object.__setattr__(self, "override", _names(self.override, "override"))
        object.__setattr__(self, "approve", _names(self.approve, "approve"))
        waves = self.waves
        if isinstance(waves, bool) or not isinstance(waves, int):
            object.__setattr__(self, "waves", tuple(_names(w, "waves") for w in _waves(waves)))
        _choice(self.mode, get_args(Mode), "mode")
        _choice(self.executor, tuple(EXECUTORS), "executor")
        _choice(self.apply, APPLY_CHOICES, "apply")
        _choice(self.drain, get_args(DrainPolicy), "drain")
        if self.mode == "execute" and not self.kind.writes:
            raise InputError(
                f"mode='execute' writes through an executor: choose {words(lambda k: k.writes)}", where="executor"
            )
        if isinstance(self.pause, bool) or not isinstance(self.pause, int | float) or self.pause < 0:
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
        return replace(
            self,
            target=dict(stored["target"]),
            nodes=tuple(stored["nodes"]),
            node_selector=stored["node_selector"],
            source=stored["source"],
            executor=stored["executor"],
            apply=stored["apply"],
            drain=stored["drain"],
        )

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


#: What 04-rollout's ``options`` may set, with its defaults: how the change is carried out and what
#: it tolerates (the same knobs ``tmnb rollout`` takes as flags).
NOTEBOOK_OPTIONS: dict[str, object] = {
    "drain_timeout": 300.0,
    "ready_timeout": 180.0,
    "auto_rollback": True,
    "allow_emptydir": False,
    "override": [],
    "test_namespace": "default",
    "test_image": "busybox:1.37",
    "node_files": "",
    "soak": {},
}


def _option(name: str, value: object) -> Any:
    """``value`` if it has the type of the option's default (timeouts: a positive number). Any: that
    type depends on ``name``, and ``from_notebook`` hands each option to the field of that type."""
    default = NOTEBOOK_OPTIONS[name]
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    else:
        ok = isinstance(value, type(default))
    if not ok:
        kind = "a positive number of seconds" if isinstance(default, float) else type(default).__name__
        raise InputError(f"expected {kind}, got {value!r}", where=f"parameter options.{name}")
    return value


#: 04-rollout's parameters that are request fields under the same name.
_NOTEBOOK_FIELDS = {f.name for f in fields(RolloutRequest)} - {"steps", "override", "node_files", "soak"}


def from_notebook(options: Mapping[str, object] | None = None, **params: Any) -> RolloutRequest:
    """The request of 04-rollout's parameters; ``options`` (``NOTEBOOK_OPTIONS``) checked by name and
    type, the step knobs folded into ``Options``. ``params`` are the notebook's other parameters as
    papermill injected them (Any): the request checks each one."""
    given = dict(options or {})
    unknown = sorted(set(given) - set(NOTEBOOK_OPTIONS))
    if unknown:
        known = ", ".join(NOTEBOOK_OPTIONS)
        raise InputError(f"unknown option {unknown[0]!r}: expected one of {known}", where="parameter options")
    o = {name: _option(name, given.get(name, default)) for name, default in NOTEBOOK_OPTIONS.items()}
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
