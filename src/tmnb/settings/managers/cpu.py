"""CPU Manager rules: the kubelet's checks (reservedSystemCPUs, the policy name, its options, the
static policy's reservation and align-by-socket), then tmnb's advice on how the static policy
reserves CPUs."""

from __future__ import annotations

from tmnb.errors import InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.names import CPU_POLICIES, CPU_STATIC
from tmnb.kubelet.startup.checks import Start
from tmnb.kubelet.startup.run import cpu_count
from tmnb.settings.findings import Findings
from tmnb.settings.managers.shared import case_hint, kubelet_refusals


def check_cpu(start: Start, out: Findings) -> None:
    kubelet_refusals(start, "cpu", out)
    cfg = start.cfg
    policy = cfg["cpuManagerPolicy"]
    case_hint(policy, CPU_POLICIES, "cpu", "cpuManagerPolicy", out)
    if policy != CPU_STATIC:
        return
    text = cfg.get("reservedSystemCPUs") or ""
    try:
        count = cpu_count(gostr.parse_cpu_ranges(text))
    except gostr.GoParseError:
        return  # refused by the kubelet's validation
    if count:
        _superseded(start, text, count, out)
        return
    cpu = start.reservation.get("cpu") if start.reservation is not None else None
    if cpu is not None and cpu.milli_value() % 1000:
        out.add(
            "cpu.static-fractional-reservation",
            "kubeReserved",
            "info",
            f"the static policy reserves whole CPUs: ceil({cpu}) = {-(-cpu.milli_value() // 1000)}",
        )


def _superseded(start: Start, text: str, count: int, out: Findings) -> None:
    """reservedSystemCPUs replaces the cpu amounts in kubeReserved/systemReserved (``run()`` sets
    systemReserved.cpu to its size and drops kubeReserved.cpu)."""
    amounts = [(start.cfg.get(field) or {}).get("cpu") for field in ("kubeReserved", "systemReserved")]
    if any(a is not None and not _zero(a) for a in amounts):
        out.add(
            "cpu.reserved-cpus-supersedes",
            "reservedSystemCPUs",
            "info",
            f"reservedSystemCPUs {text} supersedes the cpu amounts in kubeReserved/systemReserved "
            f"(the kubelet reserves exactly {count} CPUs)",
        )


def _zero(amount: object) -> bool:
    try:
        return GoQuantity.parse(str(amount)).is_zero()
    except InputError:
        return False  # unreadable, and superseded all the same
