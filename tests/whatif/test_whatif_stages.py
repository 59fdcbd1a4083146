"""Stages: sizes and tier changes by the design rules, checked before any work starts."""

from collections import Counter

import pytest

from twin.simcore.generate import fat_tree, supernode
from twin.whatif.bom import bill_of_materials, bom_delta
from twin.whatif.errors import WhatIfError
from twin.whatif.rules import design_rules
from twin.whatif.stages import StageSpec, build_stage, plan_stages

DEMO = design_rules(supernode())


def test_demo_grows_two_tier_to_2048_then_adds_a_core_tier():
    stages = plan_stages(DEMO, (1, 2, 4, 8, 16), ["one-supernode"])
    assert [(stage.cards, stage.tiers) for stage in stages] == [(1024, 2), (2048, 2), (4096, 3), (8192, 3), (16384, 3)]


@pytest.mark.parametrize(
    ("factor", "switches", "cables"),
    [
        # NVIDIA DGX SuperPOD, 64-port switches (MODELLING.md section 7).
        (1, {"leaf": 32, "spine": 16}, {"card-leaf (scale-up)": 1024, "leaf-spine (scale-up)": 1024}),
        (2, {"leaf": 64, "spine": 32}, {"card-leaf (scale-up)": 2048, "leaf-spine (scale-up)": 2048}),
        (
            4,
            {"leaf": 128, "spine": 128, "core": 64},
            {"card-leaf (scale-up)": 4096, "leaf-spine (scale-up)": 4096, "spine-core (scale-up)": 4096},
        ),
    ],
)
def test_bill_of_materials_matches_the_superpod_table(factor, switches, cables):
    (stage,) = plan_stages(DEMO, (factor,), ["one-supernode"])
    bom = bill_of_materials(build_stage(stage))
    assert (bom["cards"], bom["switches"], bom["cables"]) == (1024 * factor, switches, cables)
    # Switch-to-switch cables are optical: one transceiver at each end.
    assert bom["transceivers_total"] == 2 * sum(count for name, count in cables.items() if not name.startswith("card"))
    items = bom["items"]
    assert bom["power_kw"]["total"] == pytest.approx(
        (1024 * factor * items["card_w"] + sum(switches.values()) * items["switch_w"] + bom["transceivers_total"] * items["transceiver_w"]) / 1e3
    )


def test_bom_delta_shows_the_added_core_tier():
    two, four = (bill_of_materials(build_stage(stage)) for stage in plan_stages(DEMO, (2, 4), ["one-supernode"]))
    delta = bom_delta(two, four)
    assert delta["switches"] == {"leaf": 64, "spine": 96, "core": 64}
    assert delta["cards"] == 2048 and delta["cables"]["spine-core (scale-up)"] == 4096


def test_alternatives_build_the_designs_they_name():
    rules = design_rules(fat_tree(endpoints=64, radix=16))
    stages = {stage.alternative: stage for stage in plan_stages(rules, (2,), ["one-supernode", "k-supernodes", "rail"], k=4)}
    assert {name: stage.cards for name, stage in stages.items()} == dict.fromkeys(stages, 128)
    cluster = build_stage(stages["k-supernodes"])
    assert Counter(card.attrs["supernode"] for card in cluster.cards()) == {1: 32, 2: 32, 3: 32, 4: 32}
    assert {link.domain for link in cluster.links} == {"scale-up", "scale-out"}
    rail = build_stage(stages["rail"])
    assert any(node.attrs.get("role") == "nvswitch" for node in rail.switches())
    assert len(rail.cards()) == 128


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"factors": (0.5, 2)}, "factor 0.5: expected at least 1"),
        ({"factors": (2, 1)}, "expected strictly increasing stages"),
        ({"factors": ()}, "no factors"),
        ({"factors": (1, "x")}, "factor 'x': expected a number"),
        ({"factors": (1025 / 1024,)}, "1,025 cards; expected a whole number of hosts of 8 cards"),
        ({"factors": (1, 256)}, "262,144 cards; expected at most 131,072"),
        ({"factors": (1, 1e308)}, "factor 1e+308: inf cards; expected at most 131,072"),
        ({"alternatives": ["dragonfly"]}, "alternative 'dragonfly': expected one of"),
        ({"alternatives": ["k-supernodes"], "k": 1}, "k = 1: expected a whole number of super-nodes, at least 2"),
        ({"alternatives": ["k-supernodes"], "k": 3}, "do not split into 3 super-nodes"),
    ],
)
def test_impossible_plans_are_refused_before_any_work(arguments, expected):
    with pytest.raises(WhatIfError) as raised:
        plan_stages(DEMO, **arguments)
    assert expected in str(raised.value)


def test_a_stage_needing_more_tiers_than_allowed_is_refused_up_front():
    rules = DEMO.with_overrides(max_tiers=2)
    with pytest.raises(WhatIfError) as raised:
        plan_stages(rules, (1, 2, 4, 8), ["one-supernode"])
    message = str(raised.value)
    assert "factor 4, one-supernode: 4,096 cards need 3 tiers" in message
    assert "factor 8, one-supernode: 8,192 cards need 3 tiers" in message
    assert "more than max_tiers = 2 (at most 2,048 cards)" in message and "or allow up to 3 tiers" in message
    # And beyond 3 tiers the generators cannot build at all.
    small = design_rules(fat_tree(endpoints=16, radix=4, cards_per_host=4))
    with pytest.raises(WhatIfError, match="32 cards need 4 tiers of radix-4 switches") as raised:
        plan_stages(small, (1, 2), ["one-supernode"])
    assert "allow" not in str(raised.value)


def test_stage_round_trips_as_plain_data():
    (stage,) = plan_stages(DEMO, (4,), ["one-supernode"])
    plain = stage.to_dict()
    assert plain["label"] == "4x one-supernode (4,096 cards)"
    assert StageSpec.from_dict(plain) == stage
    with pytest.raises(WhatIfError, match="not a stage description"):
        StageSpec.from_dict({"alternative": "rail"})
