"""Replay and placement hash a flow on its ends' routing indices ((leaf, port) order, as the
router numbers destinations), not on card numbers: an uploaded fabric listing its cards in
another order puts the same bytes on every link."""

import dataclasses
import random

import numpy as np

from twin.operations.concurrent import run_groups
from twin.replay.costs import CostModel, ReplayOptions
from twin.simcore.algorithms import phases_for
from twin.simcore.compile import compile_fabric
from twin.simcore.generate import fat_tree

FABRIC = fat_tree(endpoints=128, radix=16)  # 16 leaves, 8 spines: hashing picks among 8 paths


def with_cards_shuffled(fabric, seed):
    """The same fabric, its cards listed in another order (links as they were)."""
    cards = list(fabric.cards())
    random.Random(seed).shuffle(cards)
    return dataclasses.replace(fabric, nodes=(*cards, *(node for node in fabric.nodes if node.kind != "card")))


def link_bytes_of_groups(fabric, groups):
    compiled = compile_fabric(fabric)
    number = {card: position for position, card in enumerate(compiled.card_ids)}
    cards = np.array([[number[card] for card in group] for group in groups])
    phases = phases_for("alltoall", "direct", 2**24, cards.shape[1])
    run = run_groups(compiled, cards, phases, ecmp="hash", seed=3)
    return np.bincount(compiled.arc_link, weights=run.arc_bytes, minlength=len(fabric.links))


def test_concurrent_groups_load_the_same_links_whatever_the_card_order():
    ids = [card.id for card in FABRIC.cards()]
    groups = [ids[start::16] for start in range(16)]  # each group: a card on every leaf
    shuffled = with_cards_shuffled(FABRIC, seed=5)
    assert [card.id for card in shuffled.cards()] != ids
    np.testing.assert_allclose(link_bytes_of_groups(shuffled, groups), link_bytes_of_groups(FABRIC, groups))
    # Hashing does collide here: not every spine link carries the same bytes.
    assert len(np.unique(np.round(link_bytes_of_groups(FABRIC, groups)))) > 2


def test_replayed_flows_load_the_same_links_whatever_the_card_order():
    ids = [card.id for card in FABRIC.cards()]
    flows = [(ids[card], ids[(card + 40) % len(ids)], 2**20) for card in range(len(ids))]

    def loads(fabric):
        total = np.zeros(2 * len(fabric.links))
        for cost in CostModel(fabric, ReplayOptions(ecmp="hash", seed=1, channels=2)).flows(flows):
            total[cost.arcs] += cost.arc_bytes
        return total

    np.testing.assert_allclose(loads(with_cards_shuffled(FABRIC, seed=9)), loads(FABRIC))
