"""Each notebook's parameters checked before a kernel starts, by the checks its ``tmnb`` subcommand
runs (04-rollout's are ``tmnb rollout``'s, 06-postmortem's a bundle's are ``tmnb evidence verify``'s):
a wrong parameter is one line and exit 2 within a second, not a kernel that fails a minute later.

``CHECKS`` is the registry, keyed by the notebook's name; every notebook has an entry, and
``check_parameters`` runs it on the parameters a run will inject (the defaults, with what was given
over them). What only the cluster can tell (a live source's nodes, a flag that overrides the target)
is left to the kernel.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tmnb.errors import InputError, Tampered

#: The parameters of one run, by name (the notebook's defaults under what was given).
Params = Mapping[str, Any]
Check = Callable[[Params], None]


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


def _selected(params: Params, *, names: bool) -> None:
    """With a snapshot file or the sample, the nodes named (``nodes``, a ``canary`` other than
    ``recommended``) or selected must be in it."""
    from tmnb.sources.resolve import LIVE, open_snapshot

    source = params.get("source")
    if not isinstance(source, str) or source == LIVE:
        return
    snapshot = open_snapshot(source, progress=False)
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
    from tmnb.snapshot.select import select_nodes

    if snapshot.nodes and not select_nodes(snapshot, params.get("node_selector") or "").nodes:
        raise InputError(
            f"matches no node of {source} (nodes: {', '.join(n.name for n in snapshot.nodes[:5])}"
            f"{', …' if len(snapshot.nodes) > 5 else ''})",
            where="parameter node_selector",
        )


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
    _selected(params, names=True)


def readiness(params: Params) -> None:
    """``tmnb whatif``'s checks (the source, the target's fields and values), and the selection."""
    _source(params, "source")
    _target(params)
    _selector(params)
    _selected(params, names=False)


def rollout(params: Params) -> None:
    """``tmnb rollout``'s checks (``rollout.arguments``), the options, a kubeconfig where the change
    needs the cluster, and the nodes when the plan is made from a snapshot file."""
    from tmnb.rollout.arguments import check_arguments, notebook_options
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
    needs_cluster = params.get("mode") == "execute" or params.get("executor") in ("sandbox", "node-pod")
    missing = kubeconfig_missing() if needs_cluster else None
    if missing:
        raise InputError(missing, where=f"parameter executor {params.get('executor')}")
    _selected(params, names=True)


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


#: The checks of each notebook, by its name (``tests/test_notebooks.py`` keeps one per notebook).
CHECKS: dict[str, Check] = {
    "01-inventory": inventory,
    "02-numa-occupancy": occupancy,
    "03-readiness": readiness,
    "04-rollout": rollout,
    "05-compare": compare,
    "06-postmortem": postmortem,
}


def sources(params: Params) -> None:
    """Another notebook's: the parameters that name a snapshot source."""
    for name in ("source", "before", "after"):
        _source(params, name)


def check_parameters(notebook: Path, params: Params) -> None:
    """Run the notebook's checks; a notebook tmnb does not ship has its snapshot sources checked."""
    CHECKS.get(notebook.stem, sources)(params)
