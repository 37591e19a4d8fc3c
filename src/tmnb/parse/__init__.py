"""Pure parsers of real node artifacts. Each returns frozen dataclasses of plain data
(``to_jsonable`` turns them into snapshot JSON) and raises ``InputError`` naming the file, field
and line of anything malformed, or ``ConfigRejected`` where the kubelet itself would refuse it."""

from tmnb.parse.cgroup import (
    CgroupLine,
    KubeCgroupRef,
    cpuset_cgroup,
    parse_cpuset_file,
    parse_kube_cgroup_path,
    parse_proc_cgroup,
)
from tmnb.parse.jsonable import to_jsonable
from tmnb.parse.klog import KubeletLog, LogRecord, parse_kubelet_log
from tmnb.parse.kubelet_config import (
    DropinDir,
    KubeletConfigDoc,
    dropin_order,
    merge_patch,
    parse_configz,
    parse_kubelet_config,
    parse_kubelet_dropin,
    read_dropin_dir,
)
from tmnb.parse.kubelet_flags import FlagUse, KubeletFlags, parse_kubelet_args, split_proc_cmdline
from tmnb.parse.lscpu import CpuTopology, LogicalCpu, LscpuSummary, parse_lscpu_parsable, parse_lscpu_summary
from tmnb.parse.state_files import (
    CpuManagerState,
    DeviceCheckpoint,
    MemoryManagerState,
    parse_cpu_manager_state,
    parse_device_checkpoint,
    parse_memory_manager_state,
)
from tmnb.parse.sysfs import HugePages, NumaNode, read_numa_nodes
from tmnb.parse.systemd import SystemdExec, order_unit_files, parse_env_file, parse_systemd_units

__all__ = [
    "CgroupLine",
    "CpuManagerState",
    "CpuTopology",
    "DeviceCheckpoint",
    "DropinDir",
    "FlagUse",
    "HugePages",
    "KubeCgroupRef",
    "KubeletConfigDoc",
    "KubeletFlags",
    "KubeletLog",
    "LogRecord",
    "LogicalCpu",
    "LscpuSummary",
    "MemoryManagerState",
    "NumaNode",
    "SystemdExec",
    "cpuset_cgroup",
    "dropin_order",
    "merge_patch",
    "order_unit_files",
    "parse_configz",
    "parse_cpu_manager_state",
    "parse_cpuset_file",
    "parse_device_checkpoint",
    "parse_env_file",
    "parse_kube_cgroup_path",
    "parse_kubelet_args",
    "parse_kubelet_config",
    "parse_kubelet_dropin",
    "parse_kubelet_log",
    "parse_lscpu_parsable",
    "parse_lscpu_summary",
    "parse_memory_manager_state",
    "parse_proc_cgroup",
    "parse_systemd_units",
    "read_dropin_dir",
    "read_numa_nodes",
    "split_proc_cmdline",
    "to_jsonable",
]
