"""The NCCL release the transport follows (``Transport.nccl_version``): how NVLS spreads a
buffer over its channels, before 2.20 and since."""

import pytest

from tests.simcore.fabrics import eight_h100
from twin.simcore.errors import TwinCoreError
from twin.simcore.simulate import Simulator
from twin.simcore.transport import NVLS_SPREAD_SINCE, Transport, nccl_release, transport_for

MIB = 2**20


def test_versions_read_as_nccl_and_its_logs_write_them():
    assert nccl_release("2.18.5") == (2, 18, 5)
    assert nccl_release("v2.20.5-1") == (2, 20, 5)  # a release tag
    assert nccl_release("2.21.5+cuda12.4") == (2, 21, 5)  # "NCCL version ..." of NCCL_DEBUG=INFO
    assert nccl_release(" 2.19 ") == (2, 19, 0)
    for bad in ("", "2", "two.eighteen", "2.18.5.1", "2..5"):
        with pytest.raises(TwinCoreError, match="NCCL version"):
            Transport(nccl_version=bad)


def test_the_default_is_a_release_that_spreads_and_overrides_reach_it():
    assert nccl_release(Transport().nccl_version) >= NVLS_SPREAD_SINCE
    assert Transport().to_dict()["nccl_version"] == Transport().nccl_version
    assert Transport().updated({"nccl_version": "2.18.5"}).nccl_version == "2.18.5"
    assert transport_for(eight_h100("2.18.5")).nccl_version == "2.18.5"
    with pytest.raises(TwinCoreError, match="NCCL version"):
        Simulator(eight_h100(), transport={"nccl_version": "latest"})


def test_before_2_20_a_buffer_smaller_than_a_loop_leaves_nvls_channels_idle():
    """16 channels x 8 heads: 1 MiB is half a loop of 16 KiB chunks (8 of 16 channels carry it),
    3 MiB one and a half loops of 16 KiB (the second half full), 2 and 16 MiB whole loops."""
    old, new = Transport(nccl_version="2.19.4"), Transport(nccl_version="2.20.3")
    for size, share in ((MIB, 0.5), (3 * MIB, 0.75), (2 * MIB, 1.0), (16 * MIB, 1.0), (2**30, 1.0)):
        assert old.in_switch_share(size, 8) == pytest.approx(share), size
        assert new.in_switch_share(size, 8) == 1.0
    assert Transport(nccl_version="2.18.5", in_switch_channels=8).in_switch_share(MIB, 8) == 1.0  # 8 x 8 x 16 KiB


def test_the_release_changes_in_switch_time_only_where_channels_sit_idle():
    old, new = (Simulator(eight_h100(version)) for version in ("2.18.5", "2.20.5"))
    at = {size: [sim.run("allreduce", size, "in_switch", top_links=0)["time_s"] for sim in (old, new)] for size in (MIB, 2 * MIB, 16 * MIB)}
    slow, fast = at[MIB]
    assert slow > fast
    # The idle half doubles the wire time of the 1 MiB (a few us at NVLink's rate), nothing else.
    assert 1e-6 < slow - fast < 1e-5
    for size in (2 * MIB, 16 * MIB):
        assert at[size][0] == pytest.approx(at[size][1], rel=1e-12)
    ring = [sim.run("allreduce", MIB, "ring", top_links=0)["time_s"] for sim in (old, new)]
    assert ring[0] == ring[1]  # only in-switch reduction follows the release
