"""The --config file, --config-dir drop-ins (order, merge patch) and /configz."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.errors import ConfigRejected, InputError
from tmnb.parse.kubelet_config import (
    merge_patch,
    parse_configz,
    parse_kubelet_config,
    parse_kubelet_dropin,
    read_dropin_dir,
)

KUBELET = Path(__file__).parents[1] / "fixtures" / "node" / "kubelet"
HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def test_kubeadm_config_file_with_numa_tuning() -> None:
    doc = parse_kubelet_config((KUBELET / "config.yaml").read_text(), source="/var/lib/kubelet/config.yaml")
    assert doc.kind == "file"
    assert "apiVersion" not in doc.fields and "kind" not in doc.fields
    assert doc.fields["cpuManagerPolicyOptions"] == {"full-pcpus-only": "true"}
    assert doc.fields["reservedMemory"][0] == {"numaNode": 0, "limits": {"memory": "1124Mi"}}
    assert doc.unknown_fields == ()


def test_unknown_and_duplicate_fields_are_recorded() -> None:
    text = HEADER + "topologyManagerPolicyOption:\n  x: y\ncpuManagerPolicy: none\ncpuManagerPolicy: static\n"
    doc = parse_kubelet_config(text, source="c.yaml")
    assert doc.unknown_fields == ("topologyManagerPolicyOption",)
    assert doc.duplicate_fields == ("cpuManagerPolicy (line 6)",)
    assert doc.fields["cpuManagerPolicy"] == "static"


def test_malformed_yaml_names_the_line() -> None:
    with pytest.raises(InputError, match="malformed YAML") as err:
        parse_kubelet_config((KUBELET / "config-malformed.yaml").read_text(), source="bad.yaml")
    assert err.value.line == 4


def test_truncated_yaml_is_rejected() -> None:
    with pytest.raises(InputError, match="malformed YAML"):
        parse_kubelet_config((KUBELET / "config-truncated.yaml").read_text(), source="t.yaml")


@pytest.mark.parametrize("text", ["", "# only a comment\n", "- a\n- b\n", "just a string\n"])
def test_not_a_mapping(text: str) -> None:
    with pytest.raises(InputError, match=r"empty file|expected a KubeletConfiguration mapping"):
        parse_kubelet_config(text, source="c.yaml")


def test_yaml_boolean_option_value_stops_the_kubelet() -> None:
    with pytest.raises(ConfigRejected, match=r"JSON bool \(True\).*cpuManagerPolicyOptions needs a string") as err:
        parse_kubelet_config((KUBELET / "config-unquoted-options.yaml").read_text(), source="c.yaml")
    assert err.value.where == "cpuManagerPolicyOptions.full-pcpus-only"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("reservedSystemCPUs: 0\n", "reservedSystemCPUs needs a string"),
        ("cpuManagerReconcilePeriod: 10\n", "needs a string"),
        ("cpuManagerReconcilePeriod: 10x\n", "invalid duration"),
        ("maxPods: '110'\n", "needs an integer"),
        ("failSwapOn: 'false'\n", "needs true or false"),
        ("featureGates:\n  CPUManagerPolicyAlphaOptions: 'true'\n", "needs true or false"),
        ("enforceNodeAllocatable: pods\n", "list of strings"),
        ("kubeReserved: 1Gi\n", "needs a mapping"),
        ("reservedMemory:\n  numaNode: 0\n", "list of"),
        ("reservedMemory:\n- numaNode: '0'\n  limits: {memory: 1Gi}\n", "integer numaNode"),
        ("reservedMemory:\n- numaNode: 0\n", "limits mapping"),
        ("reservedMemory:\n- numaNode: 0\n  limits: {memory: 1GB}\n", "invalid quantity"),
    ],
)
def test_values_the_kubelet_cannot_decode(body: str, message: str) -> None:
    with pytest.raises(ConfigRejected, match=message):
        parse_kubelet_config(HEADER + body, source="c.yaml")


def test_reserved_memory_quantity_may_be_a_number() -> None:
    doc = parse_kubelet_config(HEADER + "reservedMemory:\n- numaNode: 0\n  limits: {memory: 1073741824}\n", source="c")
    assert doc.fields["reservedMemory"][0]["limits"]["memory"] == 1073741824


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cpuManagerPolicy: static\n", "without apiVersion/kind"),
        ("apiVersion: kubelet.config.k8s.io/v1alpha1\nkind: KubeletConfiguration\n", "refuses apiVersion"),
    ],
)
def test_config_file_needs_api_version_and_kind(text: str, message: str) -> None:
    with pytest.raises(ConfigRejected, match=message):
        parse_kubelet_config(text, source="c.yaml")


def test_dropin_errors_are_the_kubelets() -> None:
    # runtime.NewMissingKindErr, as mergeKubeletConfigurations wraps it (the kubelet quotes the file)
    with pytest.raises(ConfigRejected) as missing:
        parse_kubelet_dropin("topologyManagerPolicy: restricted\n", source="/d/10.conf")
    assert missing.value.message == (
        "failed to load kubelet dropin file, path: /d/10.conf, error: "
        "Object 'Kind' is missing in 'topologyManagerPolicy: restricted\n'"
    )
    with pytest.raises(ConfigRejected, match=r'error: kubelet config file "/d/e.conf" was empty$'):
        parse_kubelet_dropin("", source="/d/e.conf")
    with pytest.raises(ConfigRejected, match=r"Object 'Kind' is missing in '# only a comment\n'$"):
        parse_kubelet_dropin("# only a comment\n", source="/d/c.conf")
    with pytest.raises(
        ConfigRejected, match=r"unknown apiVersion/kind: kubelet\.config\.k8s\.io/v1, Kind=KubeletConfiguration"
    ):
        parse_kubelet_dropin("apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", source="/d/x.conf")


def test_a_duplicated_key_stops_the_kubelet_in_a_dropin_but_not_in_the_file() -> None:
    """Drop-ins are decoded strictly with no lenient fallback: yaml.v2's duplicate-key errors (line of
    the value, depth first) become the kubelet's refusal. The --config file only warns."""
    text = HEADER + "maxPods: 10\nfeatureGates:\n  A: true\n  A: false\nmaxPods: 20\n"
    with pytest.raises(ConfigRejected) as refused:
        parse_kubelet_dropin(text, source="/d/10.conf")
    assert refused.value.message == (
        "failed to load kubelet dropin file, path: /d/10.conf, error: strict decoding error: yaml: unmarshal "
        'errors:\n  line 6: key "A" already set in map\n  line 7: key "maxPods" already set in map'
    )
    assert sorted(parse_kubelet_config(text, source="c.yaml").duplicate_fields) == ["A (line 6)", "maxPods (line 7)"]


def test_a_config_dir_that_stops_the_kubelet_in_its_words(tmp_path: Path) -> None:
    d = tmp_path / "kubelet.conf.d"
    d.mkdir()
    (d / "10-ok.conf").write_text(HEADER + "topologyManagerScope: pod\n")
    (d / "20-empty.conf").write_text("")
    with pytest.raises(ConfigRejected) as refused:
        read_dropin_dir(d, shown="/etc/kubernetes/kubelet.conf.d")
    assert refused.value.message == (
        'failed to merge kubelet configs: failed to walk through kubelet dropin directory "/etc/kubernetes/'
        'kubelet.conf.d": failed to load kubelet dropin file, path: /etc/kubernetes/kubelet.conf.d/20-empty.conf, '
        'error: kubelet config file "/etc/kubernetes/kubelet.conf.d/20-empty.conf" was empty'
    )
    (d / "20-empty.conf").unlink()
    (d / "20-dir.conf").symlink_to(tmp_path)  # WalkDir does not follow it: ReadFile meets a directory
    with pytest.raises(ConfigRejected, match=r"failed to read drop-in kubelet config file \"/d/20-dir\.conf\", "
                       r"error: read /d/20-dir\.conf: is a directory$"):  # fmt: skip
        read_dropin_dir(d, shown="/d")
    (d / "20-dir.conf").unlink()
    (d / "30-type.conf").write_text(HEADER + "maxPods: lots\n")
    with pytest.raises(ConfigRejected, match=r"^failed to merge kubelet configs: failed to unmarshal merged JSON "):
        read_dropin_dir(d, shown="/d")
    with pytest.raises(ConfigRejected, match=r'directory "/nowhere/": lstat /nowhere/: no such file or directory$'):
        read_dropin_dir(tmp_path / "nowhere", shown="/nowhere/")


def test_a_symlinked_config_dir_is_not_walked(tmp_path: Path) -> None:
    """filepath.WalkDir does not follow the root: through a symlink the kubelet reads no drop-in, unless
    the flag ends in a slash."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "10.conf").write_text(HEADER + "topologyManagerPolicy: restricted\n")
    link = tmp_path / "kubelet.conf.d"
    link.symlink_to(real)
    unread = read_dropin_dir(link, shown="/etc/kubelet.conf.d")
    assert unread.docs == () and unread.unread is not None and "is a symlink" in unread.unread
    walked = read_dropin_dir(link, shown="/etc/kubelet.conf.d/")
    assert [d.source for d in walked.docs] == ["/etc/kubelet.conf.d/10.conf"]


def test_dropin_keeps_nulls_for_merge_patch_deletes() -> None:
    doc = parse_kubelet_dropin(HEADER + "featureGates:\n  A: null\ncpuManagerPolicyOptions: null\n", source="d")
    assert doc.fields == {"featureGates": {"A": None}, "cpuManagerPolicyOptions": None}


def test_dropin_directory_order_subdirectories_and_skipped_files() -> None:
    found = read_dropin_dir(KUBELET / "config-dir")
    names = [Path(d.source).relative_to(KUBELET / "config-dir").as_posix() for d in found.docs]
    assert names == ["10-topology.conf", "20-reserved.conf", "sub/50-gates.conf"]
    assert [Path(p).name for p in found.skipped] == ["15-topology.yaml", "README.md"]


def test_walkdir_order_is_by_path_components_not_whole_strings(tmp_path: Path) -> None:
    for name in ("a-b.conf", "a/x.conf", "b.conf", ".hidden.conf", "a.conf.bak", "00.conf"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(HEADER)
    found = read_dropin_dir(tmp_path, shown="/d")
    # WalkDir visits directory "a" before the file "a-b.conf": "a" < "a-b.conf"
    names = ["/d/.hidden.conf", "/d/00.conf", "/d/a/x.conf", "/d/a-b.conf", "/d/b.conf"]
    assert [d.source for d in found.docs] == names
    assert found.skipped == ("/d/a.conf.bak",)


def test_bad_dropin_in_directory_fails_the_whole_directory(tmp_path: Path) -> None:
    (tmp_path / "10-ok.conf").write_text(HEADER + "topologyManagerScope: pod\n")
    (tmp_path / "20-bad.conf").write_text("topologyManagerScope: pod\n")
    with pytest.raises(ConfigRejected, match=r"20-bad\.conf, error: Object 'Kind' is missing"):
        read_dropin_dir(tmp_path)
    with pytest.raises(ConfigRejected, match="no such file or directory"):
        read_dropin_dir(tmp_path / "missing")


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        (
            {"a": 1, "m": {"x": "1", "y": "2"}},
            {"m": {"y": "3", "z": "4"}},
            {"a": 1, "m": {"x": "1", "y": "3", "z": "4"}},
        ),
        ({"m": {"x": "1"}}, {"m": {"x": None}}, {"m": {}}),
        ({"l": [1, 2, 3]}, {"l": [9]}, {"l": [9]}),
        ({"a": 1}, {"a": None}, {}),
        ({"a": {"b": 1}}, {"a": "scalar"}, {"a": "scalar"}),
        ({"a": "scalar"}, {"a": {"b": None, "c": 1}}, {"a": {"c": 1}}),
        ({"a": 1}, ["replace"], ["replace"]),
    ],
)
def test_merge_patch_rfc7386(target: object, patch: object, expected: object) -> None:
    assert merge_patch(target, patch) == expected


def test_configz_fixture() -> None:
    doc = parse_configz((KUBELET / "configz.json").read_text())
    assert doc.kind == "configz"
    assert doc.fields["topologyManagerPolicy"] == "restricted"
    assert doc.fields["cpuManagerReconcilePeriod"] == "10s"
    assert "apiVersion" not in doc.fields
    assert doc.unknown_fields == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ((KUBELET / "configz-truncated.json").read_text(), "truncated or malformed JSON"),
        ('{"cpuManagerPolicy": "static"}', '"kubeletconfig" object'),
        ("[]", '"kubeletconfig" object'),
        ("", "empty file"),
    ],
)
def test_malformed_configz(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_configz(text)


def test_configz_tolerates_fields_from_newer_kubelets() -> None:
    doc = parse_configz('{"kubeletconfig": {"someFutureField": {"a": 1}, "cpuManagerPolicy": "none"}}')
    assert doc.unknown_fields == ("someFutureField",)


def test_any_duration_field_must_parse() -> None:
    with pytest.raises(ConfigRejected, match="invalid duration") as err:
        parse_kubelet_config(HEADER + "syncFrequency: 1 minute\n", source="c.yaml")
    assert err.value.where == "syncFrequency"
