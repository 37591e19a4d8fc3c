"""The kubelet command line as systemd builds it: unit + drop-ins, Environment=, EnvironmentFile=, ExecStart=.

kubeadm nodes start the kubelet as ``ExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS
$KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS`` with the variables coming from
10-kubeadm.conf, /var/lib/kubelet/kubeadm-flags.env and /etc/default/kubelet (or
/etc/sysconfig/kubelet). Which file a flag came from is what an SRE has to edit, so every word of
the resulting argv keeps its origin.

Rules reproduced from systemd.exec/systemd.service: EnvironmentFile= values override Environment=
ones; an empty assignment resets the list; ``$VAR`` as a whole word splits into words, ``${VAR}``
substitutes in place; ``$$`` is a literal dollar; a ``:`` prefix on ExecStart= disables expansion.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from tmnb.errors import InputError

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHOLE_VAR = re.compile(r"^\$([A-Za-z_][A-Za-z0-9_]*)$")
_BRACED_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$\$")
_C_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    '"': '"',
    "'": "'",
    "s": " ",
}
_UNIT_DIR_PRIORITY = (
    "/etc/systemd/system",
    "/run/systemd/system",
    "/usr/local/lib/systemd/system",
    "/usr/lib/systemd/system",
    "/lib/systemd/system",
)


@dataclass(frozen=True)
class EnvFile:
    """An EnvironmentFile= as systemd reads it; ``ignored`` lists lines systemd skips as invalid."""

    values: dict[str, str]
    ignored: tuple[str, ...]


@dataclass(frozen=True)
class SystemdExec:
    """The kubelet's argv after systemd's expansion; ``origins[i]`` says where ``argv[i]`` came from."""

    argv: tuple[str, ...]
    origins: tuple[str, ...]
    environment: dict[str, str]
    exec_source: str
    missing_optional_env_files: tuple[str, ...]


def split_words(text: str, *, source: str) -> list[str]:
    """systemd word splitting (ExecStart=, Environment=): whitespace separates, quotes group, C escapes."""
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        word: list[str] = []
        quote: str | None = None
        while i < n and (quote or not text[i].isspace()):
            ch = text[i]
            if ch == "\\" and i + 1 < n:
                nxt = text[i + 1]
                word.append(_C_ESCAPES.get(nxt, nxt) if quote != "'" or nxt in "\\'" else "\\" + nxt)
                i += 2
                continue
            if quote and ch == quote:
                quote = None
            elif not quote and ch in "\"'":
                quote = ch
            else:
                word.append(ch)
            i += 1
        if quote:
            raise InputError(f"unbalanced {quote} quote in {text.strip()!r}", source=source)
        words.append("".join(word))
    return words


def parse_env_file(text: str, *, source: str) -> EnvFile:
    """EnvironmentFile= syntax (/etc/default/kubelet, /var/lib/kubelet/kubeadm-flags.env):
    ``KEY=value`` lines, ``#``/``;`` comments, optional quotes, backslash-newline continuation."""
    values: dict[str, str] = {}
    ignored: list[str] = []
    for line in _logical_lines(text):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;":
            continue
        key, sep, raw = stripped.partition("=")
        key = key.strip()
        if not sep or not _ENV_NAME.match(key):
            ignored.append(stripped)
            continue
        raw = raw.strip()
        if raw[:1] in ("'", '"') and raw.endswith(raw[0]) and len(raw) >= 2:
            value = "".join(split_words(raw, source=source)) if raw[0] == '"' else raw[1:-1]
        else:
            value = raw
        values[key] = value
    return EnvFile(values=values, ignored=tuple(ignored))


def _logical_lines(text: str) -> Iterable[str]:
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\") and not raw.endswith("\\\\"):
            pending += raw[:-1] + " "
            continue
        yield pending + raw
        pending = ""
    if pending:
        yield pending


def order_unit_files(paths: Iterable[str]) -> list[str]:
    """systemd precedence for ``kubelet.service`` and ``kubelet.service.d/*.conf`` found in several
    unit directories: the main unit from the highest-priority directory first, then drop-ins sorted
    by file name, a name in a higher-priority directory masking the same name in a lower one."""

    def priority(path: str) -> int:
        for rank, prefix in enumerate(_UNIT_DIR_PRIORITY):
            if path.startswith(prefix + "/"):
                return rank
        return len(_UNIT_DIR_PRIORITY)

    mains = sorted((p for p in paths if not PurePosixPath(p).parent.name.endswith(".d")), key=priority)
    dropins: dict[str, str] = {}
    for path in sorted((p for p in paths if PurePosixPath(p).parent.name.endswith(".d")), key=priority, reverse=True):
        if path.endswith(".conf"):
            dropins[PurePosixPath(path).name] = path
    return mains[:1] + [dropins[name] for name in sorted(dropins)]


def parse_systemd_units(units: Sequence[tuple[str, str]], *, env_files: Mapping[str, str]) -> SystemdExec:
    """Resolve the kubelet's ExecStart= from ``units`` — (path, text) pairs in systemd order, see
    ``order_unit_files`` — and the texts of the EnvironmentFile= paths they reference."""
    assignments: list[tuple[str, str, str]] = []
    files: list[tuple[str, bool, str]] = []
    exec_start: tuple[str, str] | None = None
    for unit_path, text in units:
        section = None
        for line in _logical_lines(text):
            stripped = line.strip()
            if not stripped or stripped[0] in "#;":
                continue
            if stripped.startswith("[") and stripped.endswith("]"):
                section = stripped[1:-1]
                continue
            key, sep, value = stripped.partition("=")
            if not sep or section != "Service":
                continue
            key, value = key.strip(), value.strip()
            if key == "Environment":
                if not value:
                    assignments.clear()
                for word in split_words(value, source=unit_path):
                    name, eq, val = word.partition("=")
                    if eq and _ENV_NAME.match(name):
                        assignments.append((name, val, f"Environment= in {unit_path}"))
            elif key == "EnvironmentFile":
                if not value:
                    files.clear()
                else:
                    optional = value.startswith("-")
                    files.append((value.lstrip("-"), optional, unit_path))
            elif key == "ExecStart":
                if not value:
                    exec_start = None
                elif exec_start is not None:
                    raise InputError(
                        "Service has more than one ExecStart= setting, which is only allowed for Type=oneshot "
                        "services; reset it with an empty ExecStart= first",
                        source=unit_path,
                    )
                else:
                    exec_start = (value, unit_path)
    if exec_start is None:
        raise InputError(
            "no ExecStart= in the [Service] section of the kubelet unit", source=units[-1][0] if units else None
        )

    env: dict[str, str] = {}
    env_origin: dict[str, str] = {}
    for name, val, origin in assignments:
        env[name], env_origin[name] = val, origin
    missing: list[str] = []
    for path, optional, unit_path in files:
        if path not in env_files:
            if optional:
                missing.append(path)
                continue
            raise InputError(f"EnvironmentFile={path} is required by the unit but was not provided", source=unit_path)
        for name, val in parse_env_file(env_files[path], source=path).values.items():
            env[name], env_origin[name] = val, path

    value, unit_path = exec_start
    argv, origins = _expand_exec(value, env, env_origin, unit_path)
    if not argv:
        raise InputError("ExecStart= expands to an empty command line", source=unit_path)
    return SystemdExec(
        argv=tuple(argv),
        origins=tuple(origins),
        environment=env,
        exec_source=unit_path,
        missing_optional_env_files=tuple(missing),
    )


def _expand_exec(
    value: str, env: dict[str, str], env_origin: dict[str, str], unit_path: str
) -> tuple[list[str], list[str]]:
    words = split_words(value, source=unit_path)
    expand = True
    if words:
        first = words[0]
        prefix = first[: len(first) - len(first.lstrip("@-:+!"))]  # systemd's special executable prefixes
        expand = ":" not in prefix
        words[0] = first[len(prefix) :]
    argv: list[str] = []
    origins: list[str] = []
    literal = f"ExecStart= in {unit_path}"
    for word in words:
        whole = _WHOLE_VAR.match(word) if expand else None
        if whole:
            name = whole.group(1)
            for part in split_words(env.get(name, ""), source=env_origin.get(name, unit_path)):
                argv.append(part)
                origins.append(f"${name} from {env_origin[name]}")
        elif expand:
            argv.append(_BRACED_VAR.sub(lambda m: "$" if m.group(0) == "$$" else env.get(m.group(1), ""), word))
            origins.append(literal)
        else:
            argv.append(word)
            origins.append(literal)
    return argv, origins
