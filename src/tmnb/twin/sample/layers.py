"""Step 3, kubelet configuration: a profile's layers written as the texts a node holds (``--config``
YAML, ``--config-dir`` drop-ins, the command line; /configz for a node without an agent) and read
back by ``tmnb.parse`` and ``tmnb.settings.effective_settings``, the code that reads real nodes, so
every setting gets its provenance."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import yaml

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.names import MEMORY_STATIC
from tmnb.parse.kubelet_config import KubeletConfigDoc, parse_configz, parse_kubelet_config, parse_kubelet_dropin
from tmnb.parse.kubelet_fields import API_VERSION, FIELD_TYPES, KIND, RESOURCE_MANAGER_FIELDS
from tmnb.parse.kubelet_flags import CONFIG_FLAGS, parse_kubelet_args
from tmnb.parse.quantity import quantity
from tmnb.settings.effective import KubeletSettings, effective_settings
from tmnb.snapshot import KubeletInfo, Setting
from tmnb.snapshot.model import SettingSource
from tmnb.twin.sample.catalogue import PROFILES, SHAPES, Pool, Profile, Shape
from tmnb.twin.sample.common import GIB, MIB
from tmnb.twin.sample.hardware import shape_cpus, shape_zones
from tmnb.twin.sample.specs import NodeSpec, node_ip
from tmnb.versions import KubeVersion

#: The fields the sample reports per node (what the inventory shows). ``effective_settings`` also
#: yields the kubelet's other defaults (maxPods, cgroupDriver, ...); the snapshot leaves them out.
#: A reported field no layer sets and the kubelet leaves empty (omitempty) is shown empty.
REPORTED_FIELDS = RESOURCE_MANAGER_FIELDS
DROPIN_DIR = "/etc/kubernetes/kubelet.conf.d"
#: KubeletConfiguration JSON name -> (command-line flag, how pflag parses its value).
_FLAG_OF = {name: (f"--{flag}", kind) for flag, (name, kind) in CONFIG_FLAGS.items()}
#: The zero value of a field's Go type, which is what the kubelet holds when nothing sets it.
_ZERO: dict[str, Callable[[], object]] = {
    "string": str,
    "[]MemoryReservation": list,
    "map[string]string": dict,
    "map[string]bool": dict,
}


@dataclass(frozen=True)
class _ConfigDocs:
    """A profile's configuration on one shape, parsed: the --config file and the drop-ins in merge
    order, and the extra command-line flags; or, for a node known only through /configz, that."""

    file: KubeletConfigDoc | None
    dropins: tuple[KubeletConfigDoc, ...]
    flags: tuple[str, ...]
    configz: KubeletConfigDoc | None = None


def _config_file(pool: Pool) -> str:
    return "/var/lib/kubelet/config.yaml" if pool.kubeadm else "/etc/kubernetes/kubelet-config.yaml"


def _reserved_cpus(shape: Shape, cores: Sequence[int]) -> str:
    return str(CPUSet(c.cpu for c in shape_cpus(shape.key) if c.core in cores))


def _reserved_memory(total: int, numa_ids: Sequence[int]) -> list[dict[str, Any]]:
    """Whole GiB on NUMA nodes 1..k-1, the rest on NUMA 0 (so the sum equals the node reservation)."""
    k = max(1, min(len(numa_ids), total // GIB))
    rest = total - (k - 1) * GIB
    entries = [{"numaNode": numa_ids[0], "limits": {"memory": f"{rest // MIB}Mi"}}]
    entries += [{"numaNode": n, "limits": {"memory": "1Gi"}} for n in numa_ids[1:k]]
    return entries


def _yaml(values: Mapping[str, Any]) -> str:
    return yaml.safe_dump({"apiVersion": API_VERSION, "kind": KIND, **values}, sort_keys=False)


def _flag_args(values: Mapping[str, Any]) -> list[str]:
    """Config fields as kubelet flags, written the way each flag's parser reads them back."""
    args = []
    for name, value in values.items():
        flag, kind = _FLAG_OF[name]
        if kind == "map-nosplit":  # one key=value per use
            args += [f"{flag}={k}={v}" for k, v in value.items()]
        elif kind == "reserved-memory":
            entries = (f"{e['numaNode']}:" + ",".join(f"{k}={v}" for k, v in e["limits"].items()) for e in value)
            args.append(f"{flag}={';'.join(entries)}")
        elif kind in ("map", "langle-map", "map-bool"):
            sep = "<" if kind == "langle-map" else "="
            pairs = (f"{k}{sep}{str(v).lower() if isinstance(v, bool) else v}" for k, v in value.items())
            args.append(f"{flag}={','.join(pairs)}")
        elif kind == "string":
            args.append(f"{flag}={value}")
        else:
            raise InputError(f"the sample cannot write {name} as a flag ({kind})", where=name)
    return args


def _render(config_file: str, layers: Sequence[Mapping[str, Any]], dropins: Sequence[str]) -> _ConfigDocs:
    """Layers (file, drop-ins, flags) as the YAML and flags a node holds, parsed as the node agent parses them."""
    file, *others, flags = layers
    return _ConfigDocs(
        parse_kubelet_config(_yaml(file), source=config_file),
        tuple(
            parse_kubelet_dropin(_yaml(values), source=f"{DROPIN_DIR}/{name}")
            for name, values in zip(dropins, others, strict=True)
        ),
        tuple(_flag_args(flags)),
    )


def _layered(docs: _ConfigDocs, argv: Sequence[str], version: KubeVersion) -> KubeletSettings:
    flags = parse_kubelet_args(argv, source="kubelet command line")
    return effective_settings(file=docs.file, dropins=docs.dropins, flags=flags, version=version)


@cache
def _config_docs(profile_key: str, shape_key: str, config_file: str, version: KubeVersion) -> _ConfigDocs:
    """Render the profile's layers as the node's texts and parse them (once per distinct text).

    ``reserve_cores`` become ``reservedSystemCPUs`` in the file; a layer that turns the memory
    manager Static also carries the ``reservedMemory`` the kubelet demands, summing to the node
    reservation (kube + system reserved + the hard-eviction threshold) of the layers as merged."""
    profile, shape = PROFILES[profile_key], SHAPES[shape_key]
    layers: list[dict[str, Any]] = [dict(profile.file), *(dict(v) for _, v in profile.dropins), dict(profile.flags)]
    if profile.reserve_cores:
        layers[0]["reservedSystemCPUs"] = _reserved_cpus(shape, profile.reserve_cores)
    names = [name for name, _ in profile.dropins]
    static = [v for v in layers if v.get("memoryManagerPolicy") == MEMORY_STATIC]
    if static:
        docs = _render(config_file, layers, names)
        merged = _layered(docs, ["kubelet", *docs.flags], version)
        parts = [merged.value(k, {}).get("memory", "0") for k in ("kubeReserved", "systemReserved")]
        parts.append(merged.value("evictionHard", {}).get("memory.available", "0"))
        total = int(sum(quantity(p, "memory reservation") for p in parts))
        reserved = _reserved_memory(total, [z.id for z in shape_zones(shape_key) if z.local >= 0])
        for values in static:
            values["reservedMemory"] = reserved
    docs = _render(config_file, layers, names)
    if not profile.configz_only:
        return docs
    # No node agent: only /configz, the running kubelet's configuration (defaults filled in, empty
    # fields omitted as the kubelet's JSON does), which its file decides.
    running = _layered(docs, ["kubelet", *docs.flags], version).fields
    body = {k: s.value for k, s in running.items() if s.value not in (None, "", {}, [])}
    return _ConfigDocs(None, (), (), parse_configz(json.dumps({"kubeletconfig": body}), source="/configz"))


def kubelet_info(spec: NodeSpec, pool: Pool, profile: Profile, shape: Shape) -> KubeletInfo:
    """What the node agent reads (config file, drop-ins, command line) or, without one, /configz,
    through the parsers and ``effective_settings`` that read real nodes."""
    version = KubeVersion.parse(spec.kubelet)
    config_file = _config_file(pool)
    docs = _config_docs(profile.key, shape.key, config_file, version)
    if docs.configz is not None:
        fields = effective_settings(configz=docs.configz, version=version).fields
        return KubeletInfo(settings=_reported(fields, "configz"), kubeadm_managed=pool.kubeadm)
    config_dir = DROPIN_DIR if docs.dropins else None
    argv = _command_line(spec, pool, docs.flags, config_dir)
    settings = _layered(docs, argv, version)
    return KubeletInfo(
        settings=_reported(settings.fields, "default"),
        config_file=settings.config_file,
        config_dir=settings.config_dir,
        flags=argv,
        kubeadm_managed=pool.kubeadm,
    )


def _reported(fields: Mapping[str, Setting], unset: SettingSource) -> dict[str, Setting]:
    """``REPORTED_FIELDS`` in order. A field no layer sets and without a kubelet default holds its Go
    zero value (``effective_settings`` leaves it out, as /configz omits it)."""
    return {
        name: fields.get(name) or Setting(value=_ZERO[FIELD_TYPES[name]](), source=unset) for name in REPORTED_FIELDS
    }


def _command_line(spec: NodeSpec, pool: Pool, extra: Sequence[str], config_dir: str | None) -> list[str]:
    """kubeadm's systemd drop-in (or a provisioner's unit) plus the profile's extra flags; no secrets."""
    if pool.kubeadm:
        args = [
            "/usr/bin/kubelet",
            "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
            "--kubeconfig=/etc/kubernetes/kubelet.conf",
            f"--config={_config_file(pool)}",
            "--container-runtime-endpoint=unix:///var/run/containerd/containerd.sock",
        ]
    else:
        args = ["/usr/local/bin/kubelet", "--kubeconfig=/var/lib/kubelet/kubeconfig", f"--config={_config_file(pool)}"]
    args.append(f"--node-ip={node_ip(spec, pool)}")
    if config_dir:
        args.append(f"--config-dir={config_dir}")
    return [*args, *extra]
