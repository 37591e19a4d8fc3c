import pytest

from tmnb.redact import PLACEHOLDER, redact_argv, redact_log_line, redact_text, redact_value, secret_in


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


@pytest.mark.parametrize(
    ("text", "gone"),
    [
        ("Authorization: Bearer abcdefgh12345678", "abcdefgh12345678"),
        ("client-key-data: LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0t", "LS0tLS1CRUdJTi"),
        ("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----", "MHcCAQEE"),
        ("token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln", "eyJzdWIiOiJ4In0"),
        ("pull failed for AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
        ("GET https://admin:hunter2@prom:9090/api", "hunter2"),
        ('DB_PASSWORD="s3cr3t-value"', "s3cr3t-value"),
        ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI"),
    ],
)
def test_redact_text_removes_what_credentials_look_like(text: str, gone: str) -> None:
    out = redact_text(text)
    assert gone not in out and PLACEHOLDER in out
    assert redact_text(out) == out  # idempotent: stored text can be loaded and saved again


@pytest.mark.parametrize(
    "text",
    [
        "Resources cannot be allocated with Topology locality",
        "couldn't find key password in Secret app/db-creds",
        "--tls-private-key-file=/var/lib/kubelet/pki/kubelet.key",
        "reservedSystemCPUs: 0-1,64-65",
        "--authorization-mode=Webhook",
    ],
)
def test_redact_text_keeps_ordinary_text(text: str) -> None:
    assert redact_text(text) == text


def test_redact_value_hides_secret_named_entries_and_header_values() -> None:
    value = {"staticPodURLHeader": {"Authorization": ["Bearer x"]}, "note": ["password=1"], "cpus": 4}
    assert redact_value(value) == {"staticPodURLHeader": {"Authorization": PLACEHOLDER},
                                   "note": [f"password={PLACEHOLDER}"], "cpus": 4}  # fmt: skip


def test_snapshot_text_is_redacted_when_built_and_when_loaded() -> None:
    from tmnb.snapshot.model import Event, Issue

    event = Event(namespace="a", kind="Pod", name="p", reason="r", message="Bearer abcdefgh12345678", type="Warning")
    assert "abcdefgh" not in event.message
    assert "AKIAIOSFODNN7EXAMPLE" not in Issue(source="kubelet config", message="line 3: AKIAIOSFODNN7EXAMPLE").message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            'I1202 1 flags.go:64] "FLAG: --bootstrap-token=\\"abc.def\\"" token="s3cr3t" pod="a/b"',
            f'I1202 1 flags.go:64] "FLAG: --bootstrap-token=\\"{PLACEHOLDER}\\"" token="{PLACEHOLDER}" pod="a/b"',
        ),
        ("I1202 1 flags.go:64] FLAG: --token=abc123 --v=4", f"I1202 1 flags.go:64] FLAG: --token={PLACEHOLDER} --v=4"),
        ('{"msg":"x","apiToken":"zzz","v":0}', f'{{"msg":"x","apiToken":"{PLACEHOLDER}","v":0}}'),
        ("Authorization: Bearer abcdefghijkl", f"Authorization: Bearer {PLACEHOLDER}"),
        ('err="Get https://kube:hunter2@10.0.0.1:6443/api"', f'err="Get https://kube:{PLACEHOLDER}@10.0.0.1:6443/api"'),
        ("jwt eyJhbGciOiJSUzI1.eyJzdWIiOiIx.c2lnbmF0dXJl end", f"jwt {PLACEHOLDER} end"),
    ],
)
def test_redact_log_line(line, expected):
    assert redact_log_line(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        'FLAG: --tls-private-key-file="/var/lib/kubelet/pki/k.key"',
        '"Best TopologyHint" bestHint={"NUMANodeAffinity":1} pod="app/x"',
        '{"msg":"Pod admission denied","pod":{"name":"token-cache-0","namespace":"app"},"v":0}',
    ],
)
def test_redact_log_line_keeps_what_is_not_a_secret(line):
    assert redact_log_line(line) == line
