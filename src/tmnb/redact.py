"""Keep credentials out of evidence: snapshots, reports, journals and logs are shared widely.

Command lines and environment files can carry inline secrets (``--token=...``,
``KUBELET_BOOTSTRAP_TOKEN=...``). Values of such keys are replaced by a placeholder; paths to
key or credential *files* are kept, because they are configuration, not secrets. Free text (event
and log messages, error texts that quote a file) is scrubbed of what credentials look like:
private keys, JWTs, bearer tokens, cloud access keys, passwords in URLs and ``secret=value`` pairs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

PLACEHOLDER = "<redacted>"
_SECRET_NAME = re.compile(
    r"token|passw(or)?d|secret|private[-_]?key|credential|api[-_]?key|bearer|client[-_]?key", re.I
)
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
            out.append(redact_text(arg))
    return out


_URL_USERINFO = re.compile(r"://[^/@\s:]+:[^/@\s]+@")
#: ``key=value``/``key="quoted"`` (klog, logfmt, flags) and ``"key":"value"`` (JSON logs)
_LOG_PAIR = re.compile(r'(?P<key>[\w.-]+)=(?P<value>\\"(?:(?!\\").)*\\"|"(?:[^"\\]|\\.)*"|[^\s"\\]+)')
_JSON_PAIR = re.compile(r'"(?P<key>[^"\\]+)"\s*:\s*(?P<value>"(?:[^"\\]|\\.)*")')


def redact_log_line(line: str) -> str:
    """A log line with secret-named values (quoted as klog and JSON logs quote them) replaced, then
    whatever ``redact_text`` finds.

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

    line = _LOG_PAIR.sub(pair, line)
    return redact_text(_JSON_PAIR.sub(json_pair, line))


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


_KEY_WORDS = r"[\w.-]*(?:token|passw(?:or)?d|secret|private[-_]?key|credential|api[-_]?key|client[-_]?key)[\w.-]*"
_PAIR = re.compile(rf"(?i)\b({_KEY_WORDS})(\\?[\"']?\s*[=:]\s*\\?[\"']?)(?P<s>[^\s\\\"',;}}]+)")
#: What credentials look like in free text; group ``s`` is the part hidden (the rest is kept).
_TEXT_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?P<s>-----BEGIN[A-Z ]*PRIVATE KEY-----.*?(-----END[A-Z ]*PRIVATE KEY-----|\Z))", re.S),
    re.compile(r"(?P<s>LS0tLS1CRUdJTi[A-Za-z0-9+/=]*)"),  # base64 of "-----BEGIN" (kubeconfig *-data)
    re.compile(r"(?P<s>\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*)"),  # JWT
    re.compile(r"(?i)\b(bearer|basic)\s+(?P<s>[A-Za-z0-9._~+/=-]{8,})"),
    re.compile(r"(?P<s>\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)"),  # AWS access key id
    re.compile(r"://[^/@\s:]+:(?P<s>[^/@\s]+)@"),  # password in a URL
)


def _hide(match: re.Match[str]) -> str:
    start, end = match.span("s")
    return match.string[match.start() : start] + PLACEHOLDER + match.string[end : match.end()]


def _pair_hides(match: re.Match[str]) -> bool:
    """``secret=value`` loses its value; ``--tls-private-key-file=/path`` (a file name) keeps it."""
    return not (_FILE_NAME.search(match.group(1)) or match["s"] == PLACEHOLDER)


#: One cheap search first: most texts (settings, reasons, cpu-lists) hold none of these.
_TRIGGER = re.compile(
    r"(?i)BEGIN|LS0t|eyJ|bearer|basic|AKIA|ASIA|://|token|passw|secret|private|credential|api.?key|client.?key"
)


def redact_text(text: str) -> str:
    """``text`` with every credential-looking part replaced by the placeholder (idempotent)."""
    if not _TRIGGER.search(text):
        return text
    for pattern in _TEXT_PATTERNS:
        text = pattern.sub(_hide, text)
    return _PAIR.sub(lambda m: _hide(m) if _pair_hides(m) else m[0], text)


def _hidden(key: str) -> bool:
    """A map entry whose whole value is a credential (``staticPodURLHeader: {Authorization: [...]}``)."""
    return is_secret_name(key) or key.lower() in ("authorization", "proxy-authorization", "cookie")


def redact_value(value: Any, name: str = "") -> Any:
    """A JSON-like value with secret-named entries and credential-looking text redacted."""
    if isinstance(value, dict):
        return {k: PLACEHOLDER if _hidden(str(k)) else redact_value(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_value(v, name) for v in value)
    if isinstance(value, str):
        return redact_text(value)
    return value


def _text_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span("s") for pattern in _TEXT_PATTERNS for m in pattern.finditer(text)]
    return spans + [m.span("s") for m in _PAIR.finditer(text) if _pair_hides(m)]


def _yaml_spans(text: str) -> list[tuple[int, int]]:
    """Where a YAML document holds a credential: the whole value of a secret-named key (a header's
    list, a block scalar) and every scalar ``redact_text`` would change. Aliases are walked once."""
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, RecursionError, ValueError):
        return []  # not YAML (a unit, an environment file): the text patterns alone
    spans = []
    seen: set[int] = set()
    todo: list[tuple[yaml.Node | None, bool]] = [(root, False)]
    while todo:
        node, hidden = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if hidden or (isinstance(node, yaml.ScalarNode) and redact_text(str(node.value)) != node.value):
            spans.append((node.start_mark.index, node.end_mark.index))
        elif isinstance(node, yaml.SequenceNode):
            todo += [(item, False) for item in node.value]
        elif isinstance(node, yaml.MappingNode):
            todo += [(v, isinstance(k, yaml.ScalarNode) and _hidden(str(k.value))) for k, v in node.value]
    return spans


def redact_lines(text: str) -> list[str]:
    """``text.splitlines(keepends=True)`` with what ``redact_value`` hides in the parsed document and
    ``redact_text`` hides in the text replaced by the placeholder on every line it touches: the same
    lines in the same order, so a diff of a node's file can be shown without its secrets."""
    spans: list[tuple[int, int]] = []
    for start, stop in sorted(_yaml_spans(text) + _text_spans(text)):
        stop = start + len(text[start:stop].rstrip())  # a block node ends where the next key is indented
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(stop, spans[-1][1]))
        elif start < stop:
            spans.append((start, stop))
    out = []
    pos = 0
    for line in text.splitlines(keepends=True):
        end = pos + len(line.rstrip("\r\n"))
        pieces, cursor = [], pos
        for start, stop in spans:
            start, stop = max(start, cursor), min(stop, end)
            if start < stop:
                pieces += [text[cursor:start], PLACEHOLDER]
                cursor = stop
        out.append("".join(pieces) + text[cursor : pos + len(line)])
        pos += len(line)
    return out
