"""Effective kubelet settings: default → file → drop-ins → flags, or /configz, with provenance."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.parse.kubelet_config import parse_configz, parse_kubelet_config, parse_kubelet_dropin, read_dropin_dir
from tmnb.parse.kubelet_flags import parse_kubelet_args
from tmnb.parse.systemd import parse_systemd_units
from tmnb.settings.effective import Layer, Setting, effective_settings
from tmnb.versions import KubeVersion

KUBELET = Path(__file__).parents[1] / "fixtures" / "node" / "kubelet"
SYSTEMD = KUBELET / "systemd"
HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
V131 = KubeVersion(1, 31, 4)


def node_layers():  # type: ignore[no-untyped-def]
    """The fixture node: kubeadm unit + env files, config.yaml, a drop-in dir, and a stale /configz."""
    units = [
        ("/lib/systemd/system/kubelet.service", (SYSTEMD / "kubelet.service").read_text()),
        ("/etc/systemd/system/kubelet.service.d/10-kubeadm.conf", (SYSTEMD / "10-kubeadm.conf").read_text()),
    ]
    env = {
        "/var/lib/kubelet/kubeadm-flags.env": (SYSTEMD / "kubeadm-flags.env").read_text(),
        "/etc/default/kubelet": (SYSTEMD / "etc-default-kubelet").read_text(),
    }
    ex = parse_systemd_units(units, env_files=env)
    return {
        "file": parse_kubelet_config((KUBELET / "config.yaml").read_text(), source="/var/lib/kubelet/config.yaml"),
        "dropins": read_dropin_dir(KUBELET / "config-dir"),
        "flags": parse_kubelet_args(ex.argv, source="kubelet.service", origins=ex.origins),
        "configz": parse_configz((KUBELET / "configz.json").read_text()),
    }


def from_yaml(body: str, **kwargs):  # type: ignore[no-untyped-def]
    return effective_settings(file=parse_kubelet_config(HEADER + body, source="config.yaml"), **kwargs)


def flags(*args: str):  # type: ignore[no-untyped-def]
    return parse_kubelet_args(["/usr/bin/kubelet", *args], source="cmdline")


def test_flag_beats_dropin_beats_file_beats_default() -> None:
    layers = node_layers()
    del layers["configz"]
    s = effective_settings(**layers, version=V131)
    policy = s.setting("topologyManagerPolicy")
    assert (policy.value, policy.source, policy.detail) == ("single-numa-node", "flag", "--topology-manager-policy")
    assert [(layer.source, layer.value) for layer in policy.overridden] == [
        ("default", "none"),
        ("file", "best-effort"),
        ("dropin", "restricted"),
    ]
    assert policy.overridden[2].detail.endswith("config-dir/10-topology.conf")


def test_dropins_merge_maps_per_key_and_replace_lists() -> None:
    layers = node_layers()
    del layers["configz"]
    s = effective_settings(**layers, version=V131)
    assert s.value("kubeReserved") == {"cpu": "500m", "memory": "2Gi"}
    assert s.setting("kubeReserved").source == "dropin"
    assert s.value("reservedMemory") == [
        {"numaNode": 0, "limits": {"memory": "1124Mi"}},
        {"numaNode": 1, "limits": {"memory": "2Gi"}},
    ]
    # sub/50-gates.conf says CPUManagerPolicyAlphaOptions: null, but a drop-in's null only removes what
    # an earlier drop-in set: the gate from config.yaml stays (mergeKubeletConfigurations)
    assert s.value("featureGates") == {"CPUManagerPolicyAlphaOptions": True, "CPUManagerPolicyBetaOptions": True}
    assert s.value("topologyManagerPolicyOptions") == {"prefer-closest-numa-nodes": "true"}
    assert s.value("cpuManagerPolicyOptions") == {"full-pcpus-only": "true"}  # untouched file value
    assert [Path(p).name for p in s.skipped_dropin_files] == ["15-topology.yaml", "README.md"]
    assert s.value("topologyManagerScope") == "container"  # the .yaml drop-in is ignored


def test_kubeadm_zero_values_mean_defaults() -> None:
    layers = node_layers()
    del layers["configz"]
    s = effective_settings(**layers, version=V131)
    assert s.setting("cpuManagerReconcilePeriod") == Setting("10s", "default")
    assert s.value("syncFrequency") is None  # "0s" in the file: the kubelet's default, not modelled here
    endpoint = s.setting("containerRuntimeEndpoint")
    assert (endpoint.value, endpoint.source) == ("unix:///var/run/containerd/containerd.sock", "flag")
    assert [layer.source for layer in endpoint.overridden] == ["default"]  # the file's "" is no layer


def test_configz_is_the_truth_and_drift_is_reported() -> None:
    s = effective_settings(**node_layers(), version=V131)
    assert s.from_configz
    policy = s.setting("topologyManagerPolicy")
    assert (policy.value, policy.source) == ("restricted", "configz")
    assert policy.overridden[-1] == Layer("flag", "single-numa-node", "--topology-manager-policy")
    assert [(d.field, d.configured, d.running) for d in s.drift] == [
        ("topologyManagerPolicy", "single-numa-node", "restricted")
    ]
    assert s.value("cpuManagerReconcilePeriod") == "10s"
    assert s.setting("hairpinMode").overridden == ()  # only /configz knows it


def test_only_configz() -> None:
    s = effective_settings(configz=parse_configz((KUBELET / "configz.json").read_text()))
    assert {setting.source for setting in s.fields.values()} == {"configz"}
    assert s.drift == ()
    assert s.value("memoryManagerPolicy") == "Static"


def test_durations_and_quantities_compare_by_value() -> None:
    configz = parse_configz(
        '{"kubeletconfig": {"cpuManagerReconcilePeriod": "1m0s",'
        ' "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]}}'
    )
    s = from_yaml(
        "cpuManagerReconcilePeriod: 1m\nreservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1024Mi\n",
        configz=configz,
    )
    assert s.drift == ()
    assert s.setting("reservedMemory").overridden[-1].value == [{"numaNode": 0, "limits": {"memory": "1Gi"}}]


def test_flags_replace_maps_except_feature_gates() -> None:
    s = from_yaml(
        "kubeReserved: {cpu: 500m, memory: 1Gi}\nfeatureGates: {CPUManagerPolicyAlphaOptions: true}\n",
        flags=flags("--kube-reserved=cpu=1", "--feature-gates=CPUManagerPolicyBetaOptions=false"),
    )
    assert s.value("kubeReserved") == {"cpu": "1"}
    assert s.value("featureGates") == {"CPUManagerPolicyAlphaOptions": True, "CPUManagerPolicyBetaOptions": False}
    assert s.setting("featureGates").source == "flag"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "",
            {
                "memory.available": "100Mi",
                "nodefs.available": "10%",
                "nodefs.inodesFree": "5%",
                "imagefs.available": "15%",
                "imagefs.inodesFree": "5%",
            },
        ),
        ("evictionHard: {memory.available: 500Mi}\n", {"memory.available": "500Mi"}),
        (
            "evictionHard: {memory.available: 500Mi}\nmergeDefaultEvictionSettings: true\n",
            {
                "memory.available": "500Mi",
                "nodefs.available": "10%",
                "nodefs.inodesFree": "5%",
                "imagefs.available": "15%",
                "imagefs.inodesFree": "5%",
            },
        ),
    ],
)
def test_eviction_hard_defaults_only_when_the_file_leaves_it_unset(body: str, expected: dict[str, str]) -> None:
    assert from_yaml(body).value("evictionHard") == expected


def test_dropin_eviction_hard_merges_into_the_defaults() -> None:
    dropin = parse_kubelet_dropin(HEADER + "evictionHard: {memory.available: 500Mi}\n", source="/d/10.conf")
    s = from_yaml("", dropins=[dropin])
    assert s.value("evictionHard")["memory.available"] == "500Mi"
    assert s.value("evictionHard")["nodefs.available"] == "10%"


def test_dropin_null_removes_an_earlier_dropins_value_not_the_files() -> None:
    """The file's values are in the struct the merged drop-ins are unmarshalled into: a drop-in's
    null deletes a key of the merged drop-in document only, and nothing is defaulted again."""
    reset = parse_kubelet_dropin(
        HEADER + "topologyManagerPolicy: null\ncpuManagerPolicyOptions: null\ntopologyManagerScope: null\n",
        source="/d/90-reset.conf",
    )
    earlier = parse_kubelet_dropin(HEADER + "topologyManagerScope: pod\n", source="/d/10-scope.conf")
    s = from_yaml(
        "topologyManagerPolicy: restricted\ncpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n",
        dropins=[earlier, reset],
    )
    policy = s.setting("topologyManagerPolicy")
    assert (policy.value, policy.source) == ("restricted", "file")
    assert s.value("cpuManagerPolicyOptions") == {"full-pcpus-only": "true"}
    assert (s.value("topologyManagerScope"), s.setting("topologyManagerScope").source) == ("container", "default")


def test_dropin_zero_values_are_values_and_maps_keep_the_files_keys() -> None:
    dropin = parse_kubelet_dropin(
        HEADER + "topologyManagerPolicy: ''\nevictionHard: {memory.available: null, nodefs.available: 5%}\n"
        "cpuManagerPolicyOptions: {}\n",
        source="/d/10.conf",
    )
    s = from_yaml(
        "evictionHard: {memory.available: 1Gi}\ncpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n",
        dropins=[dropin],
    )
    assert (s.value("topologyManagerPolicy", "unset"), s.setting("topologyManagerPolicy").source) == ("", "dropin")
    assert s.value("evictionHard") == {"memory.available": "1Gi", "nodefs.available": "5%"}
    assert s.value("cpuManagerPolicyOptions") == {"full-pcpus-only": "true"}


def test_dropin_keys_match_fields_case_insensitively() -> None:
    """json.Unmarshal into the internal struct folds case: a drop-in's TopologyManagerPolicy sets the
    policy (the same key in the --config file is an unknown field). Among spellings of one field
    the one sorting last wins; one sorting before the Go name (TOPOLOGY...) loses to the file's value."""
    case = parse_kubelet_dropin(HEADER + "TopologyManagerPolicy: restricted\n", source="/d/10.conf")
    assert case.unknown_fields == ()
    s = from_yaml("topologyManagerPolicy: best-effort\n", dropins=[case])
    assert (s.value("topologyManagerPolicy"), s.setting("topologyManagerPolicy").source) == ("restricted", "dropin")
    two = parse_kubelet_dropin(HEADER + "topologymanagerpolicy: single-numa-node\n", source="/d/20.conf")
    assert from_yaml("", dropins=[two, case]).value("topologyManagerPolicy") == "single-numa-node"
    shout = parse_kubelet_dropin(HEADER + "TOPOLOGYMANAGERPOLICY: restricted\n", source="/d/30.conf")
    lost = from_yaml("topologyManagerPolicy: best-effort\n", dropins=[shout])
    kept = lost.setting("topologyManagerPolicy")
    assert (kept.value, kept.source) == ("best-effort", "file")
    in_file = parse_kubelet_config(HEADER + "TopologyManagerPolicy: restricted\n", source="c.yaml")
    assert in_file.unknown_fields == ("TopologyManagerPolicy",)


def test_defaults_are_those_of_the_minor_the_node_is_predicted_as() -> None:
    # mergeDefaultEvictionSettings exists from 1.33; an older kubelet is predicted as 1.33 (and says so)
    assert from_yaml("", version=KubeVersion(1, 32, 0)).value("mergeDefaultEvictionSettings") is False
    assert from_yaml("", version=KubeVersion(1, 20, 0)).value("topologyManagerScope") == "container"
    assert from_yaml("").value("memoryManagerPolicy") == "None"
    assert from_yaml("").value("cpuManagerPolicy") == "none"


def test_unknown_and_duplicate_fields_keep_their_source() -> None:
    s = from_yaml("topologyManagerPolicyOption: {a: b}\nmaxPods: 10\nmaxPods: 20\n")
    assert s.unknown_fields == (("config.yaml", "topologyManagerPolicyOption"),)
    assert s.duplicate_fields == (("config.yaml", "maxPods (line 5)"),)


def test_settings_fit_the_snapshot_model() -> None:
    from factories import node, snapshot
    from tmnb.snapshot import KubeletInfo, from_dict, to_dict

    s = effective_settings(**node_layers(), version=V131)
    data = to_dict(snapshot([node(kubelet=KubeletInfo(settings=dict(s.fields)))], []))
    assert from_dict(data).nodes[0].kubelet.settings == s.fields  # written and read back unchanged
    assert data["nodes"][0]["kubelet"]["settings"]["topologyManagerPolicy"]["overridden"][-1] == {
        "source": "flag",
        "value": "single-numa-node",
        "detail": "--topology-manager-policy",
    }


def test_drift_and_the_flags_config_fields() -> None:
    s = effective_settings(**node_layers(), version=V131)
    assert s.drift[0].field == "topologyManagerPolicy"
    assert s.flags is not None and s.flags.config_fields["topologyManagerPolicy"] == "single-numa-node"
