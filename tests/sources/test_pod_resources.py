"""Pod-level spec.resources from the API to the snapshot and into the kubelet model."""

from tmnb.replay import model_pod
from tmnb.snapshot import PodResources
from tmnb.sources.kube_objects import pod_from_api


def api_pod(**spec):
    return {
        "metadata": {"name": "p", "namespace": "app", "uid": "u1", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}], **spec},
        "status": {"phase": "Running", "qosClass": "Burstable"},
    }


def test_pod_level_resources_are_kept():
    pod = pod_from_api(api_pod(resources={"requests": {"cpu": "2", "memory": "1Gi"}, "limits": {"cpu": "2"}}))
    assert pod.resources == PodResources(requests={"cpu": "2", "memory": "1Gi"}, limits={"cpu": "2"})
    model = model_pod(pod)
    assert model.pod_level_resources_set and model.pod_resources_given


def test_none_and_empty_differ():
    """No spec.resources: None; spec.resources: {} is present but empty (1.34-1.36 then call the pod BestEffort)."""
    assert pod_from_api(api_pod()).resources is None
    empty = pod_from_api(api_pod(resources={}))
    assert empty.resources == PodResources()
    model = model_pod(empty)
    assert model.pod_resources_given and not model.has_pod_level_resources
    assert not model_pod(pod_from_api(api_pod())).pod_resources_given
