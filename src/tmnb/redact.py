"""Keep credentials out of evidence: snapshots, reports, journals and logs are shared widely.

Command lines and environment files can carry inline secrets (``--token=...``,
``KUBELET_BOOTSTRAP_TOKEN=...``). Values of such keys are replaced by a placeholder; paths to
key or credential *files* are kept, because they are configuration, not secrets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PLACEHOLDER = "<redacted>"
_SECRET_NAME = re.compile(r"token|passw(or)?d|secret|private[-_]?key|credential|api[-_]?key|bearer", re.I)
_FILE_NAME = re.compile(r"(file|dir|path|ca|cert)$", re.I)


def is_secret_name(name: str) -> bool:
    bare = name.lstrip("-")
    return bool(_SECRET_NAME.search(bare)) and not _FILE_NAME.search(bare)


def redact_argv(argv: Iterable[str]) -> list[str]:
    """Redact ``--secret=value``, ``--secret value`` and ``SECRET=value`` items."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(PLACEHOLDER)
            hide_next = False
            continue
        name, sep, _value = arg.partition("=")
        if sep and is_secret_name(name):
            out.append(f"{name}={PLACEHOLDER}")
        elif arg.startswith("-") and not sep and is_secret_name(arg):
            out.append(arg)
            hide_next = True
        else:
            out.append(arg)
    return out


_URL_USERINFO = re.compile(r"://[^/@\s:]+:[^/@\s]+@")
#: ``key=value``/``key="quoted"`` (klog, logfmt, flags) and ``"key":"value"`` (JSON logs)
_PAIR = re.compile(r'(?P<key>[\w.-]+)=(?P<value>\\"(?:(?!\\").)*\\"|"(?:[^"\\]|\\.)*"|[^\s"\\]+)')
_JSON_PAIR = re.compile(r'"(?P<key>[^"\\]+)"\s*:\s*(?P<value>"(?:[^"\\]|\\.)*")')
_BEARER = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}", re.I)
_USERINFO = re.compile(r"(://[^/@\s:]+:)[^/@\s]+@")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")


def redact_log_line(line: str) -> str:
    """A log line with secret-named values, bearer/basic credentials, JWTs and URL passwords replaced.

    Kubelet logs at higher verbosity print flags (``FLAG: --token="..."``) and request headers;
    a journal excerpt goes into snapshots that are shared, so it passes through here first."""

    def pair(m: re.Match[str]) -> str:
        if not is_secret_name(m["key"]):
            return m[0]
        value = m["value"]
        quote = '\\"' if value.startswith('\\"') else '"' if value.startswith('"') else ""
        return f"{m['key']}={quote}{PLACEHOLDER}{quote}"

    def json_pair(m: re.Match[str]) -> str:
        return f'"{m["key"]}":"{PLACEHOLDER}"' if is_secret_name(m["key"]) else m[0]

    line = _PAIR.sub(pair, line)
    line = _JSON_PAIR.sub(json_pair, line)
    line = _BEARER.sub(lambda m: f"{m[1]} {PLACEHOLDER}", line)
    line = _JWT.sub(PLACEHOLDER, line)
    return _USERINFO.sub(rf"\g<1>{PLACEHOLDER}@", line)


def secret_in(name: str, value: object) -> bool:
    """True for a value that would put a credential into evidence: a secret-named parameter, or a URL
    with a password in it, anywhere inside lists and maps."""
    if isinstance(value, dict):
        return any(secret_in(str(k), v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(secret_in(name, v) for v in value)
    if isinstance(value, str):
        return bool(_URL_USERINFO.search(value)) or (is_secret_name(name) and not value.startswith("env:"))
    return False
