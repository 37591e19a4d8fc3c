"""The pure layers stay pure: importing them loads no report, plotting, network or notebook stack.

Each package is imported in a fresh interpreter, so nothing another test imported can hide or
fake a heavy dependency; the check reads that interpreter's ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PURE = ("tmnb.kubelet", "tmnb.parse", "tmnb.replay")
FORBIDDEN = ("pandas", "matplotlib", "httpx", "IPython", "kubernetes.client")

_PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps({"loaded": sys.argv[1] in sys.modules,
                  "forbidden": sorted(m for m in sys.argv[2:] if m in sys.modules)}))
"""


def _probe(package: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, package, *FORBIDDEN], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("package", PURE)
def test_pure_package_imports_no_heavy_stack(package):
    got = _probe(package)
    assert got["loaded"] is True
    assert got["forbidden"] == [], f"importing {package} loads {got['forbidden']}"


def test_probe_sees_a_forbidden_import():
    """The probe itself can fail: the plots are drawn with matplotlib from pandas frames."""
    assert {"pandas", "matplotlib"} <= set(_probe("tmnb.plots")["forbidden"])
