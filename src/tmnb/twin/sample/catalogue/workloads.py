"""The workloads that run on the fleet: controller kind, target pools, containers, replicas per node."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from tmnb.snapshot import Toleration
from tmnb.snapshot.model import TaintEffect
from tmnb.twin.sample.catalogue.shapes import CX7_VF, E810_VF, GPU
from tmnb.twin.sample.common import SERVER_VERSION


@dataclass(frozen=True)
class ContainerSpec:
    name: str
    image: str
    requests: Mapping[str, str] = field(default_factory=dict)
    limits: Mapping[str, str] = field(default_factory=dict)
    sidecar: bool = False  # an init container with restartPolicy Always


def guaranteed(name: str, image: str, cpu: str, memory: str, *, sidecar: bool = False, **extra: str) -> ContainerSpec:
    """Requests equal limits; ``extra`` keys use ``_`` for ``/`` and ``.`` (see ``_resource_name``)."""
    resources = {"cpu": cpu, "memory": memory, **{_resource_name(k): v for k, v in extra.items()}}
    return ContainerSpec(name, image, resources, dict(resources), sidecar)


def _resource_name(key: str) -> str:
    return {"gpu": GPU, "e810_vf": E810_VF, "cx7_vf": CX7_VF, "hugepages_1Gi": "hugepages-1Gi"}[key]


@dataclass(frozen=True)
class Workload:
    namespace: str
    name: str
    kind: str  # Deployment, StatefulSet, DaemonSet, Job (CronJob-owned when ``cronjob``)
    pools: tuple[str, ...] | None  # None: every pool
    containers: tuple[ContainerSpec, ...]
    init_containers: tuple[ContainerSpec, ...] = ()
    per_node: float = 0.0  # replicas per node of its pool
    minimum: int = 1
    age: timedelta = timedelta(days=30)
    spread: timedelta = timedelta(hours=2)
    priority_class: str | None = None
    emptydir: bool = False
    completed: bool = False  # Job pods that finished before the snapshot
    min_available: str | None = None  # PodDisruptionBudget
    cronjob: str | None = None
    tolerations: tuple[Toleration, ...] = ()  # the pool taints (``pools``) it is meant to run under


def _img(name: str, tag: str) -> str:
    return f"{name}:{tag}"


_DAY = timedelta(days=1)
_ALL_GPU = ("gpu", "gb200")
_RELOADER = "quay.io/prometheus-operator/prometheus-config-reloader"
#: Node agents run everywhere, whatever the taints, as their charts' ``operator: Exists`` says.
_EVERY_TAINT = (Toleration(operator="Exists"),)
#: What the ExtendedResourceToleration admission plugin adds to a pod asking for GPUs; the GPU pools' other
#: pods carry it in their spec.
_GPU = (Toleration(key=GPU, operator="Exists", effect="NoSchedule"),)
#: NVIDIA's device plugin chart: the GPU taint and CriticalAddonsOnly.
_GPU_PLUGIN = (*_GPU, Toleration(key="CriticalAddonsOnly", operator="Exists"))


def _dedicated(team: str, effect: TaintEffect = "NoSchedule") -> tuple[Toleration, ...]:
    """The toleration of a pool set aside with ``dedicated=<team>`` (``catalogue.pools``)."""
    return (Toleration(key="dedicated", value=team, effect=effect),)


WORKLOADS: tuple[Workload, ...] = (
    # -- node agents --------------------------------------------------------------------------
    Workload("kube-system", "kube-proxy", "DaemonSet", None,
             (ContainerSpec("kube-proxy", _img("registry.k8s.io/kube-proxy", SERVER_VERSION)),),
             age=60 * _DAY, priority_class="system-node-critical", tolerations=_EVERY_TAINT),
    Workload("kube-system", "cilium", "DaemonSet", None,
             (ContainerSpec("cilium-agent", _img("quay.io/cilium/cilium", "v1.18.2"),
                            {"cpu": "100m", "memory": "512Mi"}),),
             init_containers=(ContainerSpec("config", _img("quay.io/cilium/cilium", "v1.18.2")),
                              ContainerSpec("clean-cilium-state", _img("quay.io/cilium/cilium", "v1.18.2"))),
             age=60 * _DAY, priority_class="system-node-critical", tolerations=_EVERY_TAINT),
    Workload("node-feature-discovery", "nfd-worker", "DaemonSet", None,
             (ContainerSpec("worker", _img("registry.k8s.io/nfd/node-feature-discovery", "v0.18.1"),
                            {"cpu": "5m", "memory": "64Mi"}, {"memory": "512Mi"}),),
             age=58 * _DAY, tolerations=_EVERY_TAINT),
    Workload("monitoring", "node-exporter", "DaemonSet", None,
             (ContainerSpec("node-exporter", _img("quay.io/prometheus/node-exporter", "v1.9.1"),
                            {"cpu": "102m", "memory": "180Mi"}, {"cpu": "250m", "memory": "180Mi"}),
              ContainerSpec("kube-rbac-proxy", _img("quay.io/brancz/kube-rbac-proxy", "v0.19.1"),
                            {"cpu": "10m", "memory": "20Mi"}, {"cpu": "20m", "memory": "40Mi"})),
             age=45 * _DAY, tolerations=_EVERY_TAINT),
    Workload("logging", "fluent-bit", "DaemonSet", None,
             (ContainerSpec("fluent-bit", _img("cr.fluentbit.io/fluent/fluent-bit", "4.0.3"),
                            {"cpu": "50m", "memory": "64Mi"}, {"memory": "256Mi"}),),
             age=40 * _DAY, tolerations=_EVERY_TAINT),
    Workload("kube-system", "nvidia-device-plugin", "DaemonSet", _ALL_GPU,
             (ContainerSpec("nvidia-device-plugin", _img("nvcr.io/nvidia/k8s-device-plugin", "v0.17.2")),),
             age=30 * _DAY, priority_class="system-node-critical", tolerations=_GPU_PLUGIN),
    Workload("kube-system", "sriov-device-plugin", "DaemonSet", ("telco", "gpu", "gb200"),
             (ContainerSpec("kube-sriovdp", _img("ghcr.io/k8snetworkplumbingwg/sriov-network-device-plugin", "v3.9.0"),
                            {"cpu": "250m", "memory": "40Mi"}, {"cpu": "1", "memory": "200Mi"}),),
             age=30 * _DAY, priority_class="system-node-critical", tolerations=_EVERY_TAINT),
    Workload("monitoring", "dcgm-exporter", "DaemonSet", _ALL_GPU,
             (ContainerSpec("dcgm-exporter", _img("nvcr.io/nvidia/k8s/dcgm-exporter", "4.2.3-4.1.3-ubuntu22.04"),
                            {"cpu": "100m", "memory": "128Mi"}, {"memory": "512Mi"}),),
             age=30 * _DAY, tolerations=_GPU),
    Workload("telco-dpdk", "ptp-daemon", "DaemonSet", ("telco",),
             (guaranteed("linuxptp", _img("registry.example.com/telco/linuxptp", "4.4-2"), "2", "1Gi"),),
             age=21 * _DAY, priority_class="system-node-critical", tolerations=_EVERY_TAINT),
    # -- general pool -------------------------------------------------------------------------
    Workload("kube-system", "coredns", "Deployment", ("general",),
             (ContainerSpec("coredns", _img("registry.k8s.io/coredns/coredns", "v1.12.1"),
                            {"cpu": "100m", "memory": "70Mi"}, {"memory": "170Mi"}),),
             per_node=0.05, minimum=2, age=60 * _DAY, priority_class="system-cluster-critical"),
    Workload("monitoring", "prometheus-k8s", "StatefulSet", ("general",),
             (ContainerSpec("prometheus", _img("quay.io/prometheus/prometheus", "v3.5.0"),
                            {"cpu": "2", "memory": "8Gi"}, {"memory": "12Gi"}),
              ContainerSpec("config-reloader", _img(_RELOADER, "v0.84.0"),
                            {"cpu": "10m", "memory": "50Mi"}, {"cpu": "10m", "memory": "50Mi"})),
             per_node=0.02, minimum=2, age=45 * _DAY),
    Workload("monitoring", "grafana", "Deployment", ("general",),
             (ContainerSpec("grafana", _img("docker.io/grafana/grafana", "12.1.0"),
                            {"cpu": "250m", "memory": "512Mi"}, {"cpu": "1", "memory": "1Gi"}),),
             age=44 * _DAY, emptydir=True),
    Workload("web", "session-cache", "Deployment", ("general",),
             (ContainerSpec("memcached", _img("docker.io/library/memcached", "1.6.39")),),
             per_node=2, age=20 * _DAY, emptydir=True),
    Workload("web", "search-indexer", "Deployment", ("general",),
             (guaranteed("indexer", _img("registry.example.com/web/search-indexer", "3.4.1"), "4", "8Gi"),),
             per_node=1, age=10 * _DAY),
    Workload("web", "api-gateway", "Deployment", ("general",),
             (ContainerSpec("envoy", _img("docker.io/envoyproxy/envoy", "v1.35.0"),
                            {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}),),
             per_node=4, age=8 * _DAY),
    Workload("web", "storefront", "Deployment", ("general",),
             (ContainerSpec("storefront", _img("registry.example.com/web/storefront", "2026.07.14"),
                            {"cpu": "500m", "memory": "1Gi"}, {"cpu": "2", "memory": "2Gi"}),),
             per_node=8, age=7 * _DAY),
    Workload("web", "checkout-ui", "Deployment", ("general",),
             (ContainerSpec("checkout-ui", _img("registry.example.com/web/checkout-ui", "5.2.0"),
                            {"cpu": "250m", "memory": "512Mi"}, {"memory": "1Gi"}),),
             per_node=6, age=5 * _DAY),
    Workload("batch", "nightly-report", "Job", ("general",),
             (ContainerSpec("report", _img("registry.example.com/batch/report", "1.8.0")),),
             per_node=2, age=_DAY, spread=timedelta(minutes=30), completed=True, cronjob="nightly-report"),
    # -- latency pool -------------------------------------------------------------------------
    Workload("payments", "payments-api", "Deployment", ("latency",),
             (guaranteed("payments-api", _img("registry.example.com/payments/api", "4.12.3"), "4", "8Gi"),),
             init_containers=(guaranteed("istio-proxy", _img("docker.io/istio/proxyv2", "1.27.1"), "500m", "512Mi",
                                         sidecar=True),),
             per_node=3, age=6 * _DAY, min_available="80%", tolerations=_dedicated("latency")),
    Workload("payments", "ledger", "StatefulSet", ("latency",),
             (guaranteed("ledger", _img("registry.example.com/payments/ledger", "2.3.0"), "8", "32Gi"),),
             per_node=1, age=12 * _DAY, tolerations=_dedicated("latency")),
    Workload("payments", "card-vault", "Deployment", ("latency",),
             (guaranteed("vault", _img("registry.example.com/payments/card-vault", "1.9.0"), "2", "4Gi"),),
             per_node=2, age=12 * _DAY, tolerations=_dedicated("latency")),
    Workload("payments", "fraud-scoring", "Deployment", ("latency",),
             (ContainerSpec("scorer", _img("registry.example.com/payments/fraud-scoring", "0.9.7"),
                            {"cpu": "2", "memory": "4Gi"}, {"cpu": "4", "memory": "8Gi"}),),
             per_node=4, age=3 * _DAY, tolerations=_dedicated("latency")),
    Workload("payments", "notifications", "Deployment", ("latency",),
             (ContainerSpec("notifier", _img("registry.example.com/payments/notifications", "2.0.4"),
                            {"cpu": "200m", "memory": "256Mi"}, {"memory": "512Mi"}),),
             per_node=4, age=3 * _DAY, tolerations=_dedicated("latency")),
    # -- telco pool ---------------------------------------------------------------------------
    Workload("telco-dpdk", "upf-dataplane", "Deployment", ("telco",),
             (guaranteed("upf", _img("registry.example.com/telco/upf", "24.3.1"), "8", "16Gi",
                         hugepages_1Gi="8Gi", e810_vf="2"),),
             per_node=2, age=14 * _DAY, tolerations=_dedicated("telco")),
    Workload("telco-dpdk", "cu-up", "StatefulSet", ("telco",),
             (guaranteed("cu-up", _img("registry.example.com/telco/cu-up", "24.3.0"), "6", "8Gi",
                         hugepages_1Gi="4Gi", e810_vf="1"),),
             per_node=2, age=14 * _DAY, tolerations=_dedicated("telco")),
    Workload("telco-dpdk", "cu-cp", "Deployment", ("telco",),
             (guaranteed("cu-cp", _img("registry.example.com/telco/cu-cp", "24.3.0"), "4", "8Gi"),),
             per_node=2, age=14 * _DAY, tolerations=_dedicated("telco")),
    Workload("telco-dpdk", "oam-agent", "Deployment", ("telco",),
             (ContainerSpec("oam-agent", _img("registry.example.com/telco/oam-agent", "3.1.0"),
                            {"cpu": "200m", "memory": "256Mi"}, {"cpu": "1", "memory": "512Mi"}),),
             per_node=2, age=14 * _DAY, tolerations=_dedicated("telco")),
    # -- GPU pools ----------------------------------------------------------------------------
    Workload("ml-training", "llm-pretrain", "Job", ("gpu",),
             (guaranteed("trainer", _img("nvcr.io/nvidia/pytorch", "25.06-py3"), "48", "512Gi", gpu="4",
                         cx7_vf="2"),),
             per_node=1, age=2 * _DAY, emptydir=True, tolerations=_GPU),
    Workload("ml-training", "data-loader", "Deployment", ("gpu",),
             (ContainerSpec("loader", _img("registry.example.com/ml/data-loader", "0.14.0"),
                            {"cpu": "2", "memory": "8Gi"}, {"cpu": "4", "memory": "16Gi"}),),
             per_node=6, age=2 * _DAY, emptydir=True, tolerations=_GPU),
    Workload("ml-training", "embeddings", "Deployment", ("gpu",),
             (guaranteed("encoder", _img("registry.example.com/ml/embeddings", "1.4.2"), "80", "256Gi", gpu="2"),),
             per_node=1, age=_DAY, tolerations=_GPU),
    Workload("ml-inference", "prompt-cache", "Deployment", ("gpu",),
             (ContainerSpec("redis", _img("docker.io/library/redis", "8.2.1"),
                            {"cpu": "500m", "memory": "4Gi"}, {"memory": "4Gi"}),),
             per_node=3, age=_DAY, tolerations=_GPU),
    Workload("ml-training", "gb200-train", "Job", ("gb200",),
             (guaranteed("trainer", _img("nvcr.io/nvidia/pytorch", "25.06-py3"), "128", "800Gi", gpu="4",
                         cx7_vf="4"),),
             per_node=1, age=_DAY, emptydir=True, tolerations=_GPU),
    Workload("ml-training", "gb200-data-loader", "Deployment", ("gb200",),
             (ContainerSpec("loader", _img("registry.example.com/ml/data-loader", "0.14.0"),
                            {"cpu": "2", "memory": "8Gi"}, {"cpu": "4", "memory": "16Gi"}),),
             per_node=4, age=_DAY, emptydir=True, tolerations=_GPU),
    # -- big-memory and 16-NUMA pools -----------------------------------------------------------
    Workload("analytics", "spark-executor", "StatefulSet", ("bigmem",),
             (guaranteed("executor", _img("docker.io/apache/spark", "4.0.0"), "30", "128Gi"),),
             per_node=6, age=9 * _DAY, emptydir=True, tolerations=_dedicated("bigmem", "PreferNoSchedule")),
    Workload("analytics", "trino-worker", "Deployment", ("bigmem",),
             (ContainerSpec("trino", _img("docker.io/trinodb/trino", "476"),
                            {"cpu": "4", "memory": "32Gi"}, {"cpu": "8", "memory": "64Gi"}),),
             per_node=6, age=9 * _DAY, tolerations=_dedicated("bigmem", "PreferNoSchedule")),
    Workload("analytics", "duckdb-gateway", "Deployment", ("bigmem",),
             (ContainerSpec("duckdb", _img("registry.example.com/analytics/duckdb-gateway", "1.3.2"),
                            {"cpu": "4", "memory": "64Gi"}, {"cpu": "16", "memory": "128Gi"}),),
             per_node=1, age=9 * _DAY, tolerations=_dedicated("bigmem", "PreferNoSchedule")),
    Workload("hpc", "cfd-solver", "Job", ("numa16",),
             (guaranteed("solver", _img("registry.example.com/hpc/openfoam", "v2406"), "28", "96Gi"),),
             per_node=4, age=3 * _DAY, tolerations=_dedicated("hpc")),
    Workload("hpc", "post-processing", "Deployment", ("numa16",),
             (ContainerSpec("paraview", _img("registry.example.com/hpc/paraview", "5.13.3"),
                            {"cpu": "4", "memory": "16Gi"}, {"cpu": "8", "memory": "32Gi"}),),
             per_node=6, age=3 * _DAY, tolerations=_dedicated("hpc")),
    Workload("hpc", "mpi-launcher", "Deployment", ("numa16",),
             (ContainerSpec("launcher", _img("registry.example.com/hpc/mpi-operator", "0.6.0"),
                            {"cpu": "1", "memory": "2Gi"}),),
             per_node=1, age=3 * _DAY, tolerations=_dedicated("hpc")),
    # -- today's rollout: one replica per NUMA-local GPU slot, on nodes already carved up ------
    Workload("ml-inference", "llm-serving", "Deployment", ("gpu",),
             (guaranteed("vllm", _img("docker.io/vllm/vllm-openai", "v0.10.1"), "24", "96Gi", gpu="1"),),
             per_node=2, minimum=4, age=timedelta(minutes=40), spread=timedelta(minutes=5), tolerations=_GPU),
)  # fmt: skip
