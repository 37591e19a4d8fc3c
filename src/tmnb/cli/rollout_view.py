"""``tmnb rollout status`` and ``list``'s screens, from ``rollout.standing``.

``status`` opens with one line, where the change stands; below it why it stopped and the nodes it
left cordoned, then the one next command. Every line of it fits ``terminal.WIDTH`` columns: a
command too long for one line goes on in backslashed lines, as a shell joins them, so it is pasted
whole. ``-v`` adds each node's account and the journal, as paragraphs (a command in backticks in them
is kept whole). ``list`` is a table in kubectl's manner.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path

from tmnb.cli.terminal import WIDTH, clip, table, wrap
from tmnb.rollout.journal import account
from tmnb.rollout.standing import Standing


def status_lines(change: Standing, verbose: bool = False) -> list[str]:
    """The line, why the change stopped, the nodes it left cordoned, the next command; ``verbose`` adds
    the folder, each node's account and the journal, record by record."""
    lines = [clip(f"{change.change_id}: {change.line}", WIDTH)]
    if change.why:
        lines += wrap(change.why, first="  why: ", then="       ")
    if change.note:
        lines += wrap(change.note, first="  note: ", then="        ")
    label, next_command = change.next
    lines += shell_lines(f"  {label}:", next_command)
    if not verbose:
        return lines
    lines += wrap(str(change.folder), first="  folder: ")
    lines.append("  nodes:")
    for node in change.nodes:
        lines += wrap(account(list(change.records), node, change.folder), first="    ", then="    ")
    lines.append("  journal:")
    for r in change.records:
        said = r.get("result") or r.get("error") or r.get("intent") or ""
        step = f"{r.get('time', '')}  {r.get('node') or '-':<16} {r.get('step', ''):<15} {r.get('event', ''):<8}"
        lines += wrap(f"{step} {said}".rstrip(), first="    ", then="      ")
    return lines


def list_lines(changes: Sequence[Standing], here: Path) -> list[str]:
    """One change a row, the least recently active first; a folder below ``here`` relative to it."""
    rows = []
    for s in sorted(changes, key=lambda s: s.last):
        target = ", ".join(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in s.target.items())
        folder = s.folder.relative_to(here) if s.folder.is_relative_to(here) else s.folder
        rows.append((s.change_id, f"{s.done}/{s.total}", s.short, target, str(folder)))
    return table(("change", "nodes", "where it stands", "target", "folder"), rows, elastic=("target",))


def _units(words: list[str]) -> list[list[str]]:
    """An option stays on one line with its value (``-p`` with its name and value)."""
    units: list[list[str]] = []
    for word in words:
        last = units[-1] if units else []
        takes = 2 if last[:1] == ["-p"] else 1 if last[:1] and last[0].startswith("--") else 0
        if last and not word.startswith("-") and len(last) <= takes:
            last.append(word)
        else:
            units.append([word])
    return units


def _pieces(word: str, first: int, rest: int) -> list[str]:
    """``word`` cut so that each piece, quoted for the shell, takes at most ``first`` columns (the first
    piece) or ``rest`` (the others), after a ``/`` where it can be."""
    pieces, limit, start = [], max(first, 8), 0
    while len(shlex.quote(word[start:])) > limit:
        end = start + 1
        while len(shlex.quote(word[start : end + 1])) <= limit:
            end += 1
        cut = word.rfind("/", start, end) + 1
        cut = cut if cut > start else end
        pieces.append(word[start:cut])
        start, limit = cut, rest
    return [*pieces, word[start:]]


def shell_lines(label: str, chain: str) -> list[str]:
    """``label`` and the command ``chain`` (commands joined by ``&&``) in lines of at most ``WIDTH``
    columns, as pasted into a shell: on the label's line when it fits, else below it, continued with
    backslashes; a word too long for any line (a deep path) is continued inside itself, each piece
    quoted on its own and the next one at the start of its line, which the shell joins again."""
    if len(f"{label} {chain}") <= WIDTH:
        return [f"{label} {chain}"]
    lines, commands = [label], chain.split(" && ")
    for i, one in enumerate(commands):
        indent, current = "    ", ""
        for unit in _units(shlex.split(one)):
            text = " ".join(shlex.quote(w) for w in unit)
            if current and len(f"{indent}{current} {text} && \\") > WIDTH:
                lines.append(f"{indent}{current} \\")
                indent, current = "      ", ""
            if current or len(f"{indent}{text} && \\") <= WIDTH:
                current = f"{current} {text}" if current else text
                continue
            head = "".join(f"{shlex.quote(w)} " for w in unit[:-1])
            *cut, last = _pieces(unit[-1], WIDTH - len(indent) - len(head) - 6, WIDTH - 6)
            if not cut:  # short enough after all
                current = text
                continue
            lines += [f"{indent}{head}{shlex.quote(cut[0])}\\", *(f"{shlex.quote(p)}\\" for p in cut[1:])]
            indent, current = "", shlex.quote(last)
        lines.append(f"{indent}{current}" + (" && \\" if i < len(commands) - 1 else ""))
    return lines
