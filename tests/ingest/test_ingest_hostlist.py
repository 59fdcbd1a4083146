"""Slurm hostlist expansion and host-name helpers, including the pitfalls of FORMATS.md section 4."""

import doctest

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from twin.ingest import hostlist
from twin.ingest.hostlist import (
    MAX_HOSTLIST_SIZE,
    HostlistError,
    expand_hostlist,
    host_from_source_name,
    host_node_id,
    short_host_name,
    source_host,
)


def test_doctests():
    assert doctest.testmod(hostlist).failed == 0


def test_plain_names_and_lists():
    assert expand_hostlist("node01") == ("node01",)
    assert expand_hostlist("a,b,c") == ("a", "b", "c")


def test_zero_padding_is_significant():
    assert expand_hostlist("node[001-003]") == ("node001", "node002", "node003")
    assert expand_hostlist("node0[5-8]") == ("node05", "node06", "node07", "node08")


def test_padding_follows_the_lower_bound():
    assert expand_hostlist("n[8-10]") == ("n8", "n9", "n10")
    assert expand_hostlist("n[08-10]") == ("n08", "n09", "n10")
    assert expand_hostlist("n[1-010]")[-1] == "n10"


def test_lists_inside_brackets_and_commas_outside():
    assert expand_hostlist("gpu-r04-n[01-02],gpu-r04-n04,gpu-spare1") == (
        "gpu-r04-n01",
        "gpu-r04-n02",
        "gpu-r04-n04",
        "gpu-spare1",
    )
    assert expand_hostlist("n[1,3,5-6]") == ("n1", "n3", "n5", "n6")


def test_two_brackets_first_varies_slowest():
    assert expand_hostlist("rack[1-2]_n[01-02]") == ("rack1_n01", "rack1_n02", "rack2_n01", "rack2_n02")


def test_suffix_after_bracket():
    assert expand_hostlist("switch.1.[1-2]") == ("switch.1.1", "switch.1.2")
    assert expand_hostlist("n[1-2]-ib") == ("n1-ib", "n2-ib")


def test_empty_items_are_ignored_but_not_an_empty_list():
    assert expand_hostlist("a,,b,") == ("a", "b")
    for text in ("", "  ", ",", ",,"):
        with pytest.raises(HostlistError):
            expand_hostlist(text)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("node[01-04", "never closed"),
        ("node01-04]", "without '['"),
        ("n[1-[2]]", "nested"),
        ("n[]", "bad range"),
        ("n[a-b]", "bad range"),
        ("n[1-2-3]", "bad range"),
        ("n[-3]", "bad range"),
        ("n[5-1]", "backwards"),
        ("n[1 - 2]", "whitespace"),
    ],
)
def test_malformed_hostlists(text, fragment):
    with pytest.raises(HostlistError, match=fragment.replace("[", r"\[")):
        expand_hostlist(text)


def test_size_limit_stops_memory_bombs():
    with pytest.raises(HostlistError, match="more than"):
        expand_hostlist("n[0-999999999]")
    with pytest.raises(HostlistError, match="more than"):
        expand_hostlist("a[1-1000]b[1-1000]")
    assert len(expand_hostlist(f"n[1-{MAX_HOSTLIST_SIZE}]")) == MAX_HOSTLIST_SIZE


def test_short_names_and_ids():
    assert short_host_name("Node01.Cluster.Local") == "node01"
    assert host_node_id(" node01 ") == "host:node01"


@pytest.mark.parametrize(
    ("source_name", "host"),
    [
        ("node01.xml", "node01"),
        ("node01.topo.xml", "node01"),
        ("lldpctl_json_node01.json", "node01"),
        ("uploads/GPU-R03-N07_nvidia-smi.txt", "gpu-r03-n07"),
        ("C:\\dumps\\node12.xml", "node12"),
        ("nccl_topo_dump_8xH100.xml", None),
        ("azure-ndv4-topo.xml", None),
        ("topo.xml", None),
        ("", None),
        # Tool names next to the host, as ops name captures.
        ("node01-nvsmi.txt", "node01"),
        ("nvidia-smi-node02.txt", "node02"),
        ("gpu-r03-n07-nccl.xml", "gpu-r03-n07"),
        # Archive members (twin.ingest.archive names them <archive>/<member path>).
        ("archive.tgz/node01.xml", "node01"),
        ("archive.tgz/node01.topo.xml", "node01"),
        ("archive.tgz/node01-nvsmi.txt", "node01"),
        ("archive.tgz/topo/node01/nccl_topo.xml", "node01"),
        ("hosts.zip/Node03.cluster.local/nccl_topo_dump_8xH100.xml", "node03"),
        ("hosts.tar.gz/node05/gpu/topo.xml", "node05"),  # innermost directory that names a host
        ("hosts.tar/node05/node06/topo.xml", "node06"),
        ("rack01.tgz/topo.xml", None),  # the archive is not a host
        ("node09/hosts.tar/topo.xml", None),  # nor what is around it
        ("/home/user2/topo.xml", None),  # outside an archive only the file's own name counts
    ],
)
def test_host_from_source_name(source_name, host):
    assert host_from_source_name(source_name) == host


def test_source_host_warns_when_it_falls_back():
    assert source_host("node01.xml") == ("node01", None)
    host, warning = source_host("dump.xml")
    assert host == "host" and "'dump.xml' names no host" in str(warning)


_RANGES = st.tuples(st.integers(0, 200), st.integers(0, 20), st.integers(1, 3)).map(
    lambda values: (values[0], values[0] + values[1], values[2])
)


@given(prefix=st.from_regex(r"[a-z][a-z0-9-]{0,6}[a-z-]", fullmatch=True), ranges=st.lists(_RANGES, min_size=1, max_size=3))
@settings(max_examples=150, deadline=None)
def test_expansion_matches_a_plain_loop(prefix, ranges):
    bracket = ",".join(f"{low:0{width}d}-{high}" for low, high, width in ranges)
    expected = [f"{prefix}{number:0{width}d}" for low, high, width in ranges for number in range(low, high + 1)]
    assert list(expand_hostlist(f"{prefix}[{bracket}]")) == expected


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_random_text_gives_names_or_hostlist_error(text):
    try:
        names = expand_hostlist(text)
    except HostlistError:
        return
    assert names and all(isinstance(name, str) and name for name in names)
