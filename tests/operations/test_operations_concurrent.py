"""Concurrent groups (``run_groups``) time a step by the simulator's own law: one group alone takes
the simulator's time, per-peer posting, in-switch start-up and NVLS loops included."""

import dataclasses

import numpy as np
import pytest

from tests.simcore.fabrics import eight_h100
from twin.operations.concurrent import run_groups
from twin.simcore.algorithms import phases_for
from twin.simcore.generate import fat_tree
from twin.simcore.simulate import Simulator

MIB = 2**20


def alone(fabric, collective, algorithm, size, ecmp="hash"):
    """(simulator's result, run_groups of one group of every card) for the same collective."""
    simulator = Simulator(fabric, ecmp=ecmp)
    result = simulator.run(collective, size, algorithm)
    cards = np.arange(len(simulator.compiled.card_ids))
    phases = phases_for(collective, algorithm, size, len(cards), simulator._rank_groups)
    return result, run_groups(simulator.compiled, cards[None, :], phases, ecmp=ecmp)


@pytest.mark.parametrize("size", [64 * 1024, MIB, 16 * MIB, 256 * MIB, 2**30])
def test_one_in_switch_group_takes_the_simulators_time_with_its_nvls_loops(size):
    result, run = alone(eight_h100(), "allreduce", "in_switch", size)
    assert run.protocol == result["protocol"] == "Simple"
    assert run.time_s == pytest.approx(result["time_s"], rel=1e-12)
    assert run.latency_s == pytest.approx(result["latency_s"], rel=1e-12)
    # The loops are charged: 1 GiB takes 64 of them (docs/simulation.md), 10 us each.
    if size == 2**30:
        assert run.latency_s > 64 * 10e-6


@pytest.mark.parametrize(
    ("collective", "algorithm", "size"),
    [("allreduce", "ring", MIB), ("allreduce", "ring", 2**30), ("alltoall", "direct", 16 * MIB), ("allreduce", "one_shot", 4096)],
)
def test_one_group_takes_the_simulators_time(collective, algorithm, size):
    fabric = eight_h100() if algorithm == "one_shot" else fat_tree(endpoints=64, radix=16)
    result, run = alone(fabric, collective, algorithm, size)
    assert run.protocol == result["protocol"]
    assert run.time_s == pytest.approx(result["time_s"], rel=1e-12)


def reducing(fabric):
    """``fabric`` with every switch able to reduce in the switch (NVLS / SHARP)."""
    nodes = tuple(
        dataclasses.replace(node, attrs={**node.attrs, "in_switch_reduction": True}) if node.kind == "switch" else node
        for node in fabric.nodes
    )
    return dataclasses.replace(fabric, nodes=nodes)


def test_in_switch_trees_of_groups_that_share_an_arc_share_it():
    # 4 leaves of 12 cards, 4 uplinks each (3:1).
    simulator = Simulator(reducing(fat_tree(endpoints=48, radix=16, oversubscription=3)))
    cards = np.arange(len(simulator.compiled.card_ids)).reshape(4, 12)
    leaf_phases, across_phases = phases_for("allreduce", "in_switch", 2**30, 12), phases_for("allreduce", "in_switch", 2**30, 4)
    # Groups of one leaf each reduce in their own leaf: together as fast as one alone.
    one_leaf = run_groups(simulator.compiled, cards[:1], leaf_phases)
    assert run_groups(simulator.compiled, cards, leaf_phases).time_s == pytest.approx(one_leaf.time_s, rel=1e-12)
    # Groups of a card a leaf reduce through the spines: 12 trees over a leaf's 4 uplinks.
    lone = run_groups(simulator.compiled, cards.T[:1].copy(), across_phases)
    together = run_groups(simulator.compiled, cards.T.copy(), across_phases)
    assert together.time_s > lone.time_s
