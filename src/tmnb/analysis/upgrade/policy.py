"""Whether an upgrade of the kubelet is one Kubernetes and kubeadm support, from the two versions alone.

The version skew policy (kubernetes.io/releases/version-skew-policy): "kubelet must not be newer than
kube-apiserver", "kubelet may be up to three minor versions older than kube-apiserver", the API server
is upgraded before the kubelets that talk to it, and "Before performing a minor version kubelet upgrade,
drain pods from that node. In-place minor version kubelet upgrades are not supported." kubeadm's
upgrade (kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade) goes control plane first,
then the workers, one minor at a time: "Skipping MINOR versions when upgrading is unsupported"; its
preflight refuses a kubelet newer than the control plane ("the kubelet version is higher than the
control plane version. This is not a supported version skew and may lead to a malfunctional cluster").
Which minor is newer, and by how much, is the profiles' to say (``kubelet_skew``, ``upgrade_hops``).
"""

from __future__ import annotations

from collections.abc import Iterator

from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.analysis.upgrade.gates import AREA
from tmnb.kubelet.profiles import KUBELET_VERSION, MAX_KUBELET_LAG, kubelet_skew, supported_kubelets
from tmnb.replay import minor_upgrade

_POLICY = "version skew policy"


def _minors(minors: tuple[int, ...]) -> str:
    names = [f"1.{m}" for m in minors]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _server_skew(c: LintContext) -> Iterator[tuple[str, Hit]]:
    """("ahead" | "beyond" | "unknown", hit) for the planned kubelet against the API server."""
    target = c.profile
    if not c.plan.changes(KUBELET_VERSION):
        return
    fill = {"minor": target.name, "server": str(c.server or "unknown")}
    if c.server is None:
        text = (
            f"The snapshot does not say the API server's version: kubelet {target.name} must not be newer than "
            f"it ({_POLICY}), and the control plane is upgraded first."
        )
        yield "unknown", Hit(KUBELET_VERSION, "an API server version", "unknown", text, severity="warning", fill=fill)
        return
    skew, lag = kubelet_skew(c.server, target.version)
    window = supported_kubelets(c.server)
    expected = f"a minor from 1.{window[0]} to 1.{window[-1]} (API server {c.server})"
    if skew == "ahead":
        text = (
            f'Kubelet {target.name} would be newer than the API server {c.server}: "kubelet must not be newer than '
            f'kube-apiserver" ({_POLICY}); kubeadm\'s preflight refuses it ("the kubelet version is higher than the '
            'control plane version").'
        )
        yield "ahead", Hit(KUBELET_VERSION, expected, target.name, text, fill=fill)
    elif skew == "beyond":
        behind = "a major version" if lag is None else f"{lag} minors"
        text = (
            f"Kubelet {target.name} would be {behind} behind the API server {c.server}: a kubelet may be up to "
            f"{MAX_KUBELET_LAG} minor versions older than kube-apiserver ({_POLICY})."
        )
        yield "beyond", Hit(KUBELET_VERSION, expected, target.name, text, fill={**fill, "oldest": f"1.{window[0]}"})


def _newer_than_server(c: LintContext) -> Iterator[Hit]:
    return (hit for kind, hit in _server_skew(c) if kind != "beyond")


def _beyond_skew(c: LintContext) -> Iterator[Hit]:
    return (hit for kind, hit in _server_skew(c) if kind == "beyond")


def _today(c: LintContext) -> str:
    """The node's kubelet minor as reported (its patch would tell nodes of one minor apart), else as predicted."""
    version = c.plan.version
    return f"{version.major}.{version.minor}" if version else c.today.name


def _skips_minors(c: LintContext) -> Iterator[Hit]:
    hops = c.plan.hops
    if len(hops) > 1:
        today = _today(c)
        yield Hit(
            KUBELET_VERSION,
            "one minor at a time",
            f"{today} to {c.profile.name}",
            f"Kubelet {today} to {c.profile.name} skips {_minors(hops[:-1])}: kubeadm upgrades one minor at a time "
            '("Skipping MINOR versions when upgrading is unsupported"), each with its own kubeadm, `kubeadm upgrade '
            "node` and kubelet package.",
            fill={"path": ", then ".join(f"1.{m}" for m in hops)},
        )


def _drain_first(c: LintContext) -> Iterator[Hit]:
    if c.plan.hops:
        why = minor_upgrade(c.plan)
        yield Hit(
            KUBELET_VERSION,
            "a drained node",
            f"kubelet {_today(c)} running its pods",
            f"{why[0].upper()}{why[1:]}. tmnb's rollout changes configuration, not kubelet binaries.",
            fill={"minor": c.profile.name},
        )


UPGRADE_NEWER_THAN_SERVER = Rule[LintContext](
    "upgrade.newer-than-server",
    AREA,
    "blocker",
    "Upgrade the control plane first: kube-apiserver to {minor} (then kube-controller-manager and kube-scheduler; "
    "on kubeadm, `kubeadm upgrade apply` on the control plane nodes, one minor at a time), then the kubelets; or "
    "plan a kubeletVersion no newer than the API server ({server}).",
    _newer_than_server,
    manual=True,
    fleet=True,
    summary="the planned kubelet would be newer than the API server (or the snapshot does not say its version): "
    "the control plane is upgraded first",
)
UPGRADE_BEYOND_SKEW = Rule[LintContext](
    "upgrade.beyond-skew",
    AREA,
    "blocker",
    "Plan a kubeletVersion the API server ({server}) supports: {oldest} or newer.",
    _beyond_skew,
    summary="the planned kubelet would lag the API server by more minors than the version skew policy supports",
)
UPGRADE_SKIPS_MINORS = Rule[LintContext](
    "upgrade.skips-minors",
    AREA,
    "warning",
    "Manual action: upgrade the kubelet one minor at a time, {path}, draining the node before each and checking it "
    "Ready after.",
    _skips_minors,
    manual=True,
    summary="the upgrade skips minors, which kubeadm's upgrade does not do",
)
UPGRADE_DRAIN_FIRST = Rule[LintContext](
    "upgrade.drain-first",
    AREA,
    "warning",
    "Manual action: cordon and drain the node, stop the kubelet, install kubelet {minor} (on kubeadm, `kubeadm "
    "upgrade node` first), start it, verify, uncordon.",
    _drain_first,
    manual=True,
    summary="a minor upgrade of the kubelet: in-place minor upgrades are not supported, the node is drained first",
)
