"""A read-only view of one cluster: connection, paginated lists and node-proxy GETs.

Every call goes through ``Backoff`` (429/5xx/transport errors), carries a timeout, and returns
parsed JSON (``_preload_content=False`` + ``json.loads``): the client's model deserialisation
costs more than the transfer on big lists. Only get and list are ever issued.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast, overload

import urllib3
import yaml
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from tmnb.errors import CollectError
from tmnb.parse.jsonable import JsonDict
from tmnb.sources.cluster.retry import Backoff, describe, status_of
from tmnb.sources.kubeconfig import kubeconfig_missing

NRT = ("topology.node.k8s.io", "v1alpha2", "noderesourcetopologies")
PAGE_SIZE = 500
MAX_RELISTS = 3
T = TypeVar("T")


def raw_body(response: object) -> bytes:
    """The body of a call made with ``_preload_content=False``. The client then hands back the
    urllib3 response unread, though each method is annotated with what it decodes otherwise (the
    model, or ``str`` for a log): the cast says what the object is."""
    return cast(urllib3.BaseHTTPResponse, response).data


@dataclass
class ClusterApi:
    """The API groups the collector reads, sharing one connection pool."""

    api_client: client.ApiClient
    context: str | None = None
    backoff: Backoff = field(default_factory=Backoff)
    timeout: tuple[float, float] = (5.0, 60.0)
    page_size: int = PAGE_SIZE
    #: per-node calls: a hung kubelet must not hold a worker for minutes in a 5,000-node collection
    node_timeout: tuple[float, float] = (5.0, 10.0)
    node_attempts: int = 3

    def __post_init__(self) -> None:
        self.core = client.CoreV1Api(self.api_client)
        self.apps = client.AppsV1Api(self.api_client)
        self.batch = client.BatchV1Api(self.api_client)
        self.policy = client.PolicyV1Api(self.api_client)
        self.custom = client.CustomObjectsApi(self.api_client)
        self.version_api = client.VersionApi(self.api_client)

    def _json(self, call: Callable[..., object], *args: object, **kwargs: object) -> JsonDict:
        """``call`` (any method of the client's API classes) with a timeout, retried, its JSON object."""

        def once() -> JsonDict:
            response = call(*args, _preload_content=False, _request_timeout=self.timeout, **kwargs)
            doc: JsonDict = json.loads(raw_body(response))
            return doc

        return self.backoff.call(once)

    def server_version(self) -> str | None:
        version = self._json(self.version_api.get_code).get("gitVersion")
        return None if version is None else str(version)

    @overload
    def list_all(
        self, call: Callable[..., object], *args: object, item: None = None, **kwargs: object
    ) -> list[JsonDict]: ...

    @overload
    def list_all(
        self, call: Callable[..., object], *args: object, item: Callable[[JsonDict], T], **kwargs: object
    ) -> list[T]: ...

    def list_all(
        self,
        call: Callable[..., object],
        *args: object,
        item: Callable[[JsonDict], T] | None = None,
        **kwargs: object,
    ) -> list[JsonDict] | list[T]:
        """Every item of a list call, page by page with limit/continue, each passed through
        ``item`` as its page arrives (so 150,000 raw pods are never held at once). A continue token
        that expired (410) restarts the list: pages of one list must come from one snapshot."""
        for _ in range(MAX_RELISTS):
            items: list[Any] = []  # the raw objects or what ``item`` made of them: the overloads say which
            token: str | None = None
            try:
                while True:
                    page = self._json(call, *args, limit=self.page_size, _continue=token, **kwargs)
                    raw = page.get("items") or ()
                    items.extend(map(item, raw) if item else raw)
                    token = (page.get("metadata") or {}).get("continue") or None
                    if token is None:
                        return items
            except ApiException as exc:
                if status_of(exc) != 410 or token is None:
                    raise
        raise CollectError(f"the list kept expiring between pages ({MAX_RELISTS} restarts); try a smaller page size")

    def configz(self, node: str) -> bytes:
        def once() -> bytes:
            response = self.core.connect_get_node_proxy_with_path(
                node, "configz", _preload_content=False, _request_timeout=self.node_timeout
            )
            return raw_body(response)

        return dataclasses.replace(self.backoff, attempts=min(self.backoff.attempts, self.node_attempts)).call(once)


def connect(
    context: str | None = None, kubeconfig: str | None = None, *, pool_size: int = 16
) -> tuple[client.ApiClient, str | None]:
    """A client for ``context`` of ``kubeconfig`` (default: $KUBECONFIG, ~/.kube/config), or the
    in-cluster service account when there is no kubeconfig and we run in a pod. Returns the
    context *name* (never credentials) for the snapshot's source."""
    cfg = client.Configuration()
    missing = kubeconfig_missing(kubeconfig)
    if missing:
        raise CollectError(missing)
    # kubernetes.config, unlike the generated client, has no annotations: its loaders are called untyped.
    try:
        config.load_kube_config(config_file=kubeconfig, context=context, client_configuration=cfg)  # type: ignore[no-untyped-call]
        _, active = config.list_kube_config_contexts(config_file=kubeconfig)  # type: ignore[no-untyped-call]
        name = context or (active or {}).get("name")
    except (ConfigException, OSError, yaml.YAMLError, TypeError, ValueError, AttributeError, KeyError) as exc:
        # the client's loader assumes a well-formed file: anything else it trips over is a bad kubeconfig
        if kubeconfig or context or not os.environ.get("KUBERNETES_SERVICE_HOST"):
            what = exc if isinstance(exc, ConfigException | OSError) else f"not a kubeconfig ({type(exc).__name__})"
            raise CollectError(f"cannot load kube context {context or '(current)'}: {what}") from exc
        try:
            config.load_incluster_config(client_configuration=cfg)  # type: ignore[no-untyped-call]
        except ConfigException as inner:
            raise CollectError(f"no kubeconfig and no in-cluster service account: {inner}") from inner
        name = None
    cfg.connection_pool_maxsize = pool_size + 4
    return client.ApiClient(cfg), name


def explain(exc: BaseException, what: str) -> CollectError:
    """A collection failure as one error line naming the call."""
    return CollectError(f"{what}: {describe(exc)}")
