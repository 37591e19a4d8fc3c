"""Argument types shared by the ``tmnb`` subcommands: a wrong value is a usage error at parse time."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeAlias

#: What a subcommand family's parsers are added to.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
#: A subcommand's handler: the parsed arguments in, the exit code out.
Command: TypeAlias = Callable[[argparse.Namespace], int]


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, got {text!r}")
    return value


def non_negative_seconds(text: str) -> float:
    value = _seconds(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds of 0 or more, got {text!r}")
    return value


def port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a TCP port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a TCP port from 0 (any free one) to 65535, got {value}")
    return value


def workers(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of worker processes, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more worker processes, got {value}")
    return value
