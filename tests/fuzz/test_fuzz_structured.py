"""Documents of the right shape with values of every wrong type: kubelet config files, drop-ins and
/configz, command lines, state files and lscpu JSON.

What a parser accepts must also get through the settings layer and validation without an
exception outside ``TmnbError``: a value the parser let through is one the rest of tmnb must handle.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml
from fuzzing import HOSTILE, fuzz, refused_naming, survive
from hypothesis import given
from hypothesis import strategies as st

from tmnb.cpuset import CPUSet
from tmnb.parse.kubelet_config import KubeletConfigDoc, parse_configz, parse_kubelet_config, parse_kubelet_dropin
from tmnb.parse.kubelet_fields import API_VERSION, FIELD_TYPES, KIND
from tmnb.parse.kubelet_flags import BOOL_FLAGS, CONFIG_FLAGS, KubeletFlags, parse_kubelet_args
from tmnb.parse.lscpu import parse_lscpu_summary
from tmnb.parse.state_files import parse_cpu_manager_state, parse_device_checkpoint, parse_memory_manager_state
from tmnb.settings.effective import effective_settings
from tmnb.settings.validate import validate_settings
from tmnb.versions import KubeVersion

pytestmark = pytest.mark.fuzz

SRC = "/fuzz/doc"
VERSION = KubeVersion(1, 36)

#: Values as they show up in real files: policy names, cpu lists, quantities, option maps.
PLAUSIBLE = st.sampled_from(
    [
        "none", "static", "Static", "None", "restricted", "single-numa-node", "best-effort", "pod", "container",
        "0-3", "0,32", "1Gi", "500m", "10s", "1m0s", "true", "false", "systemd", "cgroupfs",
        {"full-pcpus-only": "true"}, {"prefer-closest-numa-nodes": "true"}, {"max-allowable-numa-nodes": "16"},
        {"cpu": "1", "memory": "1Gi"}, [{"numaNode": 0, "limits": {"memory": "1Gi"}}], ["pods"], 110, -1,
    ]
)  # fmt: skip
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8) | HOSTILE
JSON = st.recursive(
    SCALARS | PLAUSIBLE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8) | HOSTILE, inner, max_size=3),
    max_leaves=8,
)


def _settings_survive(**layers: Any) -> None:
    settings = survive(effective_settings, **layers)
    if not refused_naming(settings, SRC, "--"):
        survive(validate_settings, settings, version=VERSION, numa_nodes=[0, 1], online_cpus=CPUSet(range(8)))


@st.composite
def config_docs(draw: st.DrawFn) -> dict[str, Any]:
    names = st.sampled_from(sorted(FIELD_TYPES)) | st.text(max_size=10)
    body = draw(st.dictionaries(names, PLAUSIBLE | JSON, max_size=5))
    head = draw(st.sampled_from([{"apiVersion": API_VERSION, "kind": KIND}, {"kind": KIND}, {}]))
    return {**head, **body}


@fuzz
@given(config_docs(), st.sampled_from(["yaml", "json"]))
def test_kubelet_config_of_any_values(doc: dict[str, Any], form: str) -> None:
    text = yaml.safe_dump(doc) if form == "yaml" else json.dumps(doc)
    for parse, layer in ((parse_kubelet_config, "file"), (parse_kubelet_dropin, "dropins")):
        parsed = survive(parse, text, source=SRC)
        if not refused_naming(parsed, SRC):
            assert isinstance(parsed, KubeletConfigDoc)
            _settings_survive(**{layer: parsed if layer == "file" else [parsed]})
    configz = survive(parse_configz, json.dumps({"kubeletconfig": doc}), source=SRC)
    if not refused_naming(configz, SRC):
        _settings_survive(configz=configz)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    argv = ["/usr/bin/kubelet"]
    names = st.sampled_from(sorted(CONFIG_FLAGS) + sorted(BOOL_FLAGS) + ["config", "config-dir", "root-dir", "v"])
    for _ in range(draw(st.integers(0, 5))):
        name = draw(names | st.text(max_size=6))
        value = draw(st.sampled_from(["0-3", "static", "a=b,c=d", "memory.available<100Mi", "1Gi"]) | HOSTILE)
        shape = draw(st.sampled_from(["--{n}={v}", "--{n} {v}", "-{n}={v}", "--{n}", "{v}"]))
        argv += shape.format(n=name, v=value).split(" ", 1)
    return argv


@fuzz
@given(command_lines())
def test_kubelet_command_lines(argv: list[str]) -> None:
    flags = survive(parse_kubelet_args, argv, source=SRC)
    if not refused_naming(flags, SRC):
        assert isinstance(flags, KubeletFlags)
        _settings_survive(flags=flags)


CHECKSUM = st.integers(-(2**70), 2**70) | SCALARS


@fuzz
@given(
    st.fixed_dictionaries(
        {"policyName": st.sampled_from(["static", "none"]) | SCALARS, "defaultCpuSet": st.just("0-7") | JSON},
        optional={"entries": JSON, "checksum": CHECKSUM, "podEntries": JSON},
    ),
    st.fixed_dictionaries(
        {"policyName": st.sampled_from(["Static", "None"]) | SCALARS},
        optional={"machineState": JSON, "entries": JSON, "checksum": CHECKSUM},
    ),
    st.fixed_dictionaries(
        {"Data": st.fixed_dictionaries({}, optional={"PodDeviceEntries": JSON, "RegisteredDevices": JSON}) | JSON},
        optional={"Checksum": CHECKSUM},
    ),
)
def test_state_files_of_any_values(cpu: dict[str, Any], memory: dict[str, Any], devices: dict[str, Any]) -> None:
    for parse, doc in (
        (parse_cpu_manager_state, cpu),
        (parse_memory_manager_state, memory),
        (parse_device_checkpoint, devices),
    ):
        refused_naming(survive(parse, json.dumps(doc), source=SRC), SRC)


LSCPU_LABELS = st.sampled_from(
    [
        "CPU(s):", "On-line CPU(s) list:", "Off-line CPU(s) list:", "Thread(s) per core:", "Core(s) per socket:",
        "Socket(s):", "NUMA node(s):", "NUMA node0 CPU(s):", "NUMA node1 CPU(s):", "Model name:", "Caches:",
        "NUMA:", "Architecture:", "Core(s) per cluster:", "Cluster(s):",
    ]
)  # fmt: skip
LSCPU_ENTRIES = st.recursive(
    st.fixed_dictionaries({"field": LSCPU_LABELS | SCALARS, "data": st.sampled_from(["0-3", "2", "1"]) | SCALARS}),
    lambda inner: st.fixed_dictionaries(
        {"field": LSCPU_LABELS, "data": st.none()}, optional={"children": st.lists(inner, max_size=3) | JSON}
    ),
    max_leaves=8,
)


@fuzz
@given(st.lists(LSCPU_ENTRIES, max_size=8))
def test_lscpu_of_any_values(entries: list[Any]) -> None:
    refused_naming(survive(parse_lscpu_summary, json.dumps({"lscpu": entries}), source=SRC), SRC)
