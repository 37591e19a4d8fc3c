"""Each notebook's parameters checked before it executes, by the checks its ``tmnb`` subcommand runs
(04-rollout's are ``tmnb rollout``'s, 06-postmortem's a bundle's are ``tmnb evidence verify``'s): a
wrong parameter is one line and exit 2, not a notebook that fails a minute later.

``CHECKS`` is the registry, keyed by the notebook's name; every notebook has an entry, of two parts
run on the parameters a run will inject (the defaults, with what was given over them):
``parameters``, what the values alone tell, run by the runner while the kernel starts
(``check_parameters``), and ``snapshot``, what needs the snapshot's content (the nodes named or
selected), run in the run's kernel on the snapshot it reads once and keeps for the notebook's first
cell (``in_kernel``; the runner runs it itself when the kernel cannot: ``check_snapshot``). What
only the cluster can tell (a live source's nodes, a flag that overrides the target) is left to the
notebook.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.collector import settled
from tmnb.errors import InputError, Tampered

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot

#: The parameters of one run, by name (the notebook's defaults under what was given).
Params = Mapping[str, Any]
Check = Callable[[Params], None]
SnapshotCheck = Callable[[Params, "Snapshot"], None]


def _named(name: str | None, check: Callable[[], object]) -> None:
    """Run ``check``; its refusal names the notebook parameter, as ``-p`` spells it (``name`` None:
    the check names it itself, as ``rollout.arguments`` does)."""
    try:
        check()
    except Tampered:
        raise
    except InputError as exc:
        where = exc.where or ""
        if name is None or where == name or where.startswith((f"{name}.", f"{name}[")):
            where = f"parameter {where}"
        else:
            where = f"parameter {name}" + (f": {where}" if where else "")
        raise type(exc)(exc.message, source=exc.source, where=where, line=exc.line) from None


def _source(params: Params, name: str) -> None:
    """A snapshot source: a known word or a file that looks like a snapshot; live needs a kubeconfig."""
    from tmnb.sources.kubeconfig import kubeconfig_missing
    from tmnb.sources.resolve import LIVE, check_source

    value = params.get(name)
    if not isinstance(value, str):
        return
    try:
        check_source(value)
    except InputError as exc:  # check_source says "source": here the parameter has its own name
        raise type(exc)(exc.message, source=exc.source, where=f"parameter {name}") from None
    missing = kubeconfig_missing() if value == LIVE else None
    if missing:
        raise InputError(missing, where=f"parameter {name}")


def _selector(params: Params) -> None:
    from tmnb.snapshot.select import parse_selector

    _named("node_selector", lambda: parse_selector(params.get("node_selector") or ""))


def _file(params: Params, name: str, what: str, *, unless: tuple[str, ...] = ("",)) -> None:
    value = params.get(name)
    if isinstance(value, str) and value not in unless and not os.path.isfile(value):
        raise InputError(f"no such file; expected {what}", source=value, where=f"parameter {name}")


def _selected(params: Params, snapshot: Snapshot, *, names: bool) -> None:
    """The nodes named (``nodes``, a ``canary`` other than ``recommended``) or selected must be in
    the snapshot."""
    from tmnb.snapshot.select import select_nodes

    canary = params.get("canary")
    if names and isinstance(canary, str) and canary not in ("", "recommended"):
        try:
            snapshot.node(canary)
        except InputError as exc:
            raise InputError(exc.message, where="parameter canary") from None
    listed = [n for n in params.get("nodes") or [] if isinstance(n, str)] if names else []
    if listed:
        _named("nodes", lambda: [snapshot.node(n) for n in listed])
        return
    if snapshot.nodes and not select_nodes(snapshot, params.get("node_selector") or "").nodes:
        raise InputError(
            f"matches no node of {params.get('source')} (nodes: {', '.join(n.name for n in snapshot.nodes[:5])}"
            f"{', …' if len(snapshot.nodes) > 5 else ''})",
            where="parameter node_selector",
        )


def _named_nodes(params: Params, snapshot: Snapshot) -> None:
    _selected(params, snapshot, names=True)


def _selection(params: Params, snapshot: Snapshot) -> None:
    _selected(params, snapshot, names=False)


def _target(params: Params) -> None:
    from tmnb.settings.target import check_target_fields

    target = params.get("target")
    if not isinstance(target, Mapping):
        raise InputError(f"expected a mapping of KubeletConfiguration fields, got {target!r}", where="parameter target")
    _named("target", lambda: check_target_fields(target))


def inventory(params: Params) -> None:
    """``tmnb snapshot``'s checks: the source, the options that apply to it, node files, the selector."""
    from tmnb.sources.node_files import node_files_kind
    from tmnb.sources.resolve import check_options

    _source(params, "source")
    given = {k: params.get(k) or None for k in ("context", "node_files")}
    _named(None, lambda: check_options(str(params.get("source")), given))
    if params.get("node_files"):
        _named("node_files", lambda: node_files_kind(str(params["node_files"])))
    _selector(params)


def occupancy(params: Params) -> None:
    """The source, the selection, and the nodes named for the detail figures."""
    _source(params, "source")
    _selector(params)


def readiness(params: Params) -> None:
    """``tmnb whatif``'s checks (the source, the target's fields and values), and the selection."""
    _source(params, "source")
    _target(params)
    _selector(params)


def rollout(params: Params) -> None:
    """``tmnb rollout``'s checks (``rollout.arguments``), the options, a kubeconfig where the change
    needs the cluster, and the nodes when the plan is made from a snapshot file."""
    from tmnb.rollout.arguments import check_arguments, notebook_options
    from tmnb.rollout.executors import EXECUTORS
    from tmnb.sources.kubeconfig import kubeconfig_missing
    from tmnb.sources.node_files import node_files_kind

    _source(params, "source")
    _named(
        None,
        lambda: check_arguments(
            target=params.get("target") or {},
            change_id=params.get("change_id", ""),
            mode=params.get("mode", "plan"),
            executor=params.get("executor", "dry-run"),
            waves=params.get("waves", 5),
            state_dir=params.get("state_dir") or "",
            node_selector=params.get("node_selector") or "",
        ),
    )
    options = notebook_options(params.get("options"))
    if options["node_files"]:
        _named("options", lambda: node_files_kind(str(options["node_files"])))
    kind = EXECUTORS.get(str(params.get("executor")))
    needs_cluster = params.get("mode") == "execute" or (kind is not None and kind.through_cluster)
    missing = kubeconfig_missing() if needs_cluster else None
    if missing:
        raise InputError(missing, where=f"parameter executor {params.get('executor')}")


def compare(params: Params) -> None:
    """The two snapshots, the windows (05's own checks: ``metrics.durations``) and the files named."""
    from tmnb.metrics.durations import parse_duration
    from tmnb.metrics.windows import is_time

    for name in ("before", "after"):
        _source(params, name)
    _selector(params)
    _named("window", lambda: parse_duration(str(params.get("window")), where="window"))
    _named("rate_window", lambda: parse_duration(str(params.get("rate_window")), where="rate_window"))
    change = params.get("change")
    if not (isinstance(change, str) and is_time(change)):
        _file(params, "change", "a rollout journal (JSONL) or an RFC 3339 time, e.g. 2026-12-01T10:00:00Z",
              unless=("", "auto"))  # fmt: skip
    _file(params, "metrics_file", "a metrics CSV or Parquet file", unless=("", "auto"))


def postmortem(params: Params) -> None:
    """The evidence must be there; a bundle is verified as ``tmnb evidence open`` verifies it before
    unpacking (exit 4 when it does not match its manifest, 2 when it cannot be unpacked)."""
    from tmnb import evidence

    value = str(params.get("evidence", ""))
    path = Path(value)
    if not path.exists():
        raise InputError(
            "no such file or folder; expected a run folder, a folder of run folders or a .tar.gz bundle",
            source=value,
            where="parameter evidence",
        )
    if path.is_file():
        verified: list[evidence.Verification] = []
        _named("evidence", lambda: verified.append(evidence.verify(path, limit=evidence.MAX_UNPACKED)[1]))
        result = verified[0]
        if not result.intact:
            raise Tampered("the bundle does not match its manifest: " + "; ".join(result.lines()), source=value)


def _no_snapshot_check(params: Params, snapshot: Snapshot) -> None:
    """A notebook whose parameters name no nodes of its snapshot."""


@dataclass(frozen=True)
class NotebookChecks:
    """A notebook's checks: what its parameters alone tell, and what needs its snapshot's content."""

    parameters: Check
    snapshot: SnapshotCheck = _no_snapshot_check


def _sources(params: Params) -> None:
    """Another notebook's: the parameters that name a snapshot source."""
    for name in ("source", "before", "after"):
        _source(params, name)


#: The checks of each notebook, by its name (``tests/test_notebooks.py`` keeps one per notebook).
CHECKS: dict[str, NotebookChecks] = {
    "01-inventory": NotebookChecks(inventory),
    "02-numa-occupancy": NotebookChecks(occupancy, _named_nodes),
    "03-readiness": NotebookChecks(readiness, _selection),
    "04-rollout": NotebookChecks(rollout, _named_nodes),
    "05-compare": NotebookChecks(compare),
    "06-postmortem": NotebookChecks(postmortem),
}
#: A notebook tmnb does not ship: its snapshot sources are checked.
OTHER = NotebookChecks(_sources)


def checks_of(notebook: str) -> NotebookChecks:
    return CHECKS.get(notebook, OTHER)


def check_parameters(notebook: Path, params: Params) -> None:
    """What the parameters alone tell (the runner runs these while the kernel starts)."""
    checks_of(notebook.stem).parameters(params)


def needs_snapshot(notebook: Path, params: Params) -> bool:
    """Whether the notebook has snapshot checks and its source is a snapshot tmnb can read offline."""
    from tmnb.sources.resolve import LIVE

    source = params.get("source")
    return checks_of(notebook.stem).snapshot is not _no_snapshot_check and isinstance(source, str) and source != LIVE


def check_snapshot(notebook: str, params: Params) -> None:
    """The snapshot checks, on the run's snapshot; a snapshot file is read once: what is read here is
    kept for the notebook's first ``open_snapshot`` of it (``sources.resolve.read_ahead``)."""
    from tmnb.sources.resolve import open_snapshot, read_ahead

    source = str(params.get("source"))
    snapshot = read_ahead(source) or open_snapshot(source, progress=False)
    checks_of(notebook).snapshot(params, snapshot)


def in_kernel(notebook: str, parameters: str) -> str:
    """``check_snapshot`` as the run's kernel answers it (``tmnb.cli.run.kernel``): JSON ``null`` when
    the checks passed, else the refusal's class and fields, which the runner raises as its own. What
    the kernel read it then holds for good (``collector.settled``)."""
    try:
        check_snapshot(notebook, json.loads(parameters))
    except InputError as exc:
        refusal = {"kind": type(exc).__name__, "message": exc.message, "source": exc.source, "where": exc.where}
        return json.dumps({**refusal, "line": exc.line})
    finally:
        settled()
    return json.dumps(None)


def refusal(answer: Mapping[str, Any]) -> InputError:
    """The exception ``in_kernel`` answered, of the same class (a snapshot that fails to load stays a
    ``SnapshotError``, a tampered one ``Tampered``)."""
    from tmnb import errors

    kind = getattr(errors, str(answer.get("kind")), InputError)
    cls = kind if isinstance(kind, type) and issubclass(kind, InputError) else InputError
    return cls(
        str(answer.get("message")), source=answer.get("source"), where=answer.get("where"), line=answer.get("line")
    )
