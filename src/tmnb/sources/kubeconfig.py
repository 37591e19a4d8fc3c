"""Whether a live source has a kubeconfig to try, answered without importing the client (so
``tmnb run`` can refuse a hopeless run before a kernel starts)."""

from __future__ import annotations

import os


def kubeconfig_missing(kubeconfig: str | None = None) -> str | None:
    """Why a live source cannot even try, or None: the kubeconfig given, or every file $KUBECONFIG
    lists, or (neither set) ~/.kube/config, does not exist, and no pod's service account is there.
    A kubeconfig that exists but is bad is left to the client's loader, which says what is wrong."""
    if kubeconfig:
        return None if os.path.exists(kubeconfig) else f"kubeconfig {kubeconfig} does not exist"
    if os.environ.get("KUBERNETES_SERVICE_HOST"):  # in a pod, the service account is the fallback
        return None
    listed = [p for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    if listed:
        if any(os.path.exists(os.path.expanduser(p)) for p in listed):
            return None
        return f"no kubeconfig: $KUBECONFIG names {', '.join(listed)}, and none of it exists"
    if os.path.exists(os.path.expanduser("~/.kube/config")):
        return None
    return (
        "no kubeconfig: $KUBECONFIG is unset, ~/.kube/config does not exist and this is not a pod; point "
        "KUBECONFIG at the cluster's kubeconfig, or read a snapshot instead of live (source sample, or a "
        "file written by tmnb snapshot)"
    )
