"""What an upload contained, for the person who uploaded it: counts and warnings."""

from __future__ import annotations

from collections import Counter

from twin.simcore.model import FabricSpec
from twin.simcore.translation import LATER, plain_words, words_from_plain

__all__ = ["fabric_summary"]


def _speed_label(gbps: float) -> str:
    return f"{gbps:g} Gb/s"


def fabric_summary(spec: FabricSpec) -> dict:
    """JSON-ready counts of nodes by kind (switches by tier), links by speed, state and domain,
    and warnings an operator should look at (down or degraded links, merge conflicts, what the
    parsers recorded in ``attrs["warnings"]``). The summary's own warnings are stored as Phrases
    (``plain_words``), rendered in the reader's language."""
    nodes_by_kind = Counter(node.kind for node in spec.nodes)
    switches_by_tier = Counter(node.tier for node in spec.nodes if node.kind == "switch")
    links_by_state = Counter(link.state for link in spec.links)
    links_by_speed = Counter(_speed_label(link.bandwidth_gbps) for link in spec.links)
    links_by_domain = Counter(link.domain for link in spec.links)
    warnings = []
    if links_by_state["down"]:
        down = links_by_state["down"]
        warnings.append(plain_words(LATER.ngettext("%(count)s link down", "%(count)s links down", down) % {"count": down}))
    if links_by_state["degraded"]:
        degraded = links_by_state["degraded"]
        warnings.append(plain_words(LATER.ngettext(
            "%(count)s link degraded (below the usual width or speed)", "%(count)s links degraded (below their usual width or speed)", degraded,
        ) % {"count": degraded}))  # fmt: skip
    conflicts = spec.attrs.get("merge_conflicts") or ()
    if conflicts:
        warnings.append(plain_words(LATER.ngettext(
            "%(count)s conflicting fact between the files; the more specific source was kept",
            "%(count)s conflicting facts between the files; the more specific source was kept", len(conflicts),
        ) % {"count": len(conflicts)}))  # fmt: skip
    warnings += [plain_words(words_from_plain(warning)) for warning in spec.attrs.get("warnings", ())]  # Attrs back to dicts
    return {
        "nodes": len(spec.nodes),
        "links": len(spec.links),
        "nodes_by_kind": dict(sorted(nodes_by_kind.items())),
        "switches_by_tier": dict(sorted(switches_by_tier.items())),
        "links_by_state": dict(sorted(links_by_state.items())),
        "links_by_speed": dict(sorted(links_by_speed.items(), key=lambda item: float(item[0].split()[0]))),
        "links_by_domain": dict(sorted(links_by_domain.items())),
        "warnings": warnings,
    }
