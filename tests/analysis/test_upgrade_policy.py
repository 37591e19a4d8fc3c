"""Whether a kubelet upgrade is one Kubernetes and kubeadm support, worked by hand from the published texts.

The version skew policy (kubernetes.io/releases/version-skew-policy): "kubelet must not be newer than
kube-apiserver"; "kubelet may be up to three minor versions older than kube-apiserver"; "Before performing
a minor version kubelet upgrade, drain pods from that node. In-place minor version kubelet upgrades are
not supported." kubeadm's upgrade page: control plane first, then the workers; "Skipping MINOR versions
when upgrading is unsupported". The sample's API server is v1.36.2; its kubelets run v1.36.x, gen-icx-03
v1.34.5.
"""

import pytest

from factories import node, pod, settings, snapshot
from tmnb.analysis.lint import lint, needs_manual_action
from tmnb.analysis.readiness import assess, results, verdict
from tmnb.kubelet.profiles import profile, supported_kubelets, upgrade_hops
from tmnb.snapshot import Cluster, KubeletInfo
from tmnb.sources.embedded import load_sample
from tmnb.versions import KubeVersion

POLICY = ("upgrade.newer-than-server", "upgrade.beyond-skew", "upgrade.skips-minors", "upgrade.drain-first")
STATIC = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))


def policy_findings(snap, target):
    return sorted((f.node, f.rule, f.severity) for f in lint(snap, target) if f.rule in POLICY)


def server(version):
    return Cluster(server_version=version)


@pytest.mark.parametrize(
    ("today", "target", "hops"),
    [
        ("v1.34.5", 37, (35, 36, 37)),  # gen-icx-03 to 1.37: through 1.35 and 1.36
        ("v1.36.2", 37, (37,)),
        ("v1.36.2", 36, ()),  # a patch is no minor upgrade
        ("v1.37.0", 35, ()),  # a downgrade is no upgrade
        ("v2.1.0", 37, ()),  # across majors there is no path of minors
    ],
)
def test_the_minors_an_upgrade_passes(today, target, hops):
    assert upgrade_hops(KubeVersion.parse(today), profile(target)) == hops


def test_the_minors_an_api_server_supports():
    """API server 1.36: kubelets 1.36, 1.35, 1.34 and 1.33 ("up to three minor versions older")."""
    assert supported_kubelets(KubeVersion.parse("v1.36.2")) == (33, 34, 35, 36)


def test_the_sample_upgraded_to_1_37_is_blocked_by_its_1_36_api_server():
    """The issue's case: 1.37 is newer than the sample's API server v1.36.2 on every node, a blocker the
    control plane's upgrade removes; gen-icx-03 would also jump 1.34 to 1.37, skipping 1.35 and 1.36."""
    sample = load_sample()
    report = assess(sample, {"kubeletVersion": "1.37"})
    newer = report.lint[report.lint["rule"] == "upgrade.newer-than-server"]
    assert set(newer["node"]) == {n.name for n in sample.nodes} and set(newer["severity"]) == {"blocker"}
    assert "API server v1.36.2" in newer.iloc[0]["explanation"]
    assert newer.iloc[0]["remedy"].startswith("Upgrade the control plane first: kube-apiserver to 1.37")
    assert "ready" not in set(report.verdicts["verdict"])
    assert "14 findings at or above blocker" in report.alert
    assert results(report, "s")["blockers"] == 14
    (skip,) = [f for f in report.findings if f.rule == "upgrade.skips-minors"]
    assert (skip.node, skip.severity) == ("gen-icx-03", "warning") and needs_manual_action(skip)
    assert "1.34 to 1.37 skips 1.35 and 1.36" in skip.explanation
    assert "1.35, then 1.36, then 1.37" in skip.remedy
    plan = report.plan.set_index("node")
    assert tuple(plan.loc["gen-icx-03", ["setting", "current", "target", "change"]]) == (
        "kubeletVersion",
        "v1.34.5",
        "1.37",
        "yes",
    )
    assert tuple(plan.loc["gen-icx-01", ["current", "target", "change"]]) == ("v1.36.2", "1.37", "yes")
    answer = verdict(report)
    assert answer.tone == "stop" and answer.headline.startswith("Not ready: 1 thing blocks this change")
    assert answer.commands == []  # every node has the blocker: no canary, no 04 command
    (block,) = dict(answer.sections)["What blocks"]
    assert "(upgrade.newer-than-server)" in block  # the same blocker on 14 nodes, said once


def test_an_upgrade_within_the_skew_drains_each_node_first():
    """API server 1.37, an idle 1.36 node: supported, but "in-place minor version kubelet upgrades are
    not supported", so the node drains although its restart would re-admit every pod (it has none)."""
    snap = snapshot([node("a", version="v1.36.1", kubelet=STATIC)], cluster=server("v1.37.0"))
    assert policy_findings(snap, {"kubeletVersion": "1.37"}) == [("a", "upgrade.drain-first", "warning")]
    report = assess(snap, {"kubeletVersion": "1.37"})
    (drain,) = [f for f in report.findings if f.rule == "upgrade.drain-first"]
    assert needs_manual_action(drain) and "install kubelet 1.37" in drain.remedy
    assert "In-place minor version kubelet upgrades are not supported" in drain.explanation
    steps = report.steps["a"]
    assert steps.drain and "In-place minor version kubelet upgrades are not supported" in steps.why
    assert report.verdicts.set_index("node").loc["a", "verdict"] == "needs action"


def test_an_upgrade_that_skips_minors_within_the_skew():
    """API server 1.37, a 1.34 kubelet (three minors behind, supported) to 1.37: no skew blocker, but the
    upgrade skips 1.35 and 1.36, a step by hand."""
    snap = snapshot([node("a", version="v1.34.5", kubelet=STATIC)], cluster=server("v1.37.0"))
    assert policy_findings(snap, {"kubeletVersion": "1.37"}) == [
        ("a", "upgrade.drain-first", "warning"),
        ("a", "upgrade.skips-minors", "warning"),
    ]
    # the kubelet lagging today (a warning of its own) is not said beside the upgrade that ends the lag
    assert "version-skew" not in {f.rule for f in lint(snap, {"kubeletVersion": "1.37"})}
    assert "version-skew" in {f.rule for f in lint(snap, {"topologyManagerPolicy": "restricted"})}


def test_a_kubelet_more_minors_behind_than_the_policy_supports():
    """API server 1.37 and a target of 1.33: four minors behind, one more than the policy allows."""
    snap = snapshot([node("a", version="v1.36.1", kubelet=STATIC)], cluster=server("v1.37.0"))
    (hit,) = [f for f in lint(snap, {"kubeletVersion": "1.33"}) if f.rule in POLICY]
    assert (hit.rule, hit.severity) == ("upgrade.beyond-skew", "blocker")
    assert "4 minors behind the API server v1.37.0" in hit.explanation
    assert hit.expected == "a minor from 1.34 to 1.37 (API server v1.37.0)"
    assert hit.remedy == "Plan a kubeletVersion the API server (v1.37.0) supports: 1.34 or newer."


def test_without_the_api_servers_version_the_control_plane_comes_first():
    snap = snapshot([node("a", version="v1.36.1", kubelet=STATIC)], cluster=server(None))
    found = policy_findings(snap, {"kubeletVersion": "1.37"})
    assert ("a", "upgrade.newer-than-server", "warning") in found


def test_the_nodes_own_minor_is_no_upgrade():
    snap = snapshot([node("a", version="v1.36.1", kubelet=STATIC)], [pod("x", "a")])
    assert policy_findings(snap, {"kubeletVersion": "1.36"}) == []
    report = assess(snap, {"kubeletVersion": "1.36"})
    row = report.plan.set_index("node").loc["a"]
    assert (row["current"], row["target"], row["change"]) == ("v1.36.1", "1.36", "no")
    assert report.verdicts.set_index("node").loc["a", "verdict"] == "nothing to do"
