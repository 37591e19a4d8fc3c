"""The published entry point of the conformance runner:
``python -m tmnb.kubelet.conformance < cases.jsonl > answers.jsonl``.

External graders run this command, so it keeps its name while the runner itself lives in
``tmnb.conformance``, a room above the kubelet model. This module only calls that runner's ``main``,
and imports it inside ``main``: the one import from ``tmnb.kubelet`` up to ``tmnb.conformance``
(tests/test_layout.py names it among its ``UP_DOORS``), made only when the command runs, so
importing the model never loads the runner.
"""

from __future__ import annotations


def main() -> int:
    from tmnb.conformance.runner import main as run_conformance  # upward on purpose: see the docstring

    return run_conformance()


if __name__ == "__main__":
    raise SystemExit(main())
