"""The sandbox executor against a real Sandbox: the node's files are its directory, the kubelet is
stopped and started through the sandbox API, and the journal is read back from the time given."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from factories import node, pod, settings, snapshot
from tmnb.errors import RolloutError
from tmnb.parse.klog import parse_kubelet_log
from tmnb.rollout.executors import make_executor
from tmnb.rollout.executors.sandbox import SandboxClient, SandboxExecutor, klog_lines_since
from tmnb.snapshot import KubeletInfo
from tmnb.twin.sandbox import Sandbox

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "single-numa-node"}
CONFIG = "/var/lib/kubelet/config.yaml"
STATE = "/var/lib/kubelet/cpu_manager_state"


@pytest.fixture
def box(tmp_path: Path) -> Iterator[tuple[Sandbox, Path]]:
    nodes = [node(n, kubelet=KubeletInfo(settings=settings(**STATIC))) for n in ("w1", "w2")]
    with Sandbox(snapshot(nodes, [pod("web-1", "w1")]), tmp_path / "run", controller_interval=0.1) as sandbox:
        yield sandbox, sandbox.write_kubeconfig(tmp_path / "kubeconfig")


def _ready(sandbox: Sandbox, name: str) -> str:
    conditions = sandbox.cluster.get("nodes", "", name)["status"]["conditions"]
    return next(c["status"] for c in conditions if c["type"] == "Ready")


def _configz(sandbox: Sandbox, name: str) -> dict:  # type: ignore[type-arg]
    return sandbox.cluster.configz(name)["kubeletconfig"]


@pytest.mark.clock
def test_config_edit_stop_start_and_journal(box: tuple[Sandbox, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox, kubeconfig = box
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))  # the default kubeconfig
    ex = make_executor("sandbox", "w1")
    assert isinstance(ex, SandboxExecutor) and Path(ex.root) == sandbox.cluster.kubelets["w1"].root
    time.sleep(1.1)  # journal times have a resolution of a second in --since
    since = datetime.now(UTC)
    doc = yaml.safe_load(ex.read(CONFIG) or b"")
    doc["topologyManagerPolicy"] = "restricted"
    ex.write(CONFIG, yaml.safe_dump(doc).encode(), 0o644)
    ex.kubelet("stop")
    assert _ready(sandbox, "w1") == "Unknown" and not sandbox.cluster.kubelets["w1"].running
    ex.kubelet("start")
    assert _ready(sandbox, "w1") == "True" and _configz(sandbox, "w1")["topologyManagerPolicy"] == "restricted"
    journal = ex.journal_since(since)
    log = parse_kubelet_log(journal)
    assert [r.name for r in log.records if r.name] == [
        "kubelet_stop",
        "kubelet_start",
        "kubelet_version",
        "topology_manager_created",
    ]  # the start-up of the sandbox itself is before ``since``
    assert log.records[-1].values["topologyPolicyName"] == "restricted"
    assert ex.commands[-3:] == [
        ["POST", "/sandbox/v1/nodes/w1/stop"],
        ["POST", "/sandbox/v1/nodes/w1/start"],
        ["GET", "/sandbox/v1/nodes/w1/journal"],
    ]


@pytest.mark.clock
def test_cpu_policy_change_needs_the_state_file_moved(box: tuple[Sandbox, Path]) -> None:
    """The motions of a cpuManagerPolicy change: a start with the old checkpoint leaves the node
    down (a state, not a failed command: the steps see it as NotReady); moving the file aside fixes it."""
    sandbox, kubeconfig = box
    ex = make_executor("sandbox", "w2", kubeconfig=kubeconfig)
    since = datetime.now(UTC).replace(microsecond=0)
    doc = yaml.safe_load(ex.read(CONFIG) or b"")
    doc |= {"cpuManagerPolicy": "none", "reservedSystemCPUs": ""}
    ex.write(CONFIG, yaml.safe_dump(doc).encode(), 0o644)
    ex.kubelet("restart")
    assert _ready(sandbox, "w2") == "Unknown"
    assert "please drain node and remove policy state file" in ex.journal_since(since)
    old = ex.read(STATE)
    ex.kubelet("stop")
    assert ex.move_aside(STATE, ".tmnb-c1") == STATE + ".tmnb-c1"
    ex.kubelet("start")
    assert _ready(sandbox, "w2") == "True" and _configz(sandbox, "w2")["cpuManagerPolicy"] == "none"
    assert ex.read(STATE + ".tmnb-c1") == old and json.loads(old or b"")["policyName"] == "static"


def test_client_errors_name_the_node_and_never_the_token(box: tuple[Sandbox, Path], tmp_path: Path) -> None:
    sandbox, kubeconfig = box
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    api = SandboxClient.from_kubeconfig(kubeconfig)
    with pytest.raises(RolloutError, match=r"^node w9: sandbox API POST nodes/w9/restart: HTTP 404"):
        api.kubelet("w9", "restart")
    wrong = SandboxClient(sandbox.url, "not-the-token", sandbox.cert.read_text() if sandbox.cert else None)
    with pytest.raises(RolloutError, match="HTTP 401") as err:
        wrong.node_root("w1")
    assert token not in str(err.value) and token not in repr(api)
    with pytest.raises(RolloutError, match="no context named 'prod'"):
        SandboxClient.from_kubeconfig(kubeconfig, context="prod")
    with pytest.raises(RolloutError, match="cannot read the kubeconfig"):
        SandboxClient.from_kubeconfig(tmp_path / "missing")
    untrusted = SandboxClient(sandbox.url, token, None)  # the system CAs do not know the sandbox
    with pytest.raises(
        RolloutError, match=r"node w1: sandbox API GET nodes/w1/root: ConnectError: .*CERTIFICATE_VERIFY_FAILED"
    ) as err:
        untrusted.node_root("w1")
    assert token not in str(err.value)


@pytest.mark.clock
def test_klog_lines_since() -> None:
    """Worked by hand from klog's rule (tmnb.parse.klog): a yearless line takes the latest year that
    does not put it more than a day after the reference, which is ``now`` (``since`` when later).
    Read five seconds into 2027 (or in July 2027), I1231 is 2026-12-31 23:59:59 and E0101/I0101 are
    2027-01-01; ``since`` counts whole seconds, as ``journalctl --since``; the continuation line
    goes with the line above it."""
    old, new_year, later = (
        'I1231 23:59:59.000000    7 x] "old"\n',
        'E0101 00:00:01.500000    7 x] "new year"\n  continuation of new year\n',
        'I0101 00:00:02.000000    7 x] "later"\n',
    )
    text = old + new_year + later
    now = datetime(2027, 1, 1, 0, 0, 5, tzinfo=UTC)

    def since(*when: int, read_at: datetime = now) -> str:
        return klog_lines_since(text, datetime(*when, tzinfo=UTC), now=read_at)

    assert since(2027, 1, 1) == new_year + later
    assert since(2027, 1, 1, read_at=datetime(2027, 7, 1, tzinfo=UTC)) == new_year + later
    assert since(2027, 1, 1, 0, 0, 1, 900_000) == new_year + later  # 00:00:01.9 -> 00:00:01: 01.5 is at it
    assert since(2027, 1, 1, 0, 0, 2) == later  # 00:00:01.5 is before 00:00:02
    assert since(2026, 12, 31, 23, 0) == text  # 2026-12-31 23:59:59 is after 23:00
