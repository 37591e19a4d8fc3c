"""What the modelled kubelet raises belongs to the tmnb family, so a caller that catches
``TmnbError`` (the CLI, the notebooks) never sees a traceback from the model."""

from __future__ import annotations

import pytest

from tmnb.errors import ConfigRejected, TmnbError
from tmnb.kubelet.errors import AdmissionError, CPUAllocationError, SMTAlignmentError
from tmnb.kubelet.topologymanager.merge import NUMAInfo
from tmnb.kubelet.topologymanager.policy import policy_for


@pytest.mark.parametrize("error", [AdmissionError, SMTAlignmentError, CPUAllocationError])
def test_admission_errors_are_tmnb_errors(error: type[Exception]) -> None:
    assert issubclass(error, TmnbError)


def test_an_unknown_policy_is_refused_in_the_kubelets_words() -> None:
    with pytest.raises(ConfigRejected, match=r'^unknown policy: "numa"$'):
        policy_for("numa", NUMAInfo((0, 1)))
