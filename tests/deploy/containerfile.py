"""deploy/Containerfile read as a builder reads it: comments dropped, continued lines joined, one
stage per FROM. No container engine runs in CI, so the tests check the image through this."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from conftest import ROOT

CONTAINERFILE = ROOT / "deploy" / "Containerfile"


@dataclass
class Stage:
    base: str
    name: str | None
    #: (instruction, its arguments as written), in order
    steps: list[tuple[str, str]] = field(default_factory=list)

    def args(self, op: str) -> list[str]:
        return [rest for instruction, rest in self.steps if instruction == op]

    def commands(self) -> list[list[str]]:
        """The shell commands of its RUN steps, each split as the shell splits words (globs kept)."""
        return [shlex.split(command) for run in self.args("RUN") for command in run.split("&&")]


def instructions(text: str) -> list[tuple[str, str]]:
    joined: list[str] = []
    pending = ""
    for line in text.splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip().removesuffix("\\") + " "
        if not line.rstrip().endswith("\\"):
            joined.append(pending.strip())
            pending = ""
    return [(op.upper(), rest.strip()) for op, _, rest in (j.partition(" ") for j in joined)]


def stages(text: str | None = None) -> list[Stage]:
    found: list[Stage] = []
    for op, rest in instructions(CONTAINERFILE.read_text() if text is None else text):
        if op == "FROM":
            base, _, name = rest.partition(" AS ")
            found.append(Stage(base.strip(), name.strip() or None))
        elif found:
            found[-1].steps.append((op, rest))
    return found


def environment(stage: Stage) -> dict[str, str]:
    """The stage's ENV as NAME=value pairs (the form the Containerfile uses)."""
    return dict(word.split("=", 1) for env in stage.args("ENV") for word in shlex.split(env))
