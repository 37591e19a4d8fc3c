"""04-rollout's ``options``: names and types checked before anything is read, defaults as shown."""

import pytest

from tmnb.errors import InputError
from tmnb.rollout.arguments import NOTEBOOK_OPTIONS
from tmnb.rollout.session import open_session
from tmnb.rollout.steps import Options


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"drain_timout": 60}, "unknown option 'drain_timout': expected one of drain_timeout"),
        ({"drain_timeout": -1}, "options.drain_timeout: expected a positive number of seconds, got -1"),
        ({"drain_timeout": True}, "options.drain_timeout: expected a positive number of seconds"),
        ({"auto_rollback": "no"}, "options.auto_rollback: expected bool, got 'no'"),
        ({"override": "w1"}, "options.override: expected list, got 'w1'"),
    ],
)
def test_a_wrong_option_is_refused_naming_it(options, expected):
    with pytest.raises(InputError, match=expected):
        open_session(options=options, source="sample", target={}, change_id="x")


def test_the_defaults_are_the_steps_defaults():
    """The notebook shows these defaults; they must be what a rollout without options gets."""
    steps = Options()
    assert NOTEBOOK_OPTIONS["drain_timeout"] == steps.drain_timeout
    assert NOTEBOOK_OPTIONS["ready_timeout"] == steps.ready_timeout
    assert NOTEBOOK_OPTIONS["auto_rollback"] == steps.auto_rollback
    assert NOTEBOOK_OPTIONS["allow_emptydir"] == steps.allow_emptydir
    assert NOTEBOOK_OPTIONS["test_namespace"] == steps.test_pod_namespace
    assert NOTEBOOK_OPTIONS["test_image"] == steps.test_pod_image
