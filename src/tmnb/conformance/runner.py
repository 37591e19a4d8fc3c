"""The conformance runner: one JSON case a line in, one answer a line out.

Reads one case a line (``{"id", "kind", "input", ...}``, as in tests/conformance/*.jsonl) and
answers every case with ``{"id", "expected"}`` in the shape of its kind. A case that cannot be
processed gets ``{"runner_error": ...}`` and the run goes on, so one malformed line never hides the
answers to thousands of others. Published as ``python -m tmnb.kubelet.conformance`` (that module
calls ``main``).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

from tmnb.conformance.kinds import HANDLERS
from tmnb.errors import InputError, TmnbError


def answer(case: object) -> dict[str, Any]:
    """One answer line for one decoded case; never raises."""
    case_id = case.get("id") if isinstance(case, Mapping) else None
    try:
        if not isinstance(case, Mapping):
            raise InputError("a case must be a JSON object")
        kind = case.get("kind")
        handler = HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise InputError(f"unknown kind {kind!r}; expected one of {sorted(HANDLERS)}")
        inp = case.get("input")
        if not isinstance(inp, Mapping):
            raise InputError("missing or non-object 'input'")
        expected = handler(inp)
    except TmnbError as err:
        expected = {"runner_error": str(err)}
    except Exception as err:  # a bug or an input shape we did not foresee: report it, keep going
        expected = {"runner_error": f"{type(err).__name__}: {err}"}
    return {"id": case_id, "expected": expected}


def run_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as err:
            yield {"id": None, "expected": {"runner_error": f"line {number}: invalid JSON: {err.msg}"}}
            continue
        yield answer(case)


#: The exit status of a filter whose reader went away (128 + SIGPIPE), as a shell reports it.
EXIT_SIGPIPE = 141


def main(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    try:
        for result in run_lines(stdin or sys.stdin):
            out.write(json.dumps(result, separators=(",", ":")) + "\n")
        out.flush()
    except BrokenPipeError:  # the reader stopped (`| head`): end quietly, as a Unix filter does
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        return EXIT_SIGPIPE
    return 0
