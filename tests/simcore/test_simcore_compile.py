"""Compiling a fabric with links down from its healthy compiled form equals compiling it afresh."""

import dataclasses
import random

import numpy as np
import pytest

from tests.simcore.fabrics import irregular_fabric
from twin.simcore.compile import CompiledFabric, compile_fabric, compiled_with_links_down
from twin.simcore.generate import rail_optimised, supernode, supernode_cluster
from twin.simcore.simulate import Simulator

FABRICS = {
    "leaf-spine": supernode(cards=64, cards_per_host=8, switch_radix=16),
    "rail-optimised": rail_optimised(servers=16, cards_per_server=4, servers_per_unit=8, radix=16),
    "two super-nodes": supernode_cluster(supernodes=2, cards_per_supernode=64, radix=16, scale_out_radix=8),
    "irregular": irregular_fabric(),
}


def assert_same_compiled(derived: CompiledFabric, fresh: CompiledFabric) -> None:
    for field in dataclasses.fields(CompiledFabric):
        ours, theirs = getattr(derived, field.name), getattr(fresh, field.name)
        if isinstance(theirs, np.ndarray):
            np.testing.assert_array_equal(ours, theirs, err_msg=field.name)
        else:
            assert ours == theirs, field.name


@pytest.mark.parametrize("name", FABRICS)
def test_links_down_derived_equals_fresh(name):
    fabric = FABRICS[name]
    healthy = compile_fabric(fabric)
    draw = random.Random(name)
    for count in (1, 3, len(fabric.links) // 4, len(fabric.links)):  # the last takes every link down
        failed = fabric.with_links_down(draw.sample(range(len(fabric.links)), count))
        assert_same_compiled(compiled_with_links_down(healthy, failed), compile_fabric(failed))


def test_whole_scale_out_tier_down_drops_its_link_class():
    fabric = FABRICS["two super-nodes"]
    failed = fabric.with_links_down(position for position, link in enumerate(fabric.links) if link.domain == "scale-out")
    derived = compiled_with_links_down(compile_fabric(fabric), failed)
    assert not any("scale-out" in name for name in derived.class_names)
    assert_same_compiled(derived, compile_fabric(failed))


def test_only_the_same_fabric_with_links_down_is_derived():
    healthy = compile_fabric(FABRICS["leaf-spine"])
    with pytest.raises(ValueError, match="with links down"):
        compiled_with_links_down(healthy, FABRICS["irregular"])
    with pytest.raises(ValueError, match="compiled form"):
        Simulator(FABRICS["irregular"], compiled=healthy)


def test_an_equal_fabric_loaded_again_is_derived_too():
    """The compile cache answers for an equal fabric: a failure search's worker loads the fabric
    once per cell, and may get the compiled form of another cell's copy."""
    first, again = supernode(cards=64, cards_per_host=8, switch_radix=16), supernode(cards=64, cards_per_host=8, switch_radix=16)
    healthy = compile_fabric(first)
    assert compile_fabric(again) is healthy and again.nodes is not first.nodes
    failed = again.with_links_down([0])
    assert_same_compiled(compiled_with_links_down(healthy, failed), compile_fabric(failed))
