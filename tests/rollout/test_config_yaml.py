"""The rollout's edit of config.yaml changes only what it must: every other byte of the file as read
stays (comments, key order, quoting, blank lines, odd spacing), so the diff shows the changed lines.
The expected files below are worked by hand from the input file."""

from __future__ import annotations

import difflib

import pytest
import yaml

from tmnb.errors import InputError
from tmnb.rollout.config_yaml import edit_config, new_config

#: A hand-kept config: comments above, beside and between keys, four-space maps, a flow list and map,
#: single- and double-quoted values, two spaces after a colon, a blank line, no newline at the end.
ODD = """# kubelet of the gpu pool -- edited by hand, see RUNBOOK-12
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration

# CPU: static with two reserved CPUs
cpuManagerPolicy: 'static'   # pinned workloads
reservedSystemCPUs: "0,8"
topologyManagerPolicy: "none"  # was best-effort until 2026-10
evictionHard:
    memory.available:  "100Mi"
    nodefs.available: 10%
# DNS
clusterDNS:
  - 10.96.0.10
tlsCipherSuites: [TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384]
featureGates: {CPUManagerPolicyAlphaOptions: true}
maxPods: 110
# end of file"""


def _changed(before: str, after: str) -> list[str]:
    """The -/+ lines of a diff, without its headers."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
    return [line for line in lines if line[:1] in "+-" and not line.startswith(("---", "+++"))]


def test_a_changed_field_is_the_only_changed_line() -> None:
    after = edit_config(ODD, {"topologyManagerPolicy": "restricted"}, source="w1:/var/lib/kubelet/config.yaml")
    assert _changed(ODD, after) == [
        '-topologyManagerPolicy: "none"  # was best-effort until 2026-10',
        '+topologyManagerPolicy: "restricted" # was best-effort until 2026-10',  # its quotes and comment kept
    ]
    assert after.replace('"restricted" #', '"none"  #') == ODD  # and nothing else moved


def test_fields_set_to_what_they_are_change_nothing() -> None:
    assert edit_config(ODD, {"reservedSystemCPUs": "0,8", "maxPods": 110}, source="x") == ODD


def test_new_fields_go_at_the_end_in_the_files_indentation() -> None:
    fields = {
        "topologyManagerPolicy": "single-numa-node",
        "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
        "topologyManagerScope": "pod",
    }
    after = edit_config(ODD, fields, source="x")
    assert _changed(ODD, after) == [
        '-topologyManagerPolicy: "none"  # was best-effort until 2026-10',
        '+topologyManagerPolicy: "single-numa-node" # was best-effort until 2026-10',
        "+topologyManagerPolicyOptions:",
        '+    prefer-closest-numa-nodes: "true"',  # a string the kubelet's YAML 1.1 would read as a bool: quoted
        "+topologyManagerScope: pod",
    ]
    assert after.startswith(ODD.replace('"none"  #', '"single-numa-node" #') + "\n")  # a newline added, no more
    assert yaml.safe_load(after) == {**yaml.safe_load(ODD), **fields}


def test_a_list_value_replaces_the_lines_of_the_old_one() -> None:
    text = (
        "kind: KubeletConfiguration\nreservedMemory:\n- numaNode: 0\n  limits:\n    memory: 1Gi\n# keep\nmaxPods: 10\n"
    )
    after = edit_config(text, {"reservedMemory": [{"numaNode": 1, "limits": {"memory": "2Gi"}}]}, source="x")
    assert after == text.replace("numaNode: 0", "numaNode: 1").replace("1Gi", "2Gi")


@pytest.mark.parametrize("value", ["on", "yes", "1e3", "0755", ""])
def test_a_string_yaml_1_1_reads_otherwise_is_quoted(value: str) -> None:
    after = edit_config("kind: KubeletConfiguration\n", {"providerID": value}, source="x")
    assert yaml.safe_load(after)["providerID"] == value


def test_an_empty_file_becomes_a_kubelet_configuration() -> None:
    expected = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntopologyManagerScope: pod\n"
    assert edit_config("", {"topologyManagerScope": "pod"}, source="x") == expected
    assert new_config({"topologyManagerScope": "pod"}) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a: [unclosed", r"w1:/c\.yaml: cannot edit the kubelet config: not YAML \(ParserError\)"),
        ("- a\n- b\n", r"w1:/c\.yaml: cannot edit the kubelet config: expected a mapping at the top"),
        ("a: 1\na: 2\n", r"w1:/c\.yaml: cannot edit the kubelet config: not YAML \(DuplicateKeyError\)"),
    ],
)
def test_a_file_that_cannot_be_edited_is_named(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        edit_config(text, {"maxPods": 1}, source="w1:/c.yaml")
