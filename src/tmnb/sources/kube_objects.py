"""Kubernetes API objects (as JSON: ``kubectl get -o json`` or the client's serialised form) to
snapshot records. One conversion for the live collector, PodList files and the sandbox."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import ValidationError

from tmnb.errors import InputError
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.pod import compute_qos
from tmnb.parse.gojson import kind
from tmnb.snapshot import Container, OwnerRef, Pod, PodResources, Toleration
from tmnb.snapshot.identity import duplicate_pod
from tmnb.snapshot.values import non_negative_quantity

QosClass = Literal["Guaranteed", "Burstable", "BestEffort"]
_QOS_CLASSES: Final = ("Guaranteed", "Burstable", "BestEffort")
_TAINT_EFFECTS: Final = ("NoSchedule", "PreferNoSchedule", "NoExecute")


def _qos_class(value: object) -> QosClass | None:
    """``value`` when it names a QoS class, else None."""
    return value if value in _QOS_CLASSES else None


def _map(value: object, where: str, source: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(f"expected an object, got {type(value).__name__}", source=source, where=where)
    return value


def _quantity(value: object, where: str, source: str) -> str:
    if value is None:  # Quantity.UnmarshalJSON reads a JSON null as zero
        return "0"
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise InputError(f"expected a quantity such as 500m or 1Gi, got {kind(value)}", source=source, where=where)
    try:
        return non_negative_quantity(str(value))
    except ValueError as err:
        raise InputError(str(err), source=source, where=where) from None


def _quantities(value: object, where: str, source: str) -> dict[str, str]:
    return {str(k): _quantity(v, f"{where}.{k}", source) for k, v in _map(value, where, source).items()}


def _list(value: object, where: str, source: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise InputError(f"expected a list, got {kind(value)}", source=source, where=where)
    return value


def _containers(spec: Mapping[str, Any], key: str, where: str, source: str) -> list[Container]:
    raw = _list(spec.get(key), f"{where}.spec.{key}", source)
    out = []
    for i, c in enumerate(raw):
        at = f"{where}.spec.{key}[{i}]"
        c = _map(c, at, source)
        if not c.get("name"):
            raise InputError("container without a name", source=source, where=at)
        res = _map(c.get("resources"), f"{at}.resources", source)
        out.append(
            Container(
                name=str(c["name"]),
                requests=_quantities(res.get("requests"), f"{at}.resources.requests", source),
                limits=_quantities(res.get("limits"), f"{at}.resources.limits", source),
                restart_policy=c.get("restartPolicy"),
                image=c.get("image"),
            )
        )
    return out


def tolerations_from_api(spec: Mapping[str, Any], where: str = "$", source: str = "<pod>") -> list[Toleration]:
    """``spec.tolerations`` as served; no operator is Equal, no effect every effect, as the scheduler reads them."""
    out = []
    for i, raw in enumerate(_list(spec.get("tolerations"), f"{where}.spec.tolerations", source)):
        at = f"{where}.spec.tolerations[{i}]"
        t = _map(raw, at, source)
        effect, seconds = t.get("effect") or None, t.get("tolerationSeconds")
        if effect is not None and effect not in _TAINT_EFFECTS:
            raise InputError(f"expected a taint effect ({', '.join(_TAINT_EFFECTS)}), got {effect!r}", source=source,
                             where=f"{at}.effect")  # fmt: skip
        if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
            raise InputError(
                f"expected whole seconds, got {kind(seconds)}", source=source, where=f"{at}.tolerationSeconds"
            )
        operator = str(t.get("operator") or "Equal")
        value = str(t.get("value") or "")
        out.append(Toleration(str(t.get("key") or ""), operator, value, effect, seconds))
    return out


def _owner(meta: Mapping[str, Any], labels: Mapping[str, Any], where: str, source: str) -> OwnerRef | None:
    refs = [r for r in _list(meta.get("ownerReferences"), f"{where}.ownerReferences", source) if isinstance(r, Mapping)]
    ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
    if ref is None:
        return None
    kind, name = str(ref.get("kind", "")), str(ref.get("name", ""))
    controller_kind = controller_name = None
    template_hash = labels.get("pod-template-hash")
    if kind == "ReplicaSet" and template_hash and name.endswith(f"-{template_hash}"):
        # A ReplicaSet named <deployment>-<pod-template-hash> belongs to that Deployment.
        controller_kind, controller_name = "Deployment", name.removesuffix(f"-{template_hash}")
    return OwnerRef(
        kind=kind, name=name, uid=ref.get("uid"), controller_kind=controller_kind, controller_name=controller_name
    )


def pod_from_api(obj: object, *, source: str = "<pod>", where: str = "$") -> Pod:
    """A v1 Pod object to a snapshot Pod; QoS from ``status.qosClass``, else computed as the API does."""
    try:
        return _pod(obj, source, where)
    except ValidationError as exc:  # a value of the right JSON type that no pod has (a quantity "abc")
        first = exc.errors()[0]
        at = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise InputError(first["msg"].removeprefix("Value error, "), source=source, where=f"{where}{at}") from None


def _pod(obj: object, source: str, where: str) -> Pod:
    obj = _map(obj, where, source)
    meta, spec = _map(obj.get("metadata"), f"{where}.metadata", source), _map(obj.get("spec"), f"{where}.spec", source)
    status = _map(obj.get("status"), f"{where}.status", source)
    for key in ("name", "namespace", "uid"):
        if not meta.get(key):
            raise InputError(f"pod without metadata.{key}", source=source, where=f"{where}.metadata")
    containers = _containers(spec, "containers", where, source)
    init = _containers(spec, "initContainers", where, source)
    labels = _map(meta.get("labels"), f"{where}.metadata.labels", source)
    resources = None
    if spec.get("resources") is not None:
        res = _map(spec["resources"], f"{where}.spec.resources", source)
        resources = PodResources(
            requests=_quantities(res.get("requests"), f"{where}.spec.resources.requests", source),
            limits=_quantities(res.get("limits"), f"{where}.spec.resources.limits", source),
        )
    qos = _qos_class(status.get("qosClass"))
    if qos is None:
        model = ModelPod(
            uid=str(meta["uid"]),
            name=str(meta["name"]),
            containers=tuple(_model(c) for c in containers),
            init_containers=tuple(_model(c) for c in init),
            pod_requests=None if resources is None else dict(resources.requests),
            pod_limits=None if resources is None else dict(resources.limits),
            pod_resources_given=resources is not None,
        )
        computed = compute_qos(model)
        qos = _qos_class(computed)
        assert qos is not None, f"compute_qos gave {computed!r}"
    return Pod(
        namespace=str(meta["namespace"]),
        name=str(meta["name"]),
        uid=str(meta["uid"]),
        node=spec.get("nodeName") or None,
        qos_class=qos,
        phase=str(status.get("phase") or "Pending"),
        created=str(meta.get("creationTimestamp") or ""),
        reason=status.get("reason"),
        message=status.get("message"),
        owner=_owner(meta, labels, f"{where}.metadata", source),
        labels={str(k): str(v) for k, v in labels.items()},
        containers=containers,
        init_containers=init,
        priority_class=spec.get("priorityClassName"),
        volumes_emptydir=any(
            isinstance(v, Mapping) and "emptyDir" in v
            for v in _list(spec.get("volumes"), f"{where}.spec.volumes", source)
        ),
        resources=resources,
        tolerations=tolerations_from_api(spec, where, source),
    )


def _model(c: Container) -> ModelContainer:
    return ModelContainer(c.name, dict(c.requests), dict(c.limits), c.restart_policy)


def pods_from_list(doc: object, *, source: str) -> list[Pod]:
    """A ``PodList`` (or ``List`` of pods), as ``kubectl get pods -o json`` prints it."""
    doc = _map(doc, "$", source)
    if doc.get("kind") not in ("PodList", "List") or not isinstance(doc.get("items"), list):
        raise InputError(
            "expected a PodList: an object with kind PodList (or List) and an items list", source=source, where="$.kind"
        )
    pods = [pod_from_api(item, source=source, where=f"$.items[{i}]") for i, item in enumerate(doc["items"])]
    duplicate = duplicate_pod(pods, "$.items")
    if duplicate:
        raise InputError(duplicate[1], source=source, where=duplicate[0])
    return pods
