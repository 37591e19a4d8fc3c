"""The block a report opens with: its answer (what is ready, what blocks, what to do next, with
the exact next command), so a person acts on the first screen and reads the detail only to check.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

Tone = Literal["ok", "warn", "stop"]
_COLOURS = {"ok": ("#e8f5e9", "#2e7d32"), "warn": ("#fff8e1", "#b26a00"), "stop": ("#fdecea", "#c62828")}


def _inline(text: str) -> str:
    """Escaped text with `code` and **bold** marked up (the only markdown the verdicts use)."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


@dataclass
class Verdict:
    """``headline`` says the answer in one sentence; ``sections`` are (title, bullet lines)."""

    tone: Tone
    headline: str
    sections: list[tuple[str, list[str]]] = field(default_factory=list)
    commands: Sequence[str] = ()

    def html(self) -> str:
        background, edge = _COLOURS[self.tone]
        parts = [
            f'<div class="tmnb-verdict tmnb-verdict-{self.tone}" style="background:{background};'
            f"border-left:6px solid {edge};padding:0.6em 1em;margin:0.5em 0 1em 0;font-size:15px;"
            'line-height:1.45">',
            f'<p style="font-size:17px;margin:0.2em 0 0.5em 0"><strong>{_inline(self.headline)}</strong></p>',
        ]
        for title, lines in self.sections:
            if not lines:
                continue
            items = "".join(f"<li>{_inline(line)}</li>" for line in lines)
            parts.append(f'<p style="margin:0.4em 0 0.1em 0"><strong>{html.escape(title)}</strong></p>')
            parts.append(f'<ul style="margin:0 0 0.3em 0">{items}</ul>')
        if self.commands:
            parts.append('<p style="margin:0.4em 0 0.1em 0"><strong>Next command</strong></p>')
            block = "\n".join(html.escape(c) for c in self.commands)
            parts.append(
                '<pre class="tmnb-next-command" style="white-space:pre-wrap;background:#fff;padding:0.5em;'
                f'border:1px solid #ccc;margin:0">{block}</pre>'
            )
        parts.append("</div>")
        return "".join(parts)

    def markdown(self) -> str:
        """The same answer as plain markdown (for the executed notebook's text readers)."""
        lines = [f"**{self.headline}**", ""]
        for title, items in self.sections:
            if items:
                lines += [f"**{title}**", *(f"- {i}" for i in items), ""]
        if self.commands:
            lines += ["**Next command**", "```", *self.commands, "```"]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        return self.html()

    def _repr_markdown_(self) -> str:
        return self.markdown()
