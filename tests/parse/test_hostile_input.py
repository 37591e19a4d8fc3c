"""Files as users really hand them over: other encodings, numbers no field can hold, whole devices.

Each must end in a ``tmnb`` error naming the file (or an issue on the node, the rest read), never a
``UnicodeDecodeError``/``ValueError`` traceback or a value that looks fine but is not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from factories import layered_node
from tmnb.errors import ConfigRejected, InputError
from tmnb.parse.documents import load_json
from tmnb.parse.files import read_capped, read_text
from tmnb.parse.kubelet_config import parse_kubelet_config
from tmnb.parse.sysfs import parse_distance, parse_hugepages, parse_node_meminfo
from tmnb.sources.node_render import DROPIN_DIR, FLAGS_ENV, KUBELET_CONFIG, UNIT, UNIT_DROPIN, write_node_root
from tmnb.sources.node_root import read_node_root

LATIN1 = "topologyManagerPolicy: restricted # réglé par l'équipe\n".encode("latin-1")


@pytest.fixture
def node_root(tmp_path: Path) -> Path:
    return write_node_root(layered_node(), tmp_path / "w1")


def _issue(node, source: str) -> str:
    messages = [i.message for i in node.issues if i.source == source]
    assert messages, f"no {source!r} issue in {[(i.source, i.message) for i in node.issues]}"
    return messages[0]


# ---------------------------------------------------------------------------------------------
# Non-UTF-8 bytes in node files: an issue naming the file and the byte, the rest of the node read


def test_latin1_kubelet_config_is_an_issue(node_root: Path) -> None:
    path = node_root / KUBELET_CONFIG
    path.write_bytes(path.read_bytes() + LATIN1)
    node = read_node_root(node_root, name="w1")
    message = _issue(node, "kubelet config")
    # the kubelet cannot load the file and exits: its refusal, naming the file
    assert message.startswith("failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: ")
    assert "not UTF-8 text: byte 0xe9 at offset" in message
    assert node.numa and node.kubelet.flags  # the rest is still there


def test_latin1_env_file_is_an_issue(node_root: Path) -> None:
    path = node_root / FLAGS_ENV
    path.write_bytes(path.read_bytes() + b"# \xe9quipe\n")
    node = read_node_root(node_root, name="w1")
    message = _issue(node, "kubelet unit")
    assert message.startswith("/var/lib/kubelet/kubeadm-flags.env:2: not UTF-8 text: byte 0xe9 at offset")
    assert node.kubelet.settings["cpuManagerPolicy"].source == "file"  # the config file was still read


@pytest.mark.parametrize("unit", [UNIT, UNIT_DROPIN])
def test_latin1_systemd_unit_is_an_issue(node_root: Path, unit: str) -> None:
    path = node_root / unit
    path.write_bytes(b"# \xff\xfe\n" + path.read_bytes())
    message = _issue(read_node_root(node_root, name="w1"), "kubelet unit")
    assert message.startswith(f"/{unit}:1: not UTF-8 text: byte 0xff at offset 2")


def test_latin1_dropin_is_an_issue(node_root: Path) -> None:
    dropin = next((node_root / DROPIN_DIR).glob("*.conf"))
    dropin.write_bytes(dropin.read_bytes() + LATIN1)
    node = read_node_root(node_root, name="w1")
    assert "not UTF-8 text: byte 0xe9" in _issue(node, "kubelet drop-ins")
    assert dropin.name in _issue(node, "kubelet drop-ins")


def test_non_utf8_checkpoint_names_the_byte(node_root: Path) -> None:
    state = node_root / "var/lib/kubelet/cpu_manager_state"
    state.write_bytes(state.read_bytes().replace(b'"policyName"', b'"policy\xc3Name"'))
    message = _issue(read_node_root(node_root, name="w1"), "cpu_manager_state")
    assert message.startswith("/var/lib/kubelet/cpu_manager_state:1: not UTF-8 text: byte 0xc3 at offset 8")


def test_read_text_reports_line_and_offset(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"ok\nok\nbad \x80 here\n")
    with pytest.raises(InputError) as err:
        read_text(path, what="a kubelet config")
    assert str(err.value) == f"{path}:3: not UTF-8 text: byte 0x80 at offset 10; expected a kubelet config"


# ---------------------------------------------------------------------------------------------
# Size caps


def test_device_as_node_file_is_capped() -> None:
    with pytest.raises(InputError, match="/dev/zero: larger than 64 KiB; expected a sysfs file"):
        read_capped("/dev/zero", limit=64 << 10, what="a sysfs file")


def test_node_file_that_is_a_device_becomes_an_issue(node_root: Path) -> None:
    config = node_root / KUBELET_CONFIG
    config.unlink()
    config.symlink_to("/dev/zero")
    message = _issue(read_node_root(node_root, name="w1"), "kubelet config")
    assert "larger than 16 MiB; expected a KubeletConfiguration file" in message


# ---------------------------------------------------------------------------------------------
# Numbers: 10**400, thousands of digits, negatives


def test_kubelet_config_int_beyond_int32_is_refused() -> None:
    text = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: " + "1" + "0" * 400
    with pytest.raises(ConfigRejected) as err:
        parse_kubelet_config(text, source="config.yaml")
    assert err.value.where == "maxPods"
    assert "a 401-digit number into KubeletConfiguration.maxPods, a int32" in str(err.value)


def test_kubelet_config_int_of_thousands_of_digits_is_an_input_error() -> None:
    text = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: " + "9" * 5000
    with pytest.raises(InputError, match=r"config\.yaml: a number in the file is out of range"):
        parse_kubelet_config(text, source="config.yaml")


def test_json_integer_of_thousands_of_digits_does_not_crash() -> None:
    doc = load_json('{"checksum": ' + "9" * 5000 + "}", source="x", expected="a checkpoint")
    assert repr(doc["checksum"]) == "<a 5000-digit number>"


def test_meminfo_value_beyond_uint64_is_refused() -> None:
    text = "Node 0 MemTotal: " + "9" * 30 + " kB\nNode 0 MemFree: 1 kB\n"
    with pytest.raises(InputError, match="node0/meminfo:1: expected a MemTotal value between 0 and"):
        parse_node_meminfo(text, node_id=0, source="node0/meminfo")


def test_meminfo_of_thousands_of_digits_is_refused_not_a_crash() -> None:
    text = "Node 0 MemTotal: " + "9" * 5000 + " kB\n"
    with pytest.raises(InputError, match="5000-digit number"):
        parse_node_meminfo(text, node_id=0, source="node0/meminfo")


def test_distance_beyond_a_slit_byte_is_refused() -> None:
    with pytest.raises(InputError, match="expected a NUMA distance between 0 and 255, got 100000"):
        parse_distance("10 100000", source="node0/distance")
    with pytest.raises(InputError, match="expected whitespace-separated integers"):
        parse_distance("10 " + "2" * 5000, source="node0/distance")


def test_hugepage_count_of_thousands_of_digits_is_refused() -> None:
    files = {"nr_hugepages": "9" * 5000, "free_hugepages": "0", "surplus_hugepages": "0"}
    with pytest.raises(InputError, match="nr_hugepages: expected a page count between 0 and"):
        parse_hugepages("hugepages-2048kB", files, source="node0/hugepages")


def test_latin1_meminfo_is_an_issue_and_the_node_is_kept(node_root: Path) -> None:
    meminfo = node_root / "sys/devices/system/node/node1/meminfo"
    meminfo.write_bytes(meminfo.read_bytes() + b"Node 1 Caf\xe9: 0 kB\n")
    node = read_node_root(node_root, name="w1")
    message = _issue(node, "numa")
    assert message.startswith("/sys/devices/system/node/node1/meminfo:5: not UTF-8 text: byte 0xe9 at offset")
    assert [z.memory_total for z in node.numa] == [64 << 30, 0]  # node 1's memory is unknown, node 0 is read
    assert node.cpus  # the CPU topology is still there


def test_bundle_with_non_utf8_command_outputs_is_read(node_root: Path) -> None:
    import io
    import tarfile

    from tmnb.sources.node import read_bundle

    (node_root / "tmnb").mkdir()
    (node_root / "tmnb" / "errors.txt").write_text("")
    (node_root / "tmnb" / "lscpu.txt").write_bytes("Architecture: x86_64\nModell: Xéon\n".encode("latin-1"))
    (node_root / "tmnb" / "cpusets-v2.txt").write_bytes(b"/kubepods.slice/\xff\xfe:0-3\n")
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        tar.add(node_root, arcname=".")
    node = read_bundle(out.getvalue(), name="w1").node
    (lscpu,) = [i for i in node.issues if i.source == "lscpu"]
    assert "lscpu:2: not UTF-8 text: byte 0xe9" in lscpu.message
    assert node.numa and node.cpus
