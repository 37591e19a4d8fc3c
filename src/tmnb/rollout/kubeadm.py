"""The change as kubeadm keeps it, for the nodes kubeadm manages.

At ``kubeadm upgrade node`` (its ``kubelet-config`` phase) kubeadm writes the kubelet's config file
again from the kube-system/kubelet-config ConfigMap, so an edit made on the node is gone after the
next upgrade. kubeadm applies the patches in the directory its ``--patches`` flag names, each file
named ``target[suffix][+patchtype].extension``; ``kubeletconfiguration`` is the kubelet
configuration's target and ``strategic`` the default patch type. The plan writes that patch beside
the change's journal and says how to use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tmnb.rollout.config_yaml import new_config

#: The patch file: target ``kubeletconfiguration``, patch type ``strategic``, YAML.
PATCH_FILE = "kubeletconfiguration+strategic.yaml"
#: The folder of the change's state folder that holds it: the directory ``--patches`` takes.
PATCH_DIR = "kubeadm-patches"


def patch_path(folder: Path) -> Path:
    return folder / PATCH_DIR / PATCH_FILE


def kubeadm_warning(path: str, how: str) -> str:
    """What a kubeadm-managed node's change needs to survive ``kubeadm upgrade``."""
    keep = (
        f"copy {PATCH_DIR}/{PATCH_FILE} (written beside the change's journal) into a directory on the node "
        "and pass it to every `kubeadm upgrade node` (and `kubeadm join`) as `--patches DIR`, or set the same "
        "fields in the kube-system/kubelet-config ConfigMap"
    )
    if how == "edit":
        return f"kubeadm writes {path} again at the next `kubeadm upgrade node`, dropping this edit: {keep}."
    return f"kubeadm does not rewrite the drop-in {path} at an upgrade, but a node it sets up anew lacks it: {keep}."


def patch_text(target: Mapping[str, Any]) -> str:
    """The patch: a KubeletConfiguration document of the target's fields."""
    return new_config(target)


def write_patch(folder: Path, target: Mapping[str, Any]) -> Path:
    """The kubeadm patch of ``target`` in the change's state folder (written once, with the plan)."""
    path = patch_path(folder)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(patch_text(target))
    return path
