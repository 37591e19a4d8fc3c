"""How a change reaches the kubelet's configuration: ``APPLY_MODES``, one ``ApplyMode`` per way.

``edit`` sets the fields in the kubelet's ``--config`` file in place (``config_yaml``: every other
byte kept); ``drop-in`` writes them to a file of its own in the kubelet's ``--config-dir``, which
the kubelet merges after the config file. Each mode says whether a node can take it, the file it
writes and that file's new content from the bytes read on the node. The plan (files and diffs),
the apply step (the bytes written) and the command line's ``--apply`` choices read them; a rollback
puts back the bytes backed up, whatever the mode. A new way is one ``ApplyMode`` here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the command line reads APPLY_CHOICES before any kubelet model or YAML library loads
    from tmnb.kubelet.profiles import Resolved
    from tmnb.snapshot import Node

ApplyHow = Literal["auto", "edit", "drop-in"]
How = Literal["edit", "drop-in"]
#: Sorts after the usual 00-/10-/50- drop-ins, so the change wins the merge.
DROPIN_NAME = "99-tmnb.conf"


@dataclass(frozen=True)
class ApplyMode:
    """One way to write a change: ``cannot(node, kubelet)`` says why a node cannot take it ('' when it
    can), ``path(node)`` is the file written, ``content(before, fields, source)`` its new text from
    the text read on the node (None: the file is absent); ``whole``: the file is tmnb's own, so its
    content does not depend on what was there."""

    word: How
    what: str
    cannot: Callable[[Node, Resolved], str]
    path: Callable[[Node], str]
    content: Callable[[str | None, Mapping[str, Any], str], str]
    whole: bool


def _edit_cannot(node: Node, kubelet: Resolved) -> str:
    if not node.kubelet.config_file:
        return "the kubelet runs without --config: there is no config file to edit (tmnb never edits flags)"
    return ""


def _dropin_cannot(node: Node, kubelet: Resolved) -> str:
    if not node.kubelet.config_dir:
        return "the kubelet runs without --config-dir"
    if not (kubelet.modelled and kubelet.profile.config_dir):
        return f"{kubelet.note()}: tmnb does not know how it reads --config-dir"
    return ""


def _dropin_path(node: Node) -> str:
    return f"{(node.kubelet.config_dir or '').rstrip('/')}/{DROPIN_NAME}"


def _edit_content(before: str | None, fields: Mapping[str, Any], source: str) -> str:
    from tmnb.rollout.config_yaml import edit_config

    return edit_config(before, fields, source=source)


def _dropin_content(before: str | None, fields: Mapping[str, Any], source: str) -> str:
    from tmnb.rollout.config_yaml import new_config

    return new_config(fields)  # the drop-in is tmnb's own file: whatever was there is replaced


APPLY_MODES: dict[str, ApplyMode] = {
    "edit": ApplyMode(
        "edit", "set the fields in the kubelet's config file", _edit_cannot,
        lambda node: node.kubelet.config_file or "", _edit_content, False,
    ),
    "drop-in": ApplyMode(
        "drop-in", f"write the fields to {DROPIN_NAME} in the kubelet's --config-dir", _dropin_cannot, _dropin_path,
        _dropin_content, True,
    ),
}  # fmt: skip
#: ``apply``'s values: a mode, or ``auto`` (a drop-in where the node can take one, else the edit).
APPLY_CHOICES: tuple[str, ...] = ("auto", *APPLY_MODES)


def choose(node: Node, kubelet: Resolved, how: ApplyHow) -> tuple[ApplyMode, str]:
    """The mode for this node, and why it cannot take it ('' when it can)."""
    if how == "auto":
        how = "drop-in" if not APPLY_MODES["drop-in"].cannot(node, kubelet) else "edit"
    mode = APPLY_MODES[how]
    return mode, mode.cannot(node, kubelet)
