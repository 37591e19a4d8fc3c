import pytest

from tmnb.redact import PLACEHOLDER, redact_argv, secret_in


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


@pytest.mark.parametrize(
    ("name", "value", "secret"),
    [
        ("prometheus_url", "https://admin:hunter2@prom.example:9090", True),
        ("prometheus_url", "https://prom.example:9090", False),
        ("prometheus_url", "env:PROM_URL", False),
        ("api_token", "abc", True),
        ("api_token", "env:TOKEN", False),
        ("queries", ["up", "http://u:p@x/"], True),
        ("target", {"topologyManagerPolicy": "restricted"}, False),
    ],
)
def test_secret_in(name, value, secret):
    assert secret_in(name, value) is secret
