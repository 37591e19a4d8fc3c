"""Policy option parsing: kubelet texts, each minor's maturity, feature gates."""

from __future__ import annotations

import pytest

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.options import (
    CPUManagerOptions,
    TopologyManagerOptions,
    parse_cpu_manager_options,
    parse_topology_manager_options,
)
from tmnb.kubelet.profiles import STAGE_GATES, profile

P = profile


def rejected(func, *args, **kwargs) -> str:
    with pytest.raises(ConfigRejected) as info:
        func(*args, **kwargs)
    return str(info.value)


class TestTopologyOptions:
    def test_defaults(self):
        assert parse_topology_manager_options({}) == TopologyManagerOptions(False, 8)

    def test_both_options(self):
        opts = parse_topology_manager_options({"prefer-closest-numa-nodes": "True", "max-allowable-numa-nodes": "12"})
        assert opts == TopologyManagerOptions(prefer_closest_numa=True, max_allowable_numa_nodes=12)

    @pytest.mark.parametrize("text", ["1", "t", "T", "TRUE", "true", "True"])
    def test_go_parse_bool_true(self, text):
        assert parse_topology_manager_options({"prefer-closest-numa-nodes": text}).prefer_closest_numa

    @pytest.mark.parametrize("text", ["0", "f", "F", "FALSE", "false", "False"])
    def test_go_parse_bool_false(self, text):
        assert not parse_topology_manager_options({"prefer-closest-numa-nodes": text}).prefer_closest_numa

    @pytest.mark.parametrize("text", ["yes", "tRUE", " true", "", "on"])
    def test_bad_bool(self, text):
        q = '"' + text + '"'
        assert rejected(parse_topology_manager_options, {"prefer-closest-numa-nodes": text}) == (
            f'bad value for option "prefer-closest-numa-nodes": strconv.ParseBool: parsing {q}: invalid syntax'
        )

    def test_unknown_option(self):
        assert (
            rejected(parse_topology_manager_options, {"numa-allocation-strategy": "most-allocated"})
            == 'unknown Topology Manager Policy option: "numa-allocation-strategy"'
        )

    @pytest.mark.parametrize("text", ["eight", " 9", "9 ", "1_0", "0x10", "", "12.0"])
    def test_bad_integer(self, text):
        q = '"' + text + '"'
        assert rejected(parse_topology_manager_options, {"max-allowable-numa-nodes": text}) == (
            'unable to convert policy option to integer "max-allowable-numa-nodes": '
            f"strconv.Atoi: parsing {q}: invalid syntax"
        )

    def test_integer_out_of_range(self):
        assert rejected(parse_topology_manager_options, {"max-allowable-numa-nodes": "9" * 20}).endswith(
            ": value out of range"
        )

    @pytest.mark.parametrize("text", ["7", "0", "-8", "true"])
    def test_below_minimum_or_not_int(self, text):
        message = rejected(parse_topology_manager_options, {"max-allowable-numa-nodes": text})
        if text == "true":
            assert message.startswith("unable to convert policy option to integer")
        else:
            assert message == 'the minimum value of "max-allowable-numa-nodes" should not be less than 8'

    @pytest.mark.parametrize(("text", "value"), [("8", 8), ("+16", 16), ("0064", 64)])
    def test_integer_forms(self, text, value):
        assert parse_topology_manager_options({"max-allowable-numa-nodes": text}).max_allowable_numa_nodes == value

    def test_quote_escapes_like_go(self):
        assert rejected(parse_topology_manager_options, {'a"b\n': "x"}) == (
            'unknown Topology Manager Policy option: "a\\"b\\n"'
        )

    def test_beta_option_needs_beta_gate(self):
        # 1.33/1.34: max-allowable-numa-nodes is beta (topologymanager/policy_options.go), and the
        # topology manager words the refusal in lower case
        msg = rejected(
            parse_topology_manager_options,
            {"max-allowable-numa-nodes": "8"},
            kubelet=P(33),
            feature_gates={"TopologyManagerPolicyBetaOptions": False},
        )
        assert msg == (
            'topology manager policy beta-level options not enabled, but option "max-allowable-numa-nodes" provided'
        )

    def test_ga_option_ignores_beta_gate(self):
        opts = parse_topology_manager_options(
            {"max-allowable-numa-nodes": "10"}, kubelet=P(35), feature_gates={"TopologyManagerPolicyBetaOptions": False}
        )
        assert opts.max_allowable_numa_nodes == 10

    @pytest.mark.parametrize("minor", [33, 34, 35])
    def test_map_gate_off_refuses_any_option_while_unlocked(self, minor):
        # TopologyManagerPolicyOptions is GA but not locked before 1.36: off, run() refuses every option
        msg = rejected(
            parse_topology_manager_options,
            {"prefer-closest-numa-nodes": "1", "b": "2"},
            kubelet=P(minor),
            feature_gates={"TopologyManagerPolicyOptions": False},
        )
        assert msg == (
            "topology manager policy options map[b:2 prefer-closest-numa-nodes:1] require feature gates "
            '"TopologyManagerPolicyOptions" enabled'
        )

    def test_malformed_input_is_input_error_not_config_rejected(self):
        with pytest.raises(InputError, match="prefer-closest-numa-nodes") as info:
            parse_topology_manager_options({"prefer-closest-numa-nodes": True})  # type: ignore[dict-item]
        assert not isinstance(info.value, ConfigRejected)


class TestCPUOptions:
    def test_all_false_by_default(self):
        assert parse_cpu_manager_options({}) == CPUManagerOptions()

    def test_stable_and_beta(self):
        opts = parse_cpu_manager_options(
            {
                "full-pcpus-only": "true",
                "strict-cpu-reservation": "true",
                "distribute-cpus-across-numa": "true",
            }
        )
        assert opts.full_pcpus_only and opts.strict_cpu_reservation and opts.distribute_cpus_across_numa
        assert not opts.align_by_socket

    def test_alpha_needs_gate(self):
        assert (
            rejected(parse_cpu_manager_options, {"align-by-socket": "true"})
            == 'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided'
        )
        opts = parse_cpu_manager_options(
            {"align-by-socket": "true"}, feature_gates={"CPUManagerPolicyAlphaOptions": True}
        )
        assert opts.align_by_socket

    def test_beta_needs_gate(self):
        assert rejected(
            parse_cpu_manager_options,
            {"distribute-cpus-across-numa": "true"},
            feature_gates={"CPUManagerPolicyBetaOptions": False},
        ) == ('CPU Manager Policy Beta-level Options not enabled, but option "distribute-cpus-across-numa" provided')

    def test_unknown(self):
        assert rejected(parse_cpu_manager_options, {"spread": "true"}) == 'unknown CPU Manager Policy option: "spread"'

    def test_bad_value(self):
        assert rejected(parse_cpu_manager_options, {"full-pcpus-only": "yes"}) == (
            'bad value for option "full-pcpus-only": strconv.ParseBool: parsing "yes": invalid syntax'
        )

    @pytest.mark.parametrize(
        ("a", "b"),
        [
            ("full-pcpus-only", "distribute-cpus-across-cores"),
            ("distribute-cpus-across-numa", "distribute-cpus-across-cores"),
            ("prefer-align-cpus-by-uncorecache", "distribute-cpus-across-cores"),
            ("prefer-align-cpus-by-uncorecache", "distribute-cpus-across-numa"),
        ],
    )
    def test_exclusions(self, a, b):
        gates = {"CPUManagerPolicyAlphaOptions": True}
        msg = rejected(parse_cpu_manager_options, {b: "true", a: "true"}, feature_gates=gates)
        assert msg == f"static policy options {a} and {b} can not be used at the same time"
        # false values never conflict
        parse_cpu_manager_options({a: "true", b: "false"}, feature_gates=gates)

    def test_uncorecache_beta_in_1_34_alpha_in_1_33(self):
        assert parse_cpu_manager_options({"prefer-align-cpus-by-uncorecache": "true"}, kubelet=P(34))
        assert rejected(parse_cpu_manager_options, {"prefer-align-cpus-by-uncorecache": "true"}, kubelet=P(33)) == (
            'CPU Manager Policy Alpha-level Options not enabled, but option "prefer-align-cpus-by-uncorecache" provided'
        )


class TestMaturityTable:
    @pytest.mark.parametrize(
        ("manager", "name", "minor", "maturity"),
        [  # policy_options.go of each minor's tree
            ("topology", "prefer-closest-numa-nodes", 33, "ga"),
            ("topology", "max-allowable-numa-nodes", 33, "beta"),
            ("topology", "max-allowable-numa-nodes", 34, "beta"),
            ("topology", "max-allowable-numa-nodes", 35, "ga"),
            ("cpu", "full-pcpus-only", 33, "ga"),
            ("cpu", "distribute-cpus-across-numa", 33, "beta"),
            ("cpu", "distribute-cpus-across-numa", 37, "beta"),
            ("cpu", "align-by-socket", 36, "alpha"),
            ("cpu", "distribute-cpus-across-cores", 33, "alpha"),
            ("cpu", "strict-cpu-reservation", 34, "beta"),
            ("cpu", "strict-cpu-reservation", 35, "ga"),
            ("cpu", "prefer-align-cpus-by-uncorecache", 33, "alpha"),
            ("cpu", "prefer-align-cpus-by-uncorecache", 35, "beta"),
            ("cpu", "prefer-align-cpus-by-uncorecache", 36, "ga"),
            ("cpu", "no-such-option", 36, None),
        ],
    )
    def test_option_maturity(self, manager, name, minor, maturity):
        assert P(minor).option_maturity(manager, name) == maturity

    def test_gates(self):
        assert STAGE_GATES[("topology", "alpha")] == "TopologyManagerPolicyAlphaOptions"
        assert STAGE_GATES[("cpu", "beta")] == "CPUManagerPolicyBetaOptions"
        # unset, a gate takes its default in that minor; a gate the minor lacks is off
        assert P(36).gate_on("TopologyManagerPolicyAlphaOptions", None) is False
        assert P(36).gate_on("CPUManagerPolicyBetaOptions", None) is True
        assert P(36).gate_on("NoSuchGate", {}) is False
        assert P(35).gate_on("TopologyManagerPolicyOptions", {"TopologyManagerPolicyOptions": False}) is False
