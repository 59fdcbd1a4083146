"""Leaf-to-leaf traffic per frame: the right pairs, the right totals, small at any size."""
import base64

import numpy as np

from twin.replay import bind_trace, replay_trace
from twin.replay.leafmatrix import leaf_groups, leaf_matrix_frames
from twin.simcore.algorithms import phases_for
from twin.simcore.generate import fat_tree, supernode
from twin.traces import CollectiveEvent, FlowEvent, RankBinding, Trace

FABRIC = supernode(cards=64, switch_radix=16)  # 8 leaves of 8 cards


def decoded(result: dict) -> np.ndarray:
    groups = len(result["groups"])
    frames = [np.frombuffer(base64.b64decode(frame), dtype=np.uint8).reshape(groups, groups) for frame in result["frames"]]
    return np.array(frames, dtype=float) / 255 * result["scale_bytes"]


def test_a_ring_over_two_leaves_talks_within_and_between_them_only():
    cards = [f"card-{n:04d}" for n in range(1, 17)]  # leaf-01 and leaf-02
    trace = Trace(
        name="ring",
        ranks=tuple(RankBinding(rank=r, card=card) for r, card in enumerate(cards)),
        events=(CollectiveEvent(t_s=0.0, op="allreduce", ranks=tuple(range(16)), bytes=2**24, algorithm="ring"),),
    )
    replay = replay_trace(bind_trace(FABRIC, trace))
    result = leaf_matrix_frames(replay, max_frames=20)
    assert result["groups"] == [f"leaf-{n:02d}" for n in range(1, 9)]
    matrices = decoded(result)
    total = matrices.sum(axis=0)
    assert total[2:, :].sum() == 0 and total[:, 2:].sum() == 0  # nobody else talks
    expected = sum(phase.bytes_per_flow * phase.steps * len(phase.sources) for phase in phases_for("allreduce", "ring", 2**24, 16))
    assert abs(total.sum() - expected) / expected < 0.02  # 8-bit frames: within rounding
    assert total[0, 1] > 0 and total[1, 0] > 0  # the ring crosses between the two leaves both ways


def test_flows_and_leaf_buckets():
    trace = Trace(
        name="flow",
        ranks=(RankBinding(rank=0, card="card-0001"), RankBinding(rank=1, card="card-0064")),
        events=(FlowEvent(t_s=0.0, src_rank=0, dst_rank=1, bytes=10**8),),
    )
    matrices = decoded(leaf_matrix_frames(replay_trace(bind_trace(FABRIC, trace)), max_frames=5)).sum(axis=0)
    assert matrices[0, 7] > 0 and matrices.sum() == matrices[0, 7]
    names, group_of_card = leaf_groups(fat_tree(endpoints=16384, radix=64))
    assert len(names) == 64 and names[0] == "leaf-001…leaf-008"  # 512 leaves in buckets of 8
    assert group_of_card["card-00001"] == 0 and group_of_card["card-16384"] == 63
