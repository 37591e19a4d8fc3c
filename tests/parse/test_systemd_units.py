"""The kubelet command line as systemd builds it from kubeadm's unit files and env files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.errors import InputError
from tmnb.parse.kubelet_flags import split_proc_cmdline
from tmnb.parse.systemd import order_unit_files, parse_env_file, parse_systemd_units, split_words

SYSTEMD = Path(__file__).parents[1] / "fixtures" / "node" / "kubelet" / "systemd"
UNIT = "/lib/systemd/system/kubelet.service"
KUBEADM = "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf"
ENV_FILES = {
    "/var/lib/kubelet/kubeadm-flags.env": (SYSTEMD / "kubeadm-flags.env").read_text(),
    "/etc/default/kubelet": (SYSTEMD / "etc-default-kubelet").read_text(),
}


def kubeadm_units() -> list[tuple[str, str]]:
    return [(UNIT, (SYSTEMD / "kubelet.service").read_text()), (KUBEADM, (SYSTEMD / "10-kubeadm.conf").read_text())]


def test_kubeadm_unit_expands_like_proc_cmdline() -> None:
    ex = parse_systemd_units(kubeadm_units(), env_files=ENV_FILES)
    cmdline = split_proc_cmdline((SYSTEMD.parent / "proc-cmdline.bin").read_bytes(), source="/proc/4242/cmdline")
    assert list(ex.argv) == cmdline
    assert ex.exec_source == KUBEADM
    assert ex.missing_optional_env_files == ()


def test_every_word_knows_the_file_to_edit() -> None:
    ex = parse_systemd_units(kubeadm_units(), env_files=ENV_FILES)
    origin = dict(zip(ex.argv, ex.origins, strict=True))
    assert origin["--topology-manager-policy=single-numa-node"] == "$KUBELET_EXTRA_ARGS from /etc/default/kubelet"
    assert origin["--config=/var/lib/kubelet/config.yaml"] == f"$KUBELET_CONFIG_ARGS from Environment= in {KUBEADM}"
    assert origin["/usr/bin/kubelet"] == f"ExecStart= in {KUBEADM}"


def test_optional_env_files_may_be_missing() -> None:
    ex = parse_systemd_units(kubeadm_units(), env_files={})
    assert ex.argv[-1] == "--config=/var/lib/kubelet/config.yaml"
    assert ex.missing_optional_env_files == ("/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet")


def test_required_env_file_must_be_provided() -> None:
    unit = "[Service]\nEnvironmentFile=/etc/sysconfig/kubelet\nExecStart=/usr/bin/kubelet $KUBELET_EXTRA_ARGS\n"
    with pytest.raises(InputError, match="EnvironmentFile=/etc/sysconfig/kubelet is required"):
        parse_systemd_units([(UNIT, unit)], env_files={})


def test_env_file_overrides_environment_whatever_the_order() -> None:
    unit = (
        "[Service]\nEnvironmentFile=/e\nEnvironment=ARGS=--max-pods=10\n"
        'ExecStart=/usr/bin/kubelet $ARGS "${ARGS}" ${MISSING}x $$HOME\n'
    )
    ex = parse_systemd_units([(UNIT, unit)], env_files={"/e": "ARGS='--max-pods=20 --v=2'\n"})
    assert ex.argv == ("/usr/bin/kubelet", "--max-pods=20", "--v=2", "--max-pods=20 --v=2", "x", "$HOME")


def test_second_exec_start_without_reset_is_refused_like_systemd() -> None:
    dropin = "[Service]\nExecStart=/usr/local/bin/kubelet --v=2\n"
    with pytest.raises(InputError, match="more than one ExecStart"):
        parse_systemd_units([(UNIT, (SYSTEMD / "kubelet.service").read_text()), ("/x.conf", dropin)], env_files={})


def test_resets_prefixes_continuations_and_other_sections() -> None:
    unit = (
        "[Unit]\nExecStart=/not/the/service\n[Service]\nEnvironment=A=1\nEnvironment=\nEnvironment=B=2\n"
        "ExecStart=-/usr/bin/kubelet \\\n  --b=$B --a=${A}\n"
    )
    ex = parse_systemd_units([(UNIT, unit)], env_files={})
    assert ex.argv == ("/usr/bin/kubelet", "--b=$B", "--a=")
    colon = parse_systemd_units(
        [(UNIT, "[Service]\nEnvironment=A=1\nExecStart=:/usr/bin/kubelet ${A}\n")], env_files={}
    )
    assert colon.argv == ("/usr/bin/kubelet", "${A}")


@pytest.mark.parametrize(
    ("units", "message"),
    [
        ([(UNIT, "[Service]\nRestart=always\n")], "no ExecStart"),
        ([(UNIT, "[Service]\nExecStart=$EMPTY\n")], "empty command line"),
        ([(UNIT, '[Service]\nExecStart=/usr/bin/kubelet "--v=2\n')], "unbalanced"),
    ],
)
def test_malformed_units(units: list[tuple[str, str]], message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_systemd_units(units, env_files={})


def test_env_file_syntax() -> None:
    text = (
        '# comment\n; also a comment\nA=plain value  \nB="quoted \\"inner\\" value"\nC=\'single $x\'\n'
        "export D=ignored by systemd\nE=continued \\\nline\n9BAD=x\nno equals sign\n"
    )
    env = parse_env_file(text, source="/etc/default/kubelet")
    assert env.values == {"A": "plain value", "B": 'quoted "inner" value', "C": "single $x", "E": "continued  line"}
    assert env.ignored == ("export D=ignored by systemd", "9BAD=x", "no equals sign")


def test_word_splitting() -> None:
    assert split_words('a "b c" \'d e\' f\\ g "h\\"i"', source="s") == ["a", "b c", "d e", "f g", 'h"i']


def test_unit_file_precedence() -> None:
    paths = [
        "/lib/systemd/system/kubelet.service",
        "/etc/systemd/system/kubelet.service",
        "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "/etc/systemd/system/kubelet.service.d/05-limits.conf",
        "/run/systemd/system/kubelet.service.d/20-extra.conf",
        "/etc/systemd/system/kubelet.service.d/README",
    ]
    assert order_unit_files(paths) == [
        "/etc/systemd/system/kubelet.service",
        "/etc/systemd/system/kubelet.service.d/05-limits.conf",
        "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "/run/systemd/system/kubelet.service.d/20-extra.conf",
    ]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty command line"),
        (b"\x00", "empty command line"),
        (b"/usr/bin/kubelet --v=2", "no NUL"),
        (b"\xff\x00", "UTF-8"),
    ],
)
def test_malformed_proc_cmdline(data: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        split_proc_cmdline(data, source="/proc/1/cmdline")
