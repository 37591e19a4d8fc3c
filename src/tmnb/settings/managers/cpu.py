"""CPU Manager rules: policy names and options, reservedSystemCPUs, the static policy's reservation."""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr, options
from tmnb.kubelet.names import CPU_NONE, CPU_POLICIES, SINGLE_NUMA_NODE
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Findings
from tmnb.settings.managers.shared import known_policy, reserved_quantity


def check_cpu(
    settings: KubeletSettings,
    kubelet: KubeletProfile,
    gates: Mapping[str, bool],
    numa_nodes: Collection[int] | None,
    sockets: int | None,
    online_cpus: CPUSet | None,
    out: Findings,
) -> None:
    policy = settings.value("cpuManagerPolicy", CPU_NONE)
    opts = settings.value("cpuManagerPolicyOptions", {})
    reserved_text = settings.value("reservedSystemCPUs", "")
    reserved = _check_reserved_cpus(settings, reserved_text, online_cpus, out)
    if not known_policy(policy, CPU_POLICIES, "cpu", "cpuManagerPolicy", out):
        return
    if policy == CPU_NONE:
        if opts:
            out.rejected("cpuManagerPolicyOptions", lambda: _none_policy(opts), code="cpu.options-with-none")
        return
    parsed = out.rejected(
        "cpuManagerPolicyOptions",
        lambda: options.parse_cpu_manager_options(opts, kubelet=kubelet, feature_gates=gates),
    )
    if parsed is not None and parsed.align_by_socket:
        if settings.value("topologyManagerPolicy") == SINGLE_NUMA_NODE:
            out.add(
                "cpu.align-by-socket-single-numa",
                "cpuManagerPolicyOptions",
                "error",
                "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option",
                kubelet=True,
            )
        if sockets is not None and numa_nodes is not None and sockets > len(numa_nodes):
            out.add(
                "cpu.align-by-socket-hardware",
                "cpuManagerPolicyOptions",
                "error",
                "Align by socket is not compatible with hardware where number of sockets are more than number of NUMA",
                kubelet=True,
            )
    _check_static_reservation(settings, reserved, out)


def _none_policy(opts: Mapping[str, str]) -> None:
    """``NewNonePolicy`` refuses any option (the option-map gate is GA and locked, so ``run()`` checks none)."""
    raise ConfigRejected(f"None policy: received unsupported options={gostr.format_string_map(opts)}")


def _check_reserved_cpus(
    settings: KubeletSettings, text: str, online_cpus: CPUSet | None, out: Findings
) -> CPUSet | None:
    if not text:
        return None
    if settings.value("systemReservedCgroup") or settings.value("kubeReservedCgroup"):
        out.add(
            "cpu.reserved-cpus-cgroup",
            "reservedSystemCPUs",
            "error",
            "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
            "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
            kubelet=True,
        )
    try:
        gostr.parse_cpu_ranges(text)
        reserved = CPUSet.parse(text)
    except (gostr.GoParseError, InputError) as err:
        out.add(
            "cpu.reserved-cpus-parse",
            "reservedSystemCPUs",
            "error",
            f"invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) {text}, error: "
            f"{err.message if isinstance(err, InputError) else err}",
            kubelet=isinstance(err, gostr.GoParseError),
        )
        return None
    if online_cpus is not None and not reserved <= online_cpus:
        out.add(
            "cpu.reserved-cpus-offline",
            "reservedSystemCPUs",
            "error",
            f"reserved-cpus: {text} is not a subset of online-cpus: {online_cpus}",
            kubelet=True,
        )
    return reserved


def _check_static_reservation(settings: KubeletSettings, reserved: CPUSet | None, out: Findings) -> None:
    """The static policy needs a non-zero CPU reservation; ``reservedSystemCPUs`` replaces the
    kube/system-reserved cpu amounts (server.go sets systemReserved.cpu to its size)."""
    if reserved:
        amounts = [reserved_quantity(settings, f, "cpu", out).value for f in ("kubeReserved", "systemReserved")]
        if any(amounts):
            out.add(
                "cpu.reserved-cpus-supersedes",
                "reservedSystemCPUs",
                "info",
                f"reservedSystemCPUs {reserved} supersedes the cpu amounts in kubeReserved/systemReserved "
                f"(the kubelet reserves exactly {len(reserved)} CPUs)",
            )
        return
    total = reserved_quantity(settings, "kubeReserved", "cpu", out).add(
        reserved_quantity(settings, "systemReserved", "cpu", out)
    )
    if total.value == 0:
        out.add(
            "cpu.static-no-reservation",
            "cpuManagerPolicy",
            "error",
            "[cpumanager] unable to determine reserved CPU resources for static policy",
            kubelet=True,
        )
    elif total.value != math.ceil(total.value):
        out.add(
            "cpu.static-fractional-reservation",
            "kubeReserved",
            "info",
            f"the static policy reserves whole CPUs: ceil({total}) = {math.ceil(total.value)}",
        )
