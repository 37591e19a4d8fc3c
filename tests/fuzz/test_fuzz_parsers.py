"""Every parser of node artifacts, fed real captures with hostile edits and arbitrary text.

A parser answers or refuses with a ``TmnbError`` naming the file it was given; it never raises
anything else and never hangs. The seeds are the real captures under tests/fixtures/node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fuzzing import fuzz, mutated, refused_naming, survive
from hypothesis import example, given
from hypothesis import strategies as st

from tmnb.cpuset import CPUSet
from tmnb.parse.cgroup import parse_kube_cgroup_path
from tmnb.parse.duration import parse_go_duration
from tmnb.parse.klog import parse_kubelet_log
from tmnb.parse.kubelet_config import parse_configz, parse_kubelet_config, parse_kubelet_dropin
from tmnb.parse.kubelet_flags import parse_kubelet_args, split_proc_cmdline
from tmnb.parse.lscpu import parse_lscpu_summary
from tmnb.parse.quantity import Quantity
from tmnb.parse.state_files import parse_cpu_manager_state, parse_device_checkpoint, parse_memory_manager_state
from tmnb.parse.sysfs import hugepage_size, parse_distance, parse_hugepages, parse_node_meminfo
from tmnb.parse.systemd import parse_env_file, parse_systemd_units

pytestmark = pytest.mark.fuzz

NODE = Path(__file__).resolve().parents[1] / "fixtures" / "node"
SRC = "/fuzz/input"  # every refusal must name the file it was given
REFERENCE = datetime(2026, 3, 1, tzinfo=UTC)


def _seeds(*patterns: str) -> tuple[str, ...]:
    files = sorted(p for pattern in patterns for p in NODE.glob(pattern) if p.is_file())
    assert files, patterns
    return tuple(p.read_bytes().decode("utf-8", "replace") for p in files)


@dataclass(frozen=True)
class Case:
    name: str
    seeds: tuple[str, ...] = field(repr=False)
    parse: Callable[[str], object] = field(repr=False)
    names_source: bool = True


def _hugepages(text: str) -> object:
    name, _, rest = text.partition("\n")
    counts = rest.split("\n")
    files = dict(zip(("nr_hugepages", "free_hugepages", "surplus_hugepages"), counts, strict=False))
    return parse_hugepages(name, files, source=SRC)


def _unit(text: str) -> object:
    unit, _, env = text.partition("\n#ENV\n")
    return parse_systemd_units([(SRC, unit)], env_files={ENV_FILE: env})


def _argv(text: str) -> object:
    return parse_kubelet_args(text.split("\n"), source=SRC)


ENV_FILE = "/var/lib/kubelet/kubeadm-flags.env"  # the unit names it: a refusal may name either file
UNIT_SEED = tuple(
    unit + "\n#ENV\n" + env
    for unit in _seeds("kubelet/systemd/10-kubeadm.conf")
    for env in _seeds("kubelet/systemd/kubeadm-flags.env")
)
ARGV_SEED = ("\n".join(split_proc_cmdline((NODE / "kubelet/proc-cmdline.bin").read_bytes(), source=SRC)),)

CASES = [
    Case("lscpu summary", _seeds("lscpu/*.txt", "lscpu/*.json", "util-linux/lscpu-*"),
         lambda t: parse_lscpu_summary(t, source=SRC)),
    Case("kubelet config", _seeds("kubelet/config*.yaml"), lambda t: parse_kubelet_config(t, source=SRC)),
    Case("kubelet drop-in", _seeds("kubelet/config-dir/*.conf", "kubelet/config-dir/*/*.conf"),
         lambda t: parse_kubelet_dropin(t, source=SRC)),
    Case("configz", _seeds("kubelet/configz*.json"), lambda t: parse_configz(t, source=SRC)),
    Case("kubelet flags", ARGV_SEED, _argv),
    Case("proc cmdline", ARGV_SEED, lambda t: split_proc_cmdline(t.replace("\n", "\0"), source=SRC)),
    Case("systemd units", UNIT_SEED, _unit),
    Case("env file", _seeds("kubelet/systemd/*.env", "kubelet/systemd/etc-default-kubelet"),
         lambda t: parse_env_file(t, source=SRC)),
    Case("cpu_manager_state", _seeds("state/cpu_manager_state*"), lambda t: parse_cpu_manager_state(t, source=SRC)),
    Case("memory_manager_state", _seeds("state/memory_manager_state*"),
         lambda t: parse_memory_manager_state(t, source=SRC)),
    Case("device checkpoint", _seeds("state/kubelet_internal_checkpoint*"),
         lambda t: parse_device_checkpoint(t, source=SRC)),
    Case("kube cgroup path", tuple(line.partition("::")[2] or line for line in _seeds("cgroup/proc-pid-cgroup.v2")),
         parse_kube_cgroup_path, names_source=False),
    Case("node meminfo", _seeds("sysfs/*/sys/devices/system/node/node0/meminfo"),
         lambda t: parse_node_meminfo(t, node_id=0, source=SRC)),
    Case("node distance", _seeds("sysfs/*/sys/devices/system/node/node*/distance"),
         lambda t: parse_distance(t, source=SRC)),
    Case("hugepage dir", ("hugepages-2048kB", "hugepages-1048576kB"), lambda t: hugepage_size(t, source=SRC)),
    Case("hugepage counts", ("hugepages-2048kB\n512\n500\n0\n",), _hugepages),
    Case("klog", _seeds("journal/*.txt"), lambda t: parse_kubelet_log(t, reference=REFERENCE), names_source=False),
    Case("cpu list", ("0-3,8-11", "0-63:2/4", "5", ""), lambda t: CPUSet.parse(t, source=SRC, strided=True)),
    Case("cpu mask", ("0000ffff,0000ffff", "f", "1,00000000"), lambda t: CPUSet.from_mask(t, source=SRC)),
    Case("duration", ("10s", "1m0s", "4h0m0s", "1.5h", "300ms", "-1us", "0"),
         lambda t: parse_go_duration(t, source=SRC)),
    Case("quantity", ("1Gi", "100Mi", "500m", "1e3", "1.5Gi", "0", "1k"), lambda t: Quantity.parse(t, source=SRC)),
]  # fmt: skip


def _inputs(case: Case) -> st.SearchStrategy[str]:
    return st.one_of(*(mutated(seed) for seed in case.seeds), st.sampled_from(case.seeds), st.text(max_size=80))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@fuzz
@given(data=st.data())
def test_parser_answers_or_refuses_in_words(case: Case, data: st.DataObject) -> None:
    result = survive(case.parse, data.draw(_inputs(case), label="input"))
    if case.names_source:
        refused_naming(result, SRC, ENV_FILE) if case.parse is _unit else refused_naming(result, SRC)


@fuzz
@given(st.text(max_size=40))
@example("\x1b")  # yaml's reader raised ReaderError before any line was parsed
@example("a: 1\n\x1f")
def test_yaml_documents_refuse_control_characters_in_words(text: str) -> None:
    for parse in (parse_kubelet_config, parse_kubelet_dropin):
        refused_naming(survive(parse, text, source=SRC), SRC)
