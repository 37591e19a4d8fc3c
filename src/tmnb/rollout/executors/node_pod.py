"""The ``node-pod`` executor: each command in its own privileged pod on the node
(``tmnb.sources.node_pod``, shared with the collector), entering the host's namespaces with nsenter."""

from __future__ import annotations

import base64
import re
from typing import Unpack

from kubernetes import client

from tmnb.errors import CollectError, RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.rollout.executors import words
from tmnb.rollout.executors.command import CommandExecutor, RootedOptions
from tmnb.rollout.ops import KubeletAction
from tmnb.sources.node_pod import DEFAULT_IMAGE, DEFAULT_NAMESPACE, NodePod
from tmnb.sources.transports import decode_bundle


class NodePodOptions(RootedOptions, total=False):
    """The ``node-pod`` executor's options besides its API client (``NodePodExecutor``)."""

    namespace: str
    image: str
    poll: float


#: nsenter into the host's namespaces from a hostPID pod: the command runs as if on the node.
NSENTER = ("nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--")
EXIT_MARK = re.compile(r"^--- tmnb exit (\d+) ---$", re.M)
STDERR_MARK = "--- tmnb stderr ---"
#: Data travels base64 in an env var, inside the pod object: keep it far below the object size limit.
MAX_POD_DATA = 512 << 10
# In the container: decode the data, run "$@" (nsenter + the node-side argv), then print the exit
# status, stdout as base64 between the collector's markers, and the stderr tail. It exits 0, so
# a Failed pod means the wrapper itself broke, and "absent" (exit 100) is an ordinary answer. Its
# scratch folder goes when it exits (a container's goes with the pod; the sandbox's pods share /tmp).
_POD_WRAPPER = """d=$(mktemp -d) || exit 1
trap 'rm -rf "$d"' EXIT
printf %s "${TMNB_STDIN:-}" | base64 -d > "$d/in" || exit 1
"$@" < "$d/in" > "$d/out" 2> "$d/err"
echo "--- tmnb exit $? ---"
echo "--- tmnb bundle begin ---"
base64 "$d/out"
echo "--- tmnb bundle end ---"
echo "--- tmnb stderr ---"
tail -n 20 "$d/err"
"""


class NodePodExecutor(CommandExecutor):
    """Each command in its own privileged pod pinned to the node (hostPID, nsenter into PID 1's
    namespaces), deleted afterwards, always. The kubelet cannot be stopped this way: the pods that
    carry every later command need it running."""

    kind = "node-pod"

    def __init__(
        self,
        api_client: client.ApiClient,
        node: str,
        namespace: str = DEFAULT_NAMESPACE,
        image: str = DEFAULT_IMAGE,
        *,
        poll: float = 1.0,
        **common: Unpack[RootedOptions],
    ) -> None:
        super().__init__(node, **common)
        self.pods = NodePod(api_client, self.node, namespace, image, poll)
        self.namespace = namespace

    @property
    def created(self) -> list[str]:
        """Every pod this executor made (each one deleted)."""
        return self.pods.created

    def where(self) -> str:
        return f"node pod in {self.namespace}"

    def manifest(self, argv: list[str], stdin: bytes, op: str) -> JsonDict:
        if len(stdin) > MAX_POD_DATA:
            raise RolloutError(
                f"{op}: {len(stdin)} bytes is too much to pass through a pod spec (at most {MAX_POD_DATA})",
                node=self.node,
            )
        return self.pods.manifest(
            prefix="tmnb-rollout-",
            container="op",
            command=["sh", "-c", _POD_WRAPPER, "tmnb-node-op", *NSENTER, *argv],
            timeout=self.timeout,
            annotations={"tmnb.dev/operation": op},
            env={"TMNB_STDIN": base64.b64encode(stdin).decode()},
        )

    def kubelet(self, action: KubeletAction) -> None:
        if action == "stop":
            raise RolloutError(
                "the node-pod executor cannot stop the kubelet: every later operation runs in a pod, and "
                f"pods need a running kubelet; use the {words(lambda k: k.stops)} executor for a stop/start sequence",
                node=self.node,
            )
        super().kubelet(action)

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        where = f"{op} ({self.where()})"
        try:
            name, phase, log = self.pods.run(self.manifest(argv, stdin, op), timeout=self.timeout, where=where)
        except CollectError as exc:
            raise RolloutError(str(exc), node=self.node) from None
        return parse_pod_log(log, phase=phase, where=f"{where}: pod {name}", node=self.node)


def parse_pod_log(text: str, *, phase: str, where: str, node: str) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) from the wrapper's log."""
    found = EXIT_MARK.search(text)
    if phase != "Succeeded" or found is None:
        tail = text.strip().splitlines()[-1:] or ["(no output)"]
        raise RolloutError(f"{where} ended {phase} without running the command: {tail[0]}", node=node)
    try:
        out = decode_bundle(text, where=where)
    except CollectError as exc:
        raise RolloutError(str(exc), node=node) from None
    err = text.split(STDERR_MARK + "\n", 1)[1] if STDERR_MARK + "\n" in text else ""
    return int(found.group(1)), out, err.encode()
