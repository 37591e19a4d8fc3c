import pytest
from hypothesis import given
from hypothesis import strategies as st

from bounded import run_bounded
from tmnb.cpuset import CPUSet, format_cpulist, format_hexmask, parse_cpulist, parse_hexmask
from tmnb.errors import InputError

cpu_sets = st.frozensets(st.integers(min_value=0, max_value=1023), max_size=200)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0-3,8-11", {0, 1, 2, 3, 8, 9, 10, 11}),
        ("0-15,32-47\n", set(range(16)) | set(range(32, 48))),
        ("", set()),
        ("\n", set()),
        ("5", {5}),
        ("3,1,2", {1, 2, 3}),
        ("0-0", {0}),
    ],
)
def test_parse_cpulist(text, expected):
    assert parse_cpulist(text) == expected


@pytest.mark.parametrize("bad", ["0-", "-3", "a", "1,,2", "3-1", "0-3 ,x", "1.5", "0x1"])
def test_parse_cpulist_rejects_and_quotes_text(bad):
    with pytest.raises(InputError) as err:
        parse_cpulist(bad, source="/sys/devices/system/node/node0/cpulist")
    assert "/sys/devices/system/node/node0/cpulist" in str(err.value)
    assert repr(bad.strip()) in str(err.value)


def test_format_cpulist_collapses_runs():
    assert format_cpulist([11, 0, 1, 2, 3, 8, 9, 10, 5]) == "0-3,5,8-11"
    assert format_cpulist([]) == ""
    assert format_cpulist([7]) == "7"


@pytest.mark.parametrize(
    ("mask", "expected"),
    [
        ("ff,00000001", {0} | set(range(32, 40))),
        ("0000ffff,0000ffff", set(range(16)) | set(range(32, 48))),
        ("00000000", set()),
        ("1\n", {0}),
    ],
)
def test_parse_hexmask(mask, expected):
    assert parse_hexmask(mask) == expected


@pytest.mark.parametrize("bad", ["", "xyz", "123456789", "ff,,1"])
def test_parse_hexmask_rejects(bad):
    with pytest.raises(InputError):
        parse_hexmask(bad)


def test_format_hexmask_pads_to_possible_cpus():
    assert format_hexmask({0}, nbits=64) == "00000000,00000001"
    assert format_hexmask(set()) == "00000000"
    assert format_hexmask(set(range(16)) | set(range(32, 48))) == "0000ffff,0000ffff"


@given(cpu_sets)
def test_cpulist_round_trip(cpus):
    assert parse_cpulist(format_cpulist(cpus)) == cpus


@given(cpu_sets)
def test_hexmask_round_trip(cpus):
    assert parse_hexmask(format_hexmask(cpus)) == cpus


@given(cpu_sets, cpu_sets)
def test_set_algebra_keeps_type_and_matches_sets(a, b):
    x, y = CPUSet(a), CPUSet(b)
    for result, expected in [(x | y, a | b), (x & y, a & b), (x - y, a - b), (x ^ y, a ^ b)]:
        assert isinstance(result, CPUSet)
        assert result == expected
    assert CPUSet.parse(str(x)) == x


def test_cpuset_rejects_negative_ids():
    with pytest.raises(InputError):
        CPUSet([-1])
    assert repr(CPUSet.parse("0-2")) == "CPUSet('0-2')"


# ---------------------------------------------------------------------------------------------
# Bounds: a node has at most a few thousand CPUs (Linux NR_CPUS <= 8192)


@pytest.mark.parametrize("text", ["8192", "0-8192", "1-9999", "0-3,100000", "9" * 5000, "0-" + "9" * 5000])
def test_cpu_ids_beyond_the_kernel_limit_are_refused(text):
    with pytest.raises(InputError, match=r"beyond the largest CPU id Linux supports \(8191\)") as err:
        parse_cpulist(text, source="reservedSystemCPUs")
    assert err.value.source == "reservedSystemCPUs"
    assert len(str(err.value)) < 300  # the message quotes a prefix, not 5000 digits


def test_huge_range_is_refused_at_once_not_expanded():
    # 0-99999999 would be a set of 10^8 ints (gigabytes); under a 512 MiB ceiling only a bound check passes.
    result = run_bounded(
        """
        from tmnb.cpuset import parse_cpulist
        from tmnb.errors import InputError
        try:
            parse_cpulist("0-99999999")
        except InputError as exc:
            print("refused:", exc)
        """,
        memory=512 << 20,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "refused:" in result.stdout and "99999999" in result.stdout


def test_constructed_sets_are_bounded_too():
    with pytest.raises(InputError, match="8192 is beyond"):
        CPUSet([0, 8192])
    assert CPUSet.parse("8190-8191") == {8190, 8191}  # the largest id itself is fine


def test_hex_mask_longer_than_nr_cpus_is_refused():
    words = ",".join(["ffffffff"] * 257)
    with pytest.raises(InputError, match="257 32-bit words"):
        parse_hexmask(words, source="node0/cpumap")
    assert len(parse_hexmask(",".join(["ffffffff"] * 256))) == 8192


def test_strided_lists_are_opt_in():
    # util-linux cpulist_parse reads N-M:S; the kernel and the kubelet's cpuset.Parse do not.
    assert parse_cpulist("0-62:2", strided=True) == set(range(0, 63, 2))
    assert parse_cpulist("1-7:3,9", strided=True) == {1, 4, 7, 9}
    with pytest.raises(InputError, match="is not N or N-M"):
        parse_cpulist("0-62:2")
    with pytest.raises(InputError, match="stride 0"):
        parse_cpulist("0-4:0", strided=True)
