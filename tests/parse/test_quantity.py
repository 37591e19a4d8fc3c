"""The one door for Kubernetes quantities: the official client's parser, without its API client."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from tmnb.errors import InputError
from tmnb.parse.quantity import parse_quantity, quantity, quantity_value

SRC = Path(__file__).parents[2] / "src" / "tmnb"


@pytest.mark.parametrize("text", ["2", "1.5", "100m", "1Gi", "1e3", "2000m", "0.0001", 3])
def test_quantity_parser_is_the_official_client_function(text: str | int) -> None:
    from kubernetes.utils import parse_quantity as official

    assert parse_quantity(text) == official(text)
    assert quantity(text, "x") == official(text)


def test_a_malformed_quantity_names_its_field() -> None:
    with pytest.raises(ValueError):
        parse_quantity("1Zi")
    with pytest.raises(InputError, match=r"requests\.cpu: invalid Kubernetes quantity '1Zi'"):
        quantity("1Zi", "requests.cpu")


@pytest.mark.parametrize(("text", "value"), [("16Gi", Decimal(16 << 30)), ("500m", Decimal("0.5")), ("1e3", 1000)])
def test_bounded_reading(text: str, value: Decimal) -> None:
    assert quantity_value(text) == value


@pytest.mark.parametrize("text", ["1e1000", "1" * 65, "1Zi", ""])
def test_bounded_reading_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        quantity_value(text)


def test_parsing_loads_no_api_client() -> None:
    """``kubernetes.utils`` imports the whole API client; the door reads only its quantity module."""
    probe = (
        "import json, sys\n"
        "from tmnb.parse.quantity import Quantity, parse_quantity, quantity\n"
        "parse_quantity('1Gi'); quantity('2', 'x'); Quantity.parse('1Gi')\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('kubernetes'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120)
    assert json.loads(done.stdout) == []


def test_no_module_parses_quantities_around_the_door() -> None:
    """Every module goes through ``tmnb.parse.quantity``; none imports the client's parser itself."""
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        for stmt in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(stmt, ast.ImportFrom) and (stmt.module or "").startswith("kubernetes.utils"):
                offenders.append(str(path.relative_to(SRC)))
            if isinstance(stmt, ast.Import) and any(a.name.startswith("kubernetes.utils") for a in stmt.names):
                offenders.append(str(path.relative_to(SRC)))
    assert offenders == []
