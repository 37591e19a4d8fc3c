import pytest

from tmnb.redact import PLACEHOLDER, redact_argv


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--token=abc123"], [f"--token={PLACEHOLDER}"]),
        (["--bootstrap-token", "abc.def", "--v=2"], ["--bootstrap-token", PLACEHOLDER, "--v=2"]),
        (["KUBELET_API_KEY=xyz"], [f"KUBELET_API_KEY={PLACEHOLDER}"]),
        (
            ["--tls-private-key-file=/var/lib/kubelet/pki/kubelet.key"],
            ["--tls-private-key-file=/var/lib/kubelet/pki/kubelet.key"],
        ),
        (["--topology-manager-policy=restricted"], ["--topology-manager-policy=restricted"]),
        (["--kubeconfig=/etc/kubernetes/kubelet.conf"], ["--kubeconfig=/etc/kubernetes/kubelet.conf"]),
    ],
)
def test_redact_argv(argv, expected):
    assert redact_argv(argv) == expected
