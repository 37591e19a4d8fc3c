import pytest

from tmnb.errors import InputError
from tmnb.versions import KubeVersion


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v1.36.2", (1, 36, 2)), ("1.30", (1, 30, 0)), ("v1.32.4-eks-1a2b3c", (1, 32, 4)), ("v1.34.1+k3s1", (1, 34, 1))],
)
def test_parse(text, expected):
    v = KubeVersion.parse(text)
    assert (v.major, v.minor, v.patch) == expected


def test_order():
    assert KubeVersion.parse("v1.9.0") < KubeVersion.parse("v1.10.0")


@pytest.mark.parametrize("bad", ["", "latest", "v1", "1.x"])
def test_reject(bad):
    with pytest.raises(InputError, match=r"expected vMAJOR\.MINOR"):
        KubeVersion.parse(bad)
