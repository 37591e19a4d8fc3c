"""A node's files written as on a real node, read back with the same parsers the collector uses."""

import dataclasses
import json
import shutil

import pytest

from factories import layered_node, pod
from tmnb.cli.main import main
from tmnb.errors import InputError
from tmnb.sources.node_render import FLAGS_ENV, write_node_root
from tmnb.sources.node_root import read_node_root


@pytest.fixture
def busy_node():
    return layered_node()


def test_round_trip(busy_node, tmp_path):
    back = read_node_root(write_node_root(busy_node, tmp_path), name="w1")
    assert back.cpus == busy_node.cpus
    assert [(z.id, z.cpus, z.memory_total, z.distances) for z in back.numa] == [
        (0, "0-3,8-11", 64 << 30, {0: 10, 1: 21}),
        (1, "4-7,12-15", 64 << 30, {0: 21, 1: 10}),
    ]
    policy = back.kubelet.settings["topologyManagerPolicy"]
    assert (policy.value, policy.source, policy.detail) == ("single-numa-node", "flag", "--topology-manager-policy")
    assert [(o.source, o.value) for o in policy.overridden][-1] == ("file", "best-effort")
    for name in ("cpuManagerPolicy", "reservedSystemCPUs", "memoryManagerPolicy", "reservedMemory"):
        assert back.kubelet.settings[name].value == busy_node.kubelet.settings[name].value, name
    exclusive = {(a.pod_uid, a.container): (a.cpuset, a.memory) for a in busy_node.allocations if a.exclusive}
    assert {(a.pod_uid, a.container): (a.cpuset, a.memory) for a in back.allocations} == exclusive
    gpu = next(d for d in back.devices if d.id == "gpu2")
    assert gpu.numa == [1]  # allocated: its NUMA node is in the checkpoint
    assert [i.source for i in back.issues] == ["device checkpoint"]  # the others' NUMA is not on disk


def test_missing_pieces_become_issues(busy_node, tmp_path):
    root = write_node_root(busy_node, tmp_path)
    (root / "var/lib/kubelet/cpu_manager_state").write_text('{"policyName": "static", "defaultCpu')
    shutil.rmtree(root / "usr/lib/systemd")
    shutil.rmtree(root / "etc/systemd")
    back = read_node_root(root, name="w1")
    sources = {i.source: i.message for i in back.issues}
    assert "cpu_manager_state" in sources and "kubelet unit" in sources
    assert back.kubelet.settings["cpuManagerPolicy"].value == "static"  # the config file was still read
    assert back.numa and back.cpus


def test_not_a_node_root(tmp_path):
    with pytest.raises(InputError, match="expected a copy of a node's files"):
        read_node_root(tmp_path, name="x")


def test_whatif_from_node_root(busy_node, tmp_path, capsys):
    root = write_node_root(busy_node, tmp_path / "w1")
    assert "--topology-manager-policy=single-numa-node" in (root / FLAGS_ENV).read_text()
    pods = [pod("pg-0", "w1", cpu="4"), pod("train", "w1", cpu="2"), pod("other", "elsewhere", cpu="2")]
    items = [
        {
            "metadata": {"name": p.name, "namespace": p.namespace, "uid": p.uid, "creationTimestamp": p.created},
            "spec": {
                "nodeName": p.node,
                "containers": [
                    {
                        "name": "main",
                        "resources": {"requests": p.containers[0].requests, "limits": p.containers[0].limits},
                    }
                ],
            },
            "status": {"phase": "Running", "qosClass": "Guaranteed"},
        }
        for p in pods
    ]
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": items}))
    code = main(
        [
            "whatif",
            "--node-root",
            str(root),
            "--pods",
            str(tmp_path / "pods.json"),
            "--set",
            "topologyManagerPolicy=restricted",
            "--format",
            "json",
        ]
    )
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert [(r["kind"], r.get("pod"), r.get("admitted")) for r in records] == [
        ("pod", "pg-0", True),
        ("pod", "train", True),
        ("node", None, None),  # the node after its pods
    ]
    assert all(r["node"] == "w1" for r in records)
    bad = main(
        [
            "whatif",
            "--node-root",
            str(root),
            "--pods",
            str(tmp_path / "pods.json"),
            "--node-name",
            "zz",
            "--set",
            "topologyManagerPolicy=restricted",
        ]
    )
    assert bad == 2
    assert "no pod is bound to node 'zz'" in capsys.readouterr().err


CONFIG = "var/lib/kubelet/config.yaml"
LOAD = (
    "failed to load kubelet config file, path: /var/lib/kubelet/config.yaml, error: failed to load Kubelet config "
    "file /var/lib/kubelet/config.yaml, error "
)


def _break_config(root, how):
    cfg = root / CONFIG
    if how == "missing":
        cfg.unlink()
    elif how == "empty":
        cfg.write_text("")
    elif how == "directory":
        cfg.unlink()
        cfg.mkdir()
    elif how == "loop":
        cfg.unlink()
        cfg.symlink_to("config.yaml")
    elif how == "tab":
        cfg.write_text(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n\tcpuManagerPolicy: static\n"
        )
    elif how == "latin1":
        cfg.write_bytes(b"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n# r\xe9serv\xe9\n")


@pytest.mark.parametrize(
    ("how", "detail"),
    [
        (
            "missing",
            'failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: open '
            "/var/lib/kubelet/config.yaml: no such file or directory",
        ),
        ("empty", 'kubelet config file "/var/lib/kubelet/config.yaml" was empty'),
        (
            "directory",
            'failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: read '
            "/var/lib/kubelet/config.yaml: is a directory",
        ),
        (
            "loop",
            'failed to read kubelet config file "/var/lib/kubelet/config.yaml", error: open '
            "/var/lib/kubelet/config.yaml: too many levels of symbolic links",
        ),
        ("tab", "failed to decode: malformed YAML"),
        ("latin1", "failed to decode: not UTF-8 text: byte 0xe9"),
    ],
)
def test_a_config_file_the_kubelet_cannot_load_is_its_refusal_not_defaults(busy_node, tmp_path, capsys, how, detail):
    root = write_node_root(busy_node, tmp_path / "w1")
    _break_config(root, how)
    node = read_node_root(root, name="w1")
    (issue,) = [i for i in node.issues if i.source == "kubelet config"]
    assert issue.severity == "error" and issue.message.startswith(LOAD + detail)
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []}))
    code = main(
        [
            "whatif",
            "--node-root",
            str(root),
            "--pods",
            str(tmp_path / "pods.json"),
            "--set",
            "topologyManagerPolicy=restricted",
        ]
    )
    out = capsys.readouterr().out
    assert code == 3
    assert "kubelet would not start" in out or issue.message[:60] in out


DROPINS = "etc/kubernetes/kubelet.conf.d"
HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
MERGE = (
    "failed to merge kubelet configs: failed to walk through kubelet dropin directory "
    '"/etc/kubernetes/kubelet.conf.d": failed to load kubelet dropin file, path: /etc/kubernetes/kubelet.conf.d/'
)


def _pods_file(tmp_path):
    (tmp_path / "pods.json").write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []}))
    return str(tmp_path / "pods.json")


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (
            "topologyManagerScope: pod\n",
            "60-bad.conf, error: Object 'Kind' is missing in 'topologyManagerScope: pod\n'",
        ),
        (
            HEADER + "topologyManagerScope: pod\ntopologyManagerScope: container\n",
            '60-bad.conf, error: strict decoding error: yaml: unmarshal errors:\n  line 4: key "topologyManagerScope" '
            "already set in map",
        ),
        ("", '60-bad.conf, error: kubelet config file "/etc/kubernetes/kubelet.conf.d/60-bad.conf" was empty'),
    ],
)
def test_a_dropin_the_kubelet_refuses_is_its_refusal(busy_node, tmp_path, capsys, body, detail):
    """Drop-ins are decoded strictly (no lenient fallback): a missing kind, a duplicated key or an empty
    file stops the kubelet, and whatif says so in the kubelet's words (exit 3)."""
    root = write_node_root(layered_node(), tmp_path / "w1")
    (root / DROPINS / "60-bad.conf").write_text(body)
    node = read_node_root(root, name="w1")
    (issue,) = [i for i in node.issues if i.source == "kubelet drop-ins"]
    assert issue.severity == "error" and issue.message == MERGE + detail
    args = ["whatif", "--node-root", str(root), "--pods", _pods_file(tmp_path), "--set", "topologyManagerScope=pod"]
    assert main(args) == 3
    assert f"tmnb: w1: the kubelet would not start: {MERGE + detail}" in capsys.readouterr().err


def test_unknown_fields_are_findings_not_refusals(busy_node, tmp_path):
    """The kubelet ignores an unknown field: in the --config file after its lenient-decoding log line, in
    a drop-in silently. Neither stops it; both are lint findings on the node."""
    from tmnb.analysis.lint import lint
    from tmnb.replay import config_refusal
    from tmnb.snapshot import Snapshot, SnapshotSource

    root = write_node_root(layered_node(), tmp_path / "w1")
    (root / DROPINS / "60-typo.conf").write_text(HEADER + "topologyManagerScop: container\n")
    with (root / CONFIG).open("a") as config:
        config.write("cpuManagerPolicyOption: {full-pcpus-only: 'true'}\n")
    node = read_node_root(root, name="w1")
    assert config_refusal(node) is None
    snap = Snapshot(captured_at="2026-12-01T00:00:00Z", source=SnapshotSource(kind="bundle"), nodes=[node])
    found = {f.setting: f.explanation for f in lint(snap, {"topologyManagerPolicy": "restricted"})}
    assert found["cpuManagerPolicyOption"] == (
        '/var/lib/kubelet/config.yaml: unknown field "cpuManagerPolicyOption" (did you mean cpuManagerPolicyOptions?); '
        'the kubelet ignores it after logging "Using lenient decoding as strict decoding failed" '
        'err="strict decoding error: unknown field \\"cpuManagerPolicyOption\\""'
    )
    assert found["topologyManagerScop"].startswith(
        '/etc/kubernetes/kubelet.conf.d/60-typo.conf: unknown field "topologyManagerScop" (did you mean '
        "topologyManagerScope?); the kubelet ignores it without logging anything"
    )


STATE = "var/lib/kubelet/cpu_manager_state"
RESTORE = (
    "start cpu manager error: could not restore state from checkpoint: {}, please drain this node and delete the CPU "
    'manager checkpoint file "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet'
)


def _corrupt_v4(root):
    from tmnb.parse.gojson import string_checksum

    data = json.dumps({"policyName": "static", "defaultCpuSet": "0,3-8,11-15"}, separators=(",", ":"))
    bad = {"policyName": "static", "defaultCpuSet": "", "checksum": 0, "data": data,
           "dataChecksum": string_checksum(data) ^ 1}  # fmt: skip
    (root / STATE).write_text(json.dumps(bad))


def _whatif(root, tmp_path, mode, *settings):
    args = ["whatif", "--node-root", str(root), "--pods", _pods_file(tmp_path), "--mode", mode]
    for item in settings or ("topologyManagerPolicy=restricted",):
        args += ["--set", item]
    return main(args)


@pytest.mark.parametrize(
    ("break_state", "settings", "inner"),
    [
        # a v4 file is 1.37's: its payload stops a 1.37 kubelet (a 1.36 one reads the fields beside it)
        (_corrupt_v4, ("kubeletVersion=1.37",), "could not load v4 checkpoint: checkpoint is corrupted"),
        (
            lambda root: (root / STATE).write_text('{"policyName":"static","defaultCpuSet":"0,3-8,1l","checksum":0}'),
            (),
            'could not parse default cpu set "0,3-8,1l": strconv.Atoi: parsing "1l": invalid syntax',
        ),
        (  # the policy comparison comes before the CPU lists are parsed
            lambda root: (root / STATE).write_text('{"policyName":"static","defaultCpuSet":"0,3-8,1l","checksum":0}'),
            ("cpuManagerPolicy=none", "reservedSystemCPUs="),
            'configured policy "none" differs from state checkpoint policy "static"',
        ),
        (lambda root: None, ("cpuManagerPolicy=none", "reservedSystemCPUs="),
         'configured policy "none" differs from state checkpoint policy "static"'),
    ],
)  # fmt: skip
def test_restart_with_a_checkpoint_the_kubelet_refuses_is_its_refusal(tmp_path, capsys, break_state, settings, inner):
    """--mode restart keeps the state files: one the kubelet cannot restore stops it, in its words
    (exit 3). A drain evicts pods but deletes no file: the file stops the kubelet there too, unless
    the change moves it aside (a cpuManagerPolicy change spoils cpu_manager_state)."""
    root = write_node_root(layered_node(), tmp_path / "w1")
    break_state(root)
    assert _whatif(root, tmp_path, "restart", *settings) == 3
    refusal = f"tmnb: w1: the kubelet would not start: {RESTORE.format(inner)}"
    assert refusal in capsys.readouterr().err
    moved = any(s.startswith("cpuManagerPolicy=") for s in settings)
    assert _whatif(root, tmp_path, "drain", *settings) == (0 if moved else 3)
    assert (refusal in capsys.readouterr().err) is not moved


def test_a_state_file_is_judged_by_the_kubelet_that_restarts_over_it(tmp_path, capsys):
    """The collected record says which readers refuse the file: a corrupt v4 payload stops 1.37 only (1.36
    reads the v2 fields beside it), and a 1.36 pod-level (v3) file stops a downgrade to 1.35, whose v2
    checksum does not cover the podEntries (#139069)."""
    root = write_node_root(layered_node(), tmp_path / "w1")
    _corrupt_v4(root)
    record = next(f for f in read_node_root(root, name="w1").state_files if f.manager == "cpu")
    assert sorted(record.refused_by or {}) == ["1.37", "1.37+PodLevelResourceManagers"]
    assert _whatif(root, tmp_path, "restart") == 0  # the node's own 1.36
    capsys.readouterr()
    # cpumanager state_checkpoint_test.go "Restore valid v3 checkpoint with PodLevelResourceManagers enabled"
    v3 = (
        '{"policyName": "none", "defaultCPUSet": "1-3", "entries": {"pod": {"container1": "4-6", "container2": "1-3"}},'
        ' "podEntries": {"pod": {"cpuSet": "4-6"}}, "checksum": 2649431787}'
    )
    (root / STATE).write_text(v3)
    record = next(f for f in read_node_root(root, name="w1").state_files if f.manager == "cpu")
    assert sorted(record.refused_by or {}) == ["1.33", "1.34", "1.35", "1.36", "1.37"]
    assert _whatif(root, tmp_path, "restart", "topologyManagerPolicy=restricted", "kubeletVersion=1.35") == 3
    assert (
        f"tmnb: w1: the kubelet would not start: {RESTORE.format('checkpoint is corrupted')}" in capsys.readouterr().err
    )


def test_restart_with_a_memory_checkpoint_the_kubelet_refuses(tmp_path, capsys):
    # the shared pool the exclusive CPUs leave: without it the rendered cpu_manager_state says
    # "defaultCpuSet": "" beside its entries, a file the CPU manager refuses first ("default cpuset
    # cannot be empty") now that restart mode restores the file instead of recomputing the pool
    node = dataclasses.replace(layered_node(), shared_pool="0,3,5-8,11,13-15")
    root = write_node_root(node, tmp_path / "w1")
    (root / "var/lib/kubelet/memory_manager_state").write_text(
        '{"policyName":"Static","machineState":{},"checksum":0,"dataChecksum":1234}'
    )
    assert _whatif(root, tmp_path, "restart", "topologyManagerPolicy=restricted", "kubeletVersion=1.37") == 3
    assert (
        "start memory manager error: could not restore state from checkpoint: could not load v3 checkpoint: failed to "
        "deserialize memory manager checkpoint data: unexpected end of JSON input, please drain this node and delete "
        'the memory manager checkpoint file "/var/lib/kubelet/memory_manager_state" before restarting Kubelet'
    ) in capsys.readouterr().err


def test_restart_on_a_state_file_tmnb_cannot_read_is_not_predicted(tmp_path):
    from tmnb.analysis.whatif import replay_node

    root = write_node_root(layered_node(), tmp_path / "w1")
    (root / STATE).write_text('{"policyName":"static","defaultCpuSet":"0-1","entries":{"3f2b9c":"2-3"},"checksum":0}')
    node = read_node_root(root, name="w1")
    replay = replay_node(node, [], {"topologyManagerPolicy": "restricted"}, mode="restart")
    assert not replay.refused and replay.unmodelled.startswith("not predicted: the kubelet restores /var/lib/kubelet/")
    drained = replay_node(node, [], {"topologyManagerPolicy": "restricted"}, mode="drain")
    assert drained.unmodelled == replay.unmodelled  # a drain leaves the file in place
    moved = replay_node(node, [], {"cpuManagerPolicy": "none", "reservedSystemCPUs": ""}, mode="drain")
    assert not moved.unmodelled and not moved.refused  # the policy change moves it aside


def test_kubeadm_is_known_from_its_files(busy_node, tmp_path):
    """kubeadm's kubelet has its flags file and its drop-in of the unit (10-kubeadm.conf); without
    both, nothing says kubeadm manages the node."""
    from tmnb.sources.node_render import UNIT_DROPIN

    root = write_node_root(busy_node, tmp_path)
    assert read_node_root(root, name="w1").kubelet.kubeadm_managed
    (root / FLAGS_ENV).unlink()
    assert read_node_root(root, name="w1").kubelet.kubeadm_managed  # the unit's drop-in still says so
    (root / UNIT_DROPIN).rename(root / UNIT_DROPIN.replace("10-kubeadm.conf", "10-provisioner.conf"))
    assert not read_node_root(root, name="w1").kubelet.kubeadm_managed
