"""Hop matrix and statistics against exact counts and a networkx brute force."""

import json
import math
from collections import Counter

import numpy as np
import pytest

from tests.simcore.fabrics import brute_force_hops, irregular_fabric, with_link_state
from twin.simcore.errors import FabricError
from twin.simcore.generate import fat_tree, supernode
from twin.simcore.hops import hop_classes, hop_matrix, hop_statistics
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec
from twin.simcore.translation import Phrase


def test_demo_histogram_is_exact():
    stats = hop_statistics(supernode())
    same_leaf = 32 * math.comb(32, 2)
    assert stats == {
        "cards": 1024,
        "switches": 48,
        "links": 2048,
        "pairs": math.comb(1024, 2),
        "histogram": {"1": same_leaf, "3": math.comb(1024, 2) - same_leaf},
        "mean_hops": (same_leaf + 3 * (math.comb(1024, 2) - same_leaf)) / math.comb(1024, 2),
        "diameter": 3,
        "unreachable_pairs": 0,
    }
    assert json.loads(json.dumps(stats)) == stats


@pytest.mark.parametrize(
    "fabric",
    [supernode(cards=48, cards_per_host=4, switch_radix=12), irregular_fabric()],
    ids=["leaf-spine", "irregular"],
)
def test_matrix_matches_networkx_brute_force(fabric):
    card_ids, matrix = hop_matrix(fabric, chunk=5)
    expected_ids, expected = brute_force_hops(fabric)
    assert card_ids == expected_ids
    assert matrix.dtype == np.int16
    np.testing.assert_array_equal(matrix, expected)


def test_irregular_fabric_cases():
    card_ids, matrix = hop_matrix(irregular_fabric())

    def hops(a: str, b: str) -> int:
        return matrix[card_ids.index(a), card_ids.index(b)]

    assert hops("card-0001", "card-0005") == 0  # direct cable beats leaf-spine-leaf
    assert hops("card-0001", "card-0016") == -1  # its only link is down
    # spine-01 -> core-1 is down: leaf-01, spine-02, core-1, crossing the passive agg-1.
    assert hops("card-0001", "far") == 3
    assert hops("dual", "card-0001") == 1 and hops("dual", "card-0013") == 1
    assert hops("via-nic", "card-0005") == 1  # the NIC does not count
    assert hops("pcie-a", "pcie-b") == 0  # through the host only
    assert hops("pcie-b", "card-0001") == -1  # cards never relay traffic
    assert hops("isolated", "isolated") == 0
    assert (matrix == matrix.T).all()


def test_cards_alike_share_a_class_and_zero_hop_partners_get_their_own():
    tree = hop_classes(fat_tree(endpoints=1024))
    assert len(tree.hops) == 32  # one class per leaf of 32 cards
    assert np.bincount(tree.card_class).tolist() == [32] * 32

    classes = hop_classes(irregular_fabric())

    def class_of(card: str) -> int:
        return int(classes.card_class[classes.card_ids.index(card)])

    # card-0001 and card-0002 share leaf-01, but card-0001 has a direct cable to card-0005.
    assert class_of("card-0002") == class_of("card-0003") != class_of("card-0001")
    assert [class_of(card) for card in ("card-0001", "pcie-a")].count(class_of("card-0005")) == 0
    assert classes.hops[class_of("card-0001"), class_of("card-0005")] == 0


def test_statistics_agree_with_the_matrix():
    fabric = irregular_fabric()
    _, matrix = brute_force_hops(fabric)
    upper = matrix[np.triu_indices(len(matrix), k=1)]
    stats = hop_statistics(fabric, chunk=3)
    reachable = upper[upper >= 0]
    assert stats["unreachable_pairs"] == int((upper < 0).sum())
    histogram = sorted(Counter(reachable.tolist()).items())
    assert stats["histogram"] == {str(hops): count for hops, count in histogram}
    assert stats["mean_hops"] == pytest.approx(reachable.mean())
    assert stats["diameter"] == reachable.max()
    assert stats["pairs"] == len(upper)


def test_a_card_whose_only_link_is_down_is_unreachable():
    fabric = supernode(cards=64, cards_per_host=8, switch_radix=16)
    down = next(i for i, link in enumerate(fabric.links) if link.a == "card-0064")
    stats = hop_statistics(with_link_state(fabric, down, "down"))
    assert stats["unreachable_pairs"] == 63
    assert sum(stats["histogram"].values()) == stats["pairs"] - 63
    card_ids, matrix = hop_matrix(with_link_state(fabric, down, "down"))
    assert (matrix[-1, :-1] == -1).all() and matrix[-1, -1] == 0


def test_degraded_links_still_count():
    fabric = supernode(cards=64, cards_per_host=8, switch_radix=16)
    assert hop_statistics(with_link_state(fabric, 0, "degraded")) == hop_statistics(fabric)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000])
def test_progress_is_monotone_and_ends_at_one(chunk):
    calls = []
    stats = hop_statistics(
        supernode(cards=64, cards_per_host=8, switch_radix=16),
        on_progress=lambda fraction, message: calls.append((fraction, message)),
        chunk=chunk,
    )
    fractions = [fraction for fraction, _ in calls]
    assert len(calls) == math.ceil(8 / chunk)  # chunks of classes: the cards of each of the 8 leaves
    assert all(0 < a < b for a, b in zip(fractions, fractions[1:]))
    assert fractions[-1] == 1.0
    assert all(isinstance(message, Phrase) and str(message) for _, message in calls)
    same_leaf = 8 * math.comb(8, 2)
    assert stats["histogram"] == {"1": same_leaf, "3": math.comb(64, 2) - same_leaf}


def test_no_cards_still_reports_completion():
    calls = []
    stats = hop_statistics(
        FabricSpec("empty", (), ()), on_progress=lambda *call: calls.append(call)
    )
    assert stats["pairs"] == 0 and stats["histogram"] == {} and stats["diameter"] == 0
    assert [fraction for fraction, _ in calls] == [1.0]


def test_bad_chunk_and_invalid_fabric_are_refused():
    with pytest.raises(ValueError, match="chunk"):
        hop_statistics(supernode(cards=64, cards_per_host=8, switch_radix=16), chunk=0)
    broken = FabricSpec(
        "broken", (NodeSpec("c", "card", "c"),), (LinkSpec("c", "1", "x", "1", 1, 0),)
    )
    with pytest.raises(FabricError, match="unknown node 'x'"):
        hop_matrix(broken)
