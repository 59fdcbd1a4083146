"""Reads of fabrics. `snapshot_spec_get` is the one place that turns rows into core plain data."""
import functools

from django.db.models import Q, QuerySet
from django.utils import translation

from twin.common.errors import ApplicationError

from twin.simcore.diff import FINDING_CLASSES, SEVERITIES, DiffReport, Finding, diff_fabrics
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

from .access import fabrics_visible_to
from .models import Fabric, Link, Node, Snapshot

__all__ = ("fabric_list", "snapshot_spec_get", "snapshot_diff", "diff_findings", "DIFF_SORTS", "snapshot_search", "node_detail", "SEARCH_LIMIT")

SEARCH_LIMIT = 20

NODE_FIELDS = ("pk", "key", "kind", "name", "tier", "radix", "host", "attrs")
LINK_FIELDS = ("a_id", "a_port", "b_id", "b_port", "bandwidth_gbps", "latency_ns", "state", "domain", "attrs")


def fabric_list(user) -> QuerySet[Fabric]:
    """The fabrics `user` may see (twin.fabrics.access)."""
    return fabrics_visible_to(user, Fabric.objects.prefetch_related("snapshots")).order_by("name")


def snapshot_spec_get(*, snapshot_id: int) -> FabricSpec:
    """The snapshot as the core's FabricSpec (raises Snapshot.DoesNotExist).

    Snapshots never change, so the last few read are kept in memory: the cells of a fanned-out
    run on one worker read the same snapshot many times. The key includes the creation time, so
    a reused id (a test database rolled back) never returns another snapshot's fabric.
    """
    snapshot = Snapshot.objects.select_related("fabric").get(pk=snapshot_id)
    return snapshot_spec_cached(snapshot.pk, snapshot.created_at.isoformat())


@functools.lru_cache(maxsize=2)
def snapshot_spec_cached(snapshot_id: int, created_at: str) -> FabricSpec:
    snapshot = Snapshot.objects.select_related("fabric").get(pk=snapshot_id)
    key_by_pk: dict[int, str] = {}
    nodes = []
    for pk, key, kind, name, tier, radix, host, attrs in Node.objects.filter(snapshot=snapshot).order_by("pk").values_list(*NODE_FIELDS):
        key_by_pk[pk] = key
        nodes.append(NodeSpec(id=key, kind=kind, name=name, tier=tier, radix=radix, host=host, attrs=attrs))
    links = [
        LinkSpec(
            a=key_by_pk[a_id], a_port=a_port, b=key_by_pk[b_id], b_port=b_port,
            bandwidth_gbps=bandwidth, latency_ns=latency, state=state, domain=domain, attrs=attrs,
        )
        for a_id, a_port, b_id, b_port, bandwidth, latency, state, domain, attrs in Link.objects.filter(snapshot=snapshot)
        .order_by("pk")
        .values_list(*LINK_FIELDS)
    ]
    return FabricSpec(name=snapshot.fabric.name, nodes=tuple(nodes), links=tuple(links), attrs=snapshot.attrs)


def snapshot_diff(*, expected: Snapshot, found: Snapshot) -> DiffReport:
    """Findings of `found` checked against `expected` (an earlier snapshot or a cabling plan)."""
    if expected.fabric_id != found.fabric_id:
        raise ApplicationError(
            translation.gettext("Snapshots %(expected)s and %(found)s belong to different fabrics (%(expected_fabric)s, %(found_fabric)s); compare snapshots of one fabric.")
            % {"expected": expected.pk, "found": found.pk, "expected_fabric": expected.fabric.name, "found_fabric": found.fabric.name}
        )
    return snapshot_diff_cached(expected.pk, expected.created_at.isoformat(), found.pk, found.created_at.isoformat())


@functools.lru_cache(maxsize=4)
def snapshot_diff_cached(expected_id: int, expected_created_at: str, found_id: int, found_created_at: str) -> DiffReport:
    """Snapshots never change, so neither does their diff: paging and sorting its findings reuse it
    (keyed by creation times too, as `snapshot_spec_cached` is)."""
    return diff_fabrics(snapshot_spec_get(snapshot_id=expected_id), snapshot_spec_get(snapshot_id=found_id))


DIFF_SORTS = {
    "where": None,  # the report's own order: switches first, ports in numeric order
    "severity": lambda finding: SEVERITIES.index(finding.severity),
    "class": lambda finding: FINDING_CLASSES.index(finding.finding_class),
    "peer": lambda finding: (finding.peer.name, finding.peer.port or "") if finding.peer else ("\uffff", ""),
}
"""Ways to order a diff's findings; each keeps the report's order among equals."""


def diff_findings(report: DiffReport, *, finding_class: str = "", severity: str = "", text: str = "", sort: str = "where") -> list[Finding]:
    """The report's findings of one class and severity (blank: any) whose place, peer or message
    (in English or the reader's language) contains `text` (any case), ordered by one of
    `DIFF_SORTS` (a leading "-" reverses it; an unknown one is "where")."""
    lowered = text.strip().lower()

    def searched(finding: Finding) -> str:
        return f"{finding.end.label()} {finding.peer.label() if finding.peer else ''} {finding.message} {finding.text('message', translation)}".lower()

    chosen = [
        finding
        for finding in report.findings
        if (not finding_class or finding.finding_class == finding_class)
        and (not severity or finding.severity == severity)
        and (not lowered or lowered in searched(finding))
    ]
    key, reverse = DIFF_SORTS.get(sort.removeprefix("-")), sort.startswith("-")
    if key is None:
        return chosen[::-1] if reverse else chosen
    return sorted(chosen, key=key, reverse=reverse)


def snapshot_search(*, snapshot: Snapshot, query: str) -> list[dict]:
    """Nodes whose name, id (GUIDs are ids), host or PCI bus id contains `query`, best first:
    exact matches, then prefixes, then the rest, by name."""
    text = query.strip()
    if not text:
        return []
    found = (
        snapshot.nodes.filter(
            Q(name__icontains=text) | Q(key__icontains=text) | Q(host__icontains=text) | Q(attrs__bus_id__icontains=text) | Q(attrs__guid__icontains=text)
        )
        .order_by("name")
        .values("key", "name", "kind", "tier", "host", "attrs")[: SEARCH_LIMIT * 5]
    )
    lowered = text.lower()

    def matched_on(row) -> str:
        if lowered in row["name"].lower():
            return "name"
        if lowered in str(row["attrs"].get("guid", "")).lower() or lowered in row["key"].lower():
            return "guid" if "guid" in row["attrs"] or row["key"].startswith("ib:") else "name"
        if row["host"] and lowered in row["host"].lower():
            return "host"
        return "bus_id"

    def rank(row) -> tuple:
        name = row["name"].lower()
        return (name != lowered, not name.startswith(lowered), name)

    return [
        {"id": row["key"], "name": row["name"], "kind": row["kind"], "tier": row["tier"], "host": row["host"], "match": matched_on(row)}
        for row in sorted(found, key=rank)[:SEARCH_LIMIT]
    ]


def node_detail(*, snapshot: Snapshot, key: str) -> dict | None:
    """A node with each of its ports: peer, speed, state and counters."""
    node = snapshot.nodes.filter(key=key).first()
    if node is None:
        return None
    ports = []
    for link in Link.objects.filter(Q(a=node) | Q(b=node), snapshot=snapshot).select_related("a", "b").order_by("pk"):
        mine_is_a = link.a_id == node.pk
        peer, port, peer_port = (link.b, link.a_port, link.b_port) if mine_is_a else (link.a, link.b_port, link.a_port)
        ports.append({
            "port": port, "peer": peer.key, "peer_name": peer.name, "peer_port": peer_port,
            "bandwidth_gbps": link.bandwidth_gbps, "latency_ns": link.latency_ns, "state": link.state, "domain": link.domain, "attrs": link.attrs,
        })
    ports.sort(key=lambda item: (len(item["port"]), item["port"]))
    return {
        "id": node.key, "name": node.name, "kind": node.kind, "tier": node.tier, "radix": node.radix,
        "host": node.host, "attrs": node.attrs, "ports": ports,
    }
