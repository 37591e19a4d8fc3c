"""Kubelet flags parsed the way pflag and each flag type's Set do it."""

from __future__ import annotations

import pytest

from tmnb.errors import ConfigRejected, InputError
from tmnb.parse.kubelet_flags import parse_kubelet_args

KUBELET = "/usr/bin/kubelet"


def parse(*args: str):  # type: ignore[no-untyped-def]
    return parse_kubelet_args([KUBELET, *args], source="cmdline")


def test_value_forms_and_name_normalization() -> None:
    flags = parse("--topology-manager-policy", "restricted", "--topology_manager_scope=pod", "-v=4", "--fail-swap-on")
    assert flags.config_fields == {
        "topologyManagerPolicy": "restricted",
        "topologyManagerScope": "pod",
        "failSwapOn": True,
    }
    assert flags.field_flags["topologyManagerScope"] == "--topology-manager-scope"
    assert flags.last("v").value == "4"
    assert flags.unmodelled == ("v",)


def test_config_paths_and_root_dir() -> None:
    flags = parse("--config=/var/lib/kubelet/config.yaml", "--config-dir", "/etc/kubernetes/kubelet.conf.d")
    assert (flags.config_file, flags.config_dir, flags.root_dir) == (
        "/var/lib/kubelet/config.yaml",
        "/etc/kubernetes/kubelet.conf.d",
        "/var/lib/kubelet",
    )
    assert parse("--root-dir=/data/kubelet").root_dir == "/data/kubelet"


def test_scalars_last_wins_maps_accumulate_from_empty() -> None:
    flags = parse(
        "--max-pods=50",
        "--max-pods=250",
        "--kube-reserved=cpu=500m, memory=1Gi",
        "--kube-reserved=memory=2Gi",
        "--feature-gates=CPUManagerPolicyAlphaOptions=true,TopologyManagerPolicyAlphaOptions=false",
        "--feature-gates=CPUManagerPolicyBetaOptions=1",
        "--eviction-hard=memory.available<500Mi,nodefs.available<10%",
        "--enforce-node-allocatable=pods,kube-reserved",
        "--enforce-node-allocatable=system-reserved",
    )
    assert flags.config_fields["maxPods"] == 250
    assert flags.config_fields["kubeReserved"] == {"cpu": "500m", "memory": "2Gi"}
    assert flags.config_fields["featureGates"] == {
        "CPUManagerPolicyAlphaOptions": True,
        "TopologyManagerPolicyAlphaOptions": False,
        "CPUManagerPolicyBetaOptions": True,
    }
    assert flags.config_fields["evictionHard"] == {"memory.available": "500Mi", "nodefs.available": "10%"}
    assert flags.config_fields["enforceNodeAllocatable"] == ["pods", "kube-reserved", "system-reserved"]


def test_policy_option_flags_take_one_pair_per_use() -> None:
    flags = parse(
        "--topology-manager-policy-options=max-allowable-numa-nodes=16",
        "--cpu-manager-policy-options=full-pcpus-only=true,x=y",  # NoSplit: the value is "true,x=y"
    )
    assert flags.config_fields["topologyManagerPolicyOptions"] == {"max-allowable-numa-nodes": "16"}
    assert flags.config_fields["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true,x=y"}


def test_reserved_memory_flag_syntax() -> None:
    flags = parse(
        "--reserved-memory",
        "0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=1024Mi",
        "--reserved-memory=2:memory=100Mi",
        "--reserved-memory=",
    )
    assert flags.config_fields["reservedMemory"] == [
        {"numaNode": 0, "limits": {"memory": "1Gi", "hugepages-1Gi": "2Gi"}},
        {"numaNode": 1, "limits": {"memory": "1Gi"}},
        {"numaNode": 2, "limits": {"memory": "100Mi"}},
    ]


def test_durations_are_held_in_go_form() -> None:
    assert parse("--cpu-manager-reconcile-period=1m").config_fields["cpuManagerReconcilePeriod"] == "1m0s"


def test_bool_flag_does_not_consume_the_next_word() -> None:
    with pytest.raises(ConfigRejected) as err:
        parse("--fail-swap-on", "false")
    assert err.value.message == "unknown command false"
    assert parse("--fail-swap-on=false").config_fields["failSwapOn"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--max-pods=many"], 'invalid argument "many" for "--max-pods" flag: strconv.ParseInt'),
        (["--fail-swap-on=nope"], 'strconv.ParseBool: parsing "nope": invalid syntax'),
        (["--feature-gates=Foo"], "malformed pair, expect string=bool"),
        (["--feature-gates=Foo=yes"], "invalid value of Foo: yes"),
        (["--kube-reserved=cpu"], "malformed pair, expect string=string"),
        (["--eviction-hard=memory.available=1Gi"], "malformed pair, expect string<string"),
        (["--topology-manager-policy-options=prefer-closest-numa-nodes"], "malformed pair"),
        (["--cpu-manager-reconcile-period=10"], 'time: invalid duration "10"'),
        (["--reserved-memory=memory=1Gi"], "the reserved memory has incorrect format"),
        (["--reserved-memory=a:memory=1Gi"], "failed to convert the NUMA node ID"),
        (["--reserved-memory=0:memory"], "the reserved limit has incorrect value"),
        (["--reserved-memory=0:cpu=1"], 'memory type conversion error, unknown type: "cpu"'),
        (["--reserved-memory=0:memory=1GB"], "failed to parse the quantatity"),
        (["--topology-manager-policy"], "flag needs an argument"),
        (["-config=/x"], "unknown shorthand flag: 'c' in -config"),
        (["restricted"], "unknown command restricted"),
        (["--", "x"], "unknown command x"),
        (["--=x"], "bad flag syntax"),
    ],
)
def test_rejected_command_lines(args: list[str], message: str) -> None:
    with pytest.raises(ConfigRejected, match=message):
        parse(*args)


def test_input_shape_errors() -> None:
    with pytest.raises(InputError, match="program path first"):
        parse_kubelet_args(["--v=2"], source="x")
    with pytest.raises(InputError, match="parallel"):
        parse_kubelet_args([KUBELET, "--v=2"], source="x", origins=["a"])


def test_origins_travel_with_uses() -> None:
    flags = parse_kubelet_args(
        [KUBELET, "--topology-manager-policy", "restricted"],
        source="unit",
        origins=["unit", "/etc/default/kubelet", "x"],
    )
    assert flags.last("topology-manager-policy").origin == "/etc/default/kubelet"
