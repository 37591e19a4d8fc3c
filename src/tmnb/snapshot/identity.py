"""One entry per node and per pod: a node listed twice would be predicted twice, and one pod listed
twice (by uid, or by namespace/name) would be admitted twice onto the same exclusive CPUs.

The API server keeps both keys unique at any moment, so a file that repeats one was edited or
stitched together; it is refused, naming both entries, rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Sequence

from tmnb.snapshot.model import Node, Pod


def duplicate_node(nodes: Sequence[Node], at: str) -> tuple[str, str] | None:
    """(JSON path of the second entry, message naming the first) for a node name listed twice."""
    seen: dict[str, int] = {}
    for i, node in enumerate(nodes):
        if node.name in seen:
            return f"{at}[{i}]", f"node {node.name!r} is listed twice, at {at}[{seen[node.name]}] and here"
        seen[node.name] = i
    return None


def duplicate_pod(pods: Sequence[Pod], at: str) -> tuple[str, str] | None:
    """(JSON path of the second entry, message naming the first) for a pod uid, or a namespace/name,
    listed twice: either is one pod, and the API server never holds two with the same."""
    by_uid: dict[str, int] = {}
    by_name: dict[str, int] = {}
    for i, pod in enumerate(pods):
        name = f"{pod.namespace}/{pod.name}"
        for seen, key, what in ((by_uid, pod.uid, f"uid {pod.uid!r}"), (by_name, name, f"name {name}")):
            if key in seen:
                j = seen[key]
                first = f"{pods[j].namespace}/{pods[j].name} (uid {pods[j].uid})"
                return (
                    f"{at}[{i}]",
                    f"pod {name} (uid {pod.uid}) has the {what} of {at}[{j}], {first}: one pod listed twice",
                )
            seen[key] = i
    return None
