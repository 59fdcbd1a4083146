"""Reads of fabrics. `snapshot_spec_get` is the one place that turns rows into core plain data."""
from django.db.models import QuerySet

from twin.common.errors import ApplicationError

from twin.simcore.diff import DiffReport, diff_fabrics
from twin.simcore.model import FabricSpec, LinkSpec, NodeSpec

from .models import Fabric, Link, Node, Snapshot

__all__ = ("fabric_list", "snapshot_spec_get", "snapshot_graph", "snapshot_diff")

NODE_FIELDS = ("pk", "key", "kind", "name", "tier", "radix", "host", "attrs")
LINK_FIELDS = ("a_id", "a_port", "b_id", "b_port", "bandwidth_gbps", "latency_ns", "state", "domain", "attrs")


def fabric_list() -> QuerySet[Fabric]:
    return Fabric.objects.prefetch_related("snapshots").order_by("name")


def snapshot_spec_get(*, snapshot_id: int) -> FabricSpec:
    """The snapshot as the core's FabricSpec (raises Snapshot.DoesNotExist)."""
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


def snapshot_graph(*, snapshot: Snapshot) -> dict:
    """The compact node/link lists the map draws (JSON-ready)."""
    key_by_pk: dict[int, str] = {}
    nodes = []
    for pk, key, kind, name, tier, host in snapshot.nodes.order_by("pk").values_list("pk", "key", "kind", "name", "tier", "host"):
        key_by_pk[pk] = key
        nodes.append({"id": key, "kind": kind, "name": name, "tier": tier, "host": host})
    links = [
        {"a": key_by_pk[a_id], "b": key_by_pk[b_id], "state": state, "domain": domain, "bandwidth_gbps": bandwidth}
        for a_id, b_id, state, domain, bandwidth in snapshot.links.order_by("pk").values_list(
            "a_id", "b_id", "state", "domain", "bandwidth_gbps"
        )
    ]
    return {"snapshot": snapshot.pk, "nodes": nodes, "links": links}


def snapshot_diff(*, expected: Snapshot, found: Snapshot) -> DiffReport:
    """Findings of `found` checked against `expected` (an earlier snapshot or a cabling plan)."""
    if expected.fabric_id != found.fabric_id:
        raise ApplicationError(
            f"Snapshots {expected.pk} and {found.pk} belong to different fabrics "
            f"({expected.fabric.name}, {found.fabric.name}); compare snapshots of one fabric."
        )
    return diff_fabrics(snapshot_spec_get(snapshot_id=expected.pk), snapshot_spec_get(snapshot_id=found.pk))
