"""Version-aware validation: findings in the kubelet's own words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.cpuset import CPUSet
from tmnb.parse.kubelet_config import parse_configz, parse_kubelet_config, parse_kubelet_dropin, read_dropin_dir
from tmnb.parse.kubelet_flags import parse_kubelet_args
from tmnb.settings.effective import KubeletSettings, effective_settings
from tmnb.settings.validate import Finding, validate_settings
from tmnb.versions import KubeVersion

FIXTURES = Path(__file__).parents[1] / "fixtures" / "node"
HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
V133, V135, V136 = (KubeVersion(1, m, 0) for m in (33, 35, 36))
STATIC_OK = "cpuManagerPolicy: static\nkubeReserved: {cpu: '1'}\n"


def settings(body: str = "", *args: str, version: KubeVersion | None = None) -> KubeletSettings:
    flags = parse_kubelet_args(["/usr/bin/kubelet", *args], source="cmdline") if args else None
    return effective_settings(
        file=parse_kubelet_config(HEADER + body, source="config.yaml"), flags=flags, version=version
    )


def check(body: str = "", *args: str, version: KubeVersion = V136, **facts: object) -> list[Finding]:
    return validate_settings(settings(body, *args, version=version), version=version, **facts)  # type: ignore[arg-type]


def codes(findings: list[Finding]) -> list[str]:
    return [f.code for f in findings]


def only(findings: list[Finding], code: str) -> Finding:
    matching = [f for f in findings if f.code == code]
    assert len(matching) == 1, codes(findings)
    return matching[0]


def test_defaults_are_clean() -> None:
    assert check() == []


def test_findings_carry_version_and_kubelet_text_flag() -> None:
    finding = only(check("topologyManagerPolicy: single-numa\n", version=V133), "topology.policy")
    assert finding == Finding(
        code="topology.policy",
        field="topologyManagerPolicy",
        severity="error",
        message='invalid configuration: topologyManagerPolicy (--topology-manager-policy) "single-numa" '
        'must be one of: ["none" "best-effort" "restricted" "single-numa-node"]',
        kubelet_version="v1.33.0",
        kubelet_text=True,
    )


def test_invalid_scope() -> None:
    assert only(check("topologyManagerScope: Pod\n"), "topology.scope").message == (
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "Pod" '
        'must be one of: "container", or "pod"'
    )


# --- Topology Manager options -----------------------------------------------------------------


def test_options_ignored_with_policy_none_but_the_map_gate_still_applies() -> None:
    # 1.33-1.35: the option-map gate is GA but can still be turned off; run() then refuses any option
    body = "topologyManagerPolicyOptions: {prefer-closest-numa-nodes: 'true'}\n"
    findings = check(body + "featureGates: {TopologyManagerPolicyOptions: false}\n", version=V135)
    assert only(findings, "topology.options-ignored").severity == "warning"
    assert only(findings, "kubelet.rejects").message == (
        "topology manager policy options map[prefer-closest-numa-nodes:true] require feature gates "
        '"TopologyManagerPolicyOptions" enabled'
    )
    assert codes(check("topologyManagerPolicyOptions: {bogus: x}\n")) == ["topology.options-ignored"]


@pytest.mark.parametrize(
    ("version", "options", "message"),
    [
        (
            V133,
            "max-allowable-numa-nodes: '4'",
            'the minimum value of "max-allowable-numa-nodes" should not be less than 8',
        ),
        (V136, "prefer-closest-numa-nodes: 'yes'", 'bad value for option "prefer-closest-numa-nodes"'),
        (
            V136,
            "numa-allocation-strategy: most-allocated",
            'unknown Topology Manager Policy option: "numa-allocation-strategy"',
        ),
    ],
)
def test_topology_options_are_parsed_by_the_kubelet_model(version: KubeVersion, options: str, message: str) -> None:
    findings = check(
        f"topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {{{options}}}\n", version=version
    )
    finding = only(findings, "kubelet.rejects")
    assert finding.message.startswith(message) and finding.kubelet_text


def test_beta_option_needs_its_gate() -> None:
    body = (
        "topologyManagerPolicy: best-effort\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n"
        "featureGates: {TopologyManagerPolicyBetaOptions: false}\n"
    )
    assert only(check(body, version=V133), "kubelet.rejects").message == (
        'topology manager policy beta-level options not enabled, but option "max-allowable-numa-nodes" provided'
    )
    assert "kubelet.rejects" not in codes(check(body, version=V135))  # GA in 1.35


def test_more_numa_nodes_than_the_topology_manager_allows() -> None:
    nodes = range(16)
    assert only(
        check("topologyManagerPolicy: restricted\n", numa_nodes=nodes), "topology.too-many-numa-nodes"
    ).message == ("unsupported on machines with more than 8 NUMA Nodes")
    raised = check(
        "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {max-allowable-numa-nodes: '16'}\n",
        numa_nodes=nodes,
    )
    assert "topology.too-many-numa-nodes" not in codes(raised)
    assert only(raised, "topology.max-numa-above-default").message == (
        "WARNING: the value of max-allowable-numa-nodes is more than the default recommended value"
    )
    assert check(numa_nodes=nodes) == []  # policy none: the limit does not apply


def test_hint_provider_and_option_effect_notes() -> None:
    assert codes(check("topologyManagerPolicy: single-numa-node\n")) == ["topology.no-cpu-memory-hints"]
    body = (
        STATIC_OK
        + "topologyManagerPolicy: single-numa-node\ntopologyManagerPolicyOptions: {prefer-closest-numa-nodes: 'true'}\n"
    )
    assert codes(check(body)) == ["topology.prefer-closest-ineffective"]


def test_a_kubelet_outside_the_modelled_minors_is_judged_as_the_nearest_and_says_so() -> None:
    findings = check(
        "topologyManagerPolicy: restricted\ntopologyManagerPolicyOptions: {x: y}\n", version=KubeVersion(1, 25, 0)
    )
    assert only(findings, "kubelet.unmodelled").message == (
        "kubelet v1.25.0 is outside the modelled minors (1.33, 1.34, 1.35, 1.36, 1.37): predicted as kubelet 1.33, "
        "the nearest"
    )
    assert only(findings, "kubelet.rejects").message == 'unknown Topology Manager Policy option: "x"'


# --- CPU Manager ----------------------------------------------------------------------------------


def test_cpu_policy_is_case_sensitive() -> None:
    # the refusal is the kubelet's text alone (it was suffixed with tmnb's hint, and marked as the
    # kubelet's words); the hint is a finding of its own
    findings = check("cpuManagerPolicy: Static\n")
    finding = only(findings, "cpu.policy")
    assert finding.message == 'unknown policy: "Static"' and finding.kubelet_text
    hint = only(findings, "cpu.policy-case")
    assert hint.message == 'cpuManagerPolicy values are case-sensitive: use "static", not "Static"'
    assert hint.severity == "info" and not hint.kubelet_text


def test_none_policy_refuses_options() -> None:
    # cpumanager.NewManager wraps NewNonePolicy's error ("new none policy error: "); the validator
    # printed it bare, the model's start prints it wrapped, as the kubelet does
    assert only(check("cpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n"), "cpu.options-with-none").message == (
        "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]"
    )


@pytest.mark.parametrize(
    "body",
    [
        "cpuManagerPolicy: static\n",
        "cpuManagerPolicy: static\nkubeReserved: {cpu: '0'}\nsystemReserved: {memory: 1Gi}\n",
    ],
)
def test_static_policy_needs_a_cpu_reservation(body: str) -> None:
    finding = only(check(body), "cpu.static-no-reservation")
    assert finding.message == "[cpumanager] unable to determine reserved CPU resources for static policy"


def test_static_reservation_sources() -> None:
    assert check(STATIC_OK) == []
    assert check("cpuManagerPolicy: static\nreservedSystemCPUs: '0,32'\n") == []
    fractional = check("cpuManagerPolicy: static\nkubeReserved: {cpu: 700m}\nsystemReserved: {cpu: 500m}\n")
    assert (
        only(fractional, "cpu.static-fractional-reservation").message
        == "the static policy reserves whole CPUs: ceil(1200m) = 2"
    )
    both = check("cpuManagerPolicy: static\nreservedSystemCPUs: '0-1'\nkubeReserved: {cpu: '1'}\n")
    assert codes(both) == ["cpu.reserved-cpus-supersedes"]
    # run() refuses the quantity in its words, before any manager exists (tmnb's own text was
    # "kubeReserved.cpu: ..."); the reservation is then unknown, so the static policy's is not judged
    bad = check("cpuManagerPolicy: static\nkubeReserved: {cpu: lots}\n")
    assert codes(bad) == ["config.kube-reserved"]
    assert bad[0].message.startswith('--kube-reserved value failed to parse: failed to parse quantity "lots" for "cpu"')


def test_reserved_cpus_rules() -> None:
    cgroup = check("reservedSystemCPUs: '0'\nkubeReservedCgroup: /kube.slice\n")
    assert only(cgroup, "cpu.reserved-cpus-cgroup").message.startswith(
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup"
    )
    unparsable = only(check("reservedSystemCPUs: '0-a'\n"), "cpu.reserved-cpus-parse")
    assert unparsable.message == (
        "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-a, error: "
        'strconv.Atoi: parsing "a": invalid syntax'
    )
    offline = only(check("reservedSystemCPUs: '0,63'\n", online_cpus=CPUSet.parse("0-61")), "cpu.reserved-cpus-offline")
    assert offline.message == "reserved-cpus: 0,63 is not a subset of online-cpus: 0-61"


def test_cpu_options_go_through_the_kubelet_model() -> None:
    body = STATIC_OK + "cpuManagerPolicyOptions: {full-pcpus-only: 'true', distribute-cpus-across-cores: 'true'}\n"
    body += "featureGates: {CPUManagerPolicyAlphaOptions: true}\n"
    # NewStaticPolicy's errors come wrapped by cpumanager.NewManager (the validator printed them bare)
    assert only(check(body), "kubelet.rejects").message == (
        "new static policy error: static policy options full-pcpus-only and distribute-cpus-across-cores can not "
        "be used at the same time"
    )
    alpha = check(STATIC_OK + "cpuManagerPolicyOptions: {align-by-socket: 'true'}\n")
    assert only(alpha, "kubelet.rejects").message == (
        'new static policy error: CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" '
        "provided"
    )


def test_locked_gate_stops_the_kubelet() -> None:
    # SetDefaults_KubeletConfiguration merges the file's gates and panics on a locked one (defaults.go)
    finding = only(check(STATIC_OK + "featureGates: {CPUManagerPolicyOptions: false}\n"), "config.feature-gates")
    assert finding.message == (
        "panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "
        "cannot set feature gate CPUManagerPolicyOptions to false, feature is locked to true"
    )
    assert finding.severity == "error" and finding.kubelet_text


def test_align_by_socket_incompatibilities() -> None:
    body = (
        STATIC_OK
        + "cpuManagerPolicyOptions: {align-by-socket: 'true'}\nfeatureGates: {CPUManagerPolicyAlphaOptions: true}\n"
    )
    single = check(body + "topologyManagerPolicy: single-numa-node\n")
    assert only(single, "cpu.align-by-socket-single-numa").message == (  # wrapped as NewManager wraps it
        "new static policy error: Topolgy manager single-numa-node policy is incompatible with CPUManager "
        "align-by-socket policy option"
    )
    hardware = check(body, numa_nodes=[0], sockets=2)
    assert only(hardware, "cpu.align-by-socket-hardware").kubelet_text
    assert check(body, numa_nodes=[0, 1, 2, 3], sockets=2) == []


# --- Memory Manager ---------------------------------------------------------------------------------


def test_memory_policy_is_capitalized() -> None:
    # the kubelet's text alone; tmnb's hint is a finding of its own (see the CPU manager's)
    findings = check("memoryManagerPolicy: static\n")
    assert only(findings, "memory.policy").message == 'unknown policy: "static"'
    assert only(findings, "memory.policy-case").message == (
        'memoryManagerPolicy values are case-sensitive: use "Static", not "static"'
    )


def test_static_memory_without_reserved_memory() -> None:
    finding = only(check("memoryManagerPolicy: Static\n"), "memory.reserved-sum")
    assert finding.message == (
        'the total amount "0" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable feature'
    )


def test_docs_example_adds_up() -> None:
    body = (
        "memoryManagerPolicy: Static\nkubeReserved: {memory: 4Gi}\nsystemReserved: {memory: 1Gi}\n"
        "reservedMemory:\n- {numaNode: 0, limits: {memory: 3Gi}}\n- {numaNode: 1, limits: {memory: 2148Mi}}\n"
    )
    assert check(body, numa_nodes=[0, 1]) == []


def test_sum_is_compared_by_value_and_printed_like_go() -> None:
    body = (
        "memoryManagerPolicy: Static\nkubeReserved: {memory: 1Gi}\nsystemReserved: {memory: 1024Mi}\n"
        "evictionHard: {memory.available: 100Mi}\n"
        "reservedMemory:\n- {numaNode: 0, limits: {memory: 1124Mi}}\n- {numaNode: 1, limits: {memory: 1Gi}}\n"
    )
    assert check(body) == []
    short = body.replace("memory: 1124Mi", "memory: 1Gi")
    assert only(check(short), "memory.reserved-sum").message == (
        'the total amount "2Gi" of type "memory" is not equal to the value "2148Mi" '
        "determined by Node Allocatable feature"
    )


def test_hugepages_reservations_must_add_up_too() -> None:
    body = (
        "memoryManagerPolicy: Static\nevictionHard: {memory.available: 100Mi}\n"
        "reservedMemory:\n- {numaNode: 0, limits: {memory: 100Mi, hugepages-1Gi: 1Gi}}\n"
    )
    assert only(check(body), "memory.reserved-sum").message == (
        'the total amount "1Gi" of type "hugepages-1Gi" is not equal to the value "0" '
        "determined by Node Allocatable feature"
    )
    # This test reserved hugepages in systemReserved, which the old validator summed; run()'s
    # parseResourceList reserves only cpu, memory, ephemeral-storage and pid, so the kubelet stops there
    hugepages_reserved = check(body + "systemReserved: {hugepages-1Gi: 1Gi}\n")
    assert only(hugepages_reserved, "config.system-reserved").message == (
        '--system-reserved value failed to parse: cannot reserve "hugepages-1Gi" resource'
    )


def test_percentage_eviction_threshold_needs_the_capacity() -> None:
    body = (
        "memoryManagerPolicy: Static\nevictionHard: {memory.available: 5%}\n"
        "reservedMemory:\n- {numaNode: 0, limits: {memory: 1Gi}}\n"
    )
    assert codes(check(body)) == ["memory.reserved-sum-unchecked"]
    # The kubelet takes the percentage as a float32 (0.05 is 0.0500000007...) and truncates
    # capacity x percentage: 5% of 20Gi is 1073741840 bytes, not 1Gi (the old validator computed
    # exactly and accepted 1Gi; the model's start refuses it, as the kubelet does)
    assert only(check(body, memory_capacity=20 * 1024**3), "memory.reserved-sum").message == (
        'the total amount "1Gi" of type "memory" is not equal to the value "1073741840" '
        "determined by Node Allocatable feature"
    )
    assert check(body.replace("1Gi", "1073741840"), memory_capacity=20 * 1024**3) == []
    assert codes(check(body, memory_capacity=64 * 1024**3)) == ["memory.reserved-sum"]


def test_ignored_eviction_threshold_flag() -> None:
    body = (
        "memoryManagerPolicy: Static\nkubeReserved: {memory: 1Gi}\n"
        "reservedMemory:\n- {numaNode: 0, limits: {memory: 1Gi}}\n"
    )
    assert codes(check(body)) == ["memory.reserved-sum"]
    assert check(body, "--experimental-allocatable-ignore-eviction") == []


def test_reserved_memory_entry_rules() -> None:
    body = "reservedMemory:\n- {numaNode: 0, limits: {cpu: '1', memory: '0'}}\n- {numaNode: 0, limits: {memory: 1Gi}}\n"
    findings = check(body)
    assert [
        f.message for f in findings if f.code.startswith("memory.reserved-") and f.code != "memory.reserved-ignored"
    ] == [
        'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, '
        "only [memory hugepages-<HugePageSize>] is accepted",
        'invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"',
        'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"',
    ]
    assert only(findings, "memory.reserved-ignored").severity == "info"


def test_reserved_memory_on_a_missing_numa_node() -> None:
    body = "memoryManagerPolicy: Static\nreservedMemory:\n- {numaNode: 3, limits: {memory: 100Mi}}\n"
    assert only(check(body, numa_nodes=[0, 1]), "memory.reserved-unknown-numa").message == (
        "the reserved memory configuration references a NUMA node 3 that does not exist on this machine"
    )


# --- where values come from -------------------------------------------------------------------------


def test_fixture_node_running_and_on_disk() -> None:
    kubelet = FIXTURES / "kubelet"
    flags = parse_kubelet_args(
        [
            "/usr/bin/kubelet",
            "--config=/var/lib/kubelet/config.yaml",
            "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
            "--topology-manager-policy=single-numa-node",
        ],
        source="/proc/4242/cmdline",
    )
    layers = {
        "file": parse_kubelet_config((kubelet / "config.yaml").read_text(), source="/var/lib/kubelet/config.yaml"),
        "dropins": read_dropin_dir(kubelet / "config-dir"),
        "flags": flags,
    }
    running = effective_settings(**layers, configz=parse_configz((kubelet / "configz.json").read_text()), version=V133)
    findings = validate_settings(running, version=V133, numa_nodes=[0, 1], sockets=2)
    assert codes(findings) == [
        "dropin.skipped-file",
        "dropin.skipped-file",
        "flag.deprecated",
        "flag.deprecated",
        "flag.overrides-config",
        "configz.drift",
        "cpu.reserved-cpus-supersedes",
    ]
    drift = only(findings, "configz.drift")
    assert drift.message == (
        'the running kubelet (/configz) has topologyManagerPolicy="restricted" but flag --topology-manager-policy '
        'sets "single-numa-node"; the kubelet has not been restarted since that change'
    )
    override = only(findings, "flag.overrides-config")
    assert override.message.startswith(
        '--topology-manager-policy="single-numa-node" overrides topologyManagerPolicy set in '
        '/var/lib/kubelet/config.yaml ("best-effort") and '
    )
    deprecated = [f.message for f in findings if f.code == "flag.deprecated"]
    assert deprecated[1] == (
        "Flag --topology-manager-policy has been deprecated, This parameter should be set via the config file "
        "specified by the Kubelet's --config flag. "
        "See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information."
    )


def test_unknown_duplicate_and_too_new_fields() -> None:
    findings = check("topologyManagerPolicyOption: {a: b}\nmaxPods: 10\nmaxPods: 20\n", version=KubeVersion(1, 33, 0))
    assert only(findings, "config.unknown-field").message == (
        'config.yaml: unknown field "topologyManagerPolicyOption" (did you mean topologyManagerPolicyOptions?); '
        'the kubelet ignores it after logging "Using lenient decoding as strict decoding failed" '
        'err="strict decoding error: unknown field \\"topologyManagerPolicyOption\\""'
    )
    assert only(findings, "config.duplicate-field").field == "maxPods"
    too_new = only(check("memoryReservationPolicy: None\n", version=V135), "config.field-too-new")
    assert too_new.message == "config.yaml: memoryReservationPolicy exists from kubelet 1.36; kubelet 1.35 ignores it"


def test_unknown_field_in_a_dropin_is_dropped_without_a_log_line() -> None:
    dropin = parse_kubelet_dropin(HEADER + "topologyManagerPolcy: restricted\n", source="/etc/kubelet.d/10.conf")
    s = effective_settings(file=parse_kubelet_config(HEADER, source="config.yaml"), dropins=[dropin])
    found = only(validate_settings(s, version=V135), "config.unknown-field")
    assert found.message == (
        '/etc/kubelet.d/10.conf: unknown field "topologyManagerPolcy" (did you mean topologyManagerPolicy?); the '
        "kubelet ignores it without logging anything (drop-ins are merged as plain JSON, and a key that matches no "
        "field is dropped)"
    )
    assert "lenient" not in found.message and found.severity == "warning"


@pytest.mark.parametrize("minor", [33, 34, 35, 36, 37])
def test_config_dir_is_read_by_every_supported_minor(minor: int) -> None:
    version = KubeVersion(1, minor, 0)
    dropin = parse_kubelet_dropin(HEADER + "maxPods: 200\n", source="/etc/kubernetes/kubelet.conf.d/10.conf")
    s = effective_settings(
        flags=parse_kubelet_args(["/usr/bin/kubelet", "--config-dir=/etc/kubernetes/kubelet.conf.d"], source="c"),
        dropins=[dropin],
        version=version,
    )
    assert [f.code for f in validate_settings(s, version=version) if f.code.startswith("dropin.")] == []


def test_cpu_options_under_none_are_refused_by_the_none_policy() -> None:
    # the CPU option-map gate is GA and locked in every supported minor, so run() checks none
    body = "cpuManagerPolicyOptions: {full-pcpus-only: 'true'}\n"
    finding = only(check(body, version=V133), "cpu.options-with-none")
    assert (
        finding.message == "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]"
    )


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ({"topologyManagerPolcy": "restricted"}, "did you mean topologyManagerPolicy"),
        ({"cpuManagerPolicyOption": {}}, "did you mean cpuManagerPolicyOptions"),
        ({"zzz": 1}, "not a KubeletConfiguration v1beta1 field"),
        ({"kind": "KubeletConfiguration"}, "part of the file"),
        (
            {"topologyManagerPolicy": "strict"},
            r"'strict' is not one of none, best-effort, restricted, single-numa-node; "
            r"did you mean restricted\?",
        ),
        (
            {"topologyManagerScope": "Pod"},
            r"target.topologyManagerScope: 'Pod' is not one of container, pod; did you mean pod",
        ),
        ({"cpuManagerPolicy": "Static"}, "did you mean static"),
        ({"memoryManagerPolicy": "dynamic"}, r"'dynamic' is not one of None, Static$"),
    ],
)
def test_unknown_target_fields_are_refused_with_the_closest_name(target, message):
    from tmnb.errors import InputError
    from tmnb.settings.target import check_target_fields

    with pytest.raises(InputError, match=message):
        check_target_fields(target)
    check_target_fields({"topologyManagerPolicy": "restricted", "reservedSystemCPUs": "0"})


def test_cli_refuses_a_misspelled_field_with_exit_2(capsys):
    from tmnb.cli.main import main

    assert main(["whatif", "--snapshot", "sample", "--set", "topologyManagerPolcy=restricted"]) == 2
    assert "did you mean topologyManagerPolicy" in capsys.readouterr().err
