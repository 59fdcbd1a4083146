import pytest

from twin.simcore.generate import supernode
from twin.simcore.model import FabricSpec, LinkSpec
from twin.simcore.paths import NoPath, hop_path

DEMO = supernode(cards=64, switch_radix=16)


def test_same_leaf_is_one_hop_and_across_leaves_three():
    same = hop_path(DEMO, "card-0001", "card-0002")
    assert same["hops"] == 1 and same["links"] == 2 and same["nodes"][1] == "leaf-01"
    across = hop_path(DEMO, "card-0001", "card-0064")
    assert across["hops"] == 3 and across["links"] == 4
    assert across == hop_path(DEMO, "card-0001", "card-0064")  # stable


def test_down_links_are_avoided_and_unknown_nodes_refused():
    links = tuple(
        LinkSpec(l.a, l.a_port, l.b, l.b_port, l.bandwidth_gbps, l.latency_ns, state="down" if "card-0001" in (l.a, l.b) else l.state, domain=l.domain)
        for l in DEMO.links
    )
    cut = FabricSpec(DEMO.name, DEMO.nodes, links, DEMO.attrs)
    with pytest.raises(NoPath, match="no path"):
        hop_path(cut, "card-0001", "card-0002")
    with pytest.raises(NoPath, match="unknown node"):
        hop_path(DEMO, "card-0001", "nope")
