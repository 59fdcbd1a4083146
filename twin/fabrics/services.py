"""Writes to fabrics: every snapshot is written whole or not at all."""
import hashlib

from django.db import transaction

from twin.ingest import detect_format, parse_fabric
from twin.simcore.model import FabricSpec

from .models import Fabric, Link, Node, Snapshot

__all__ = ("snapshot_create", "snapshot_import")

BULK_BATCH = 5000


@transaction.atomic
def snapshot_create(
    *, fabric_name: str, spec: FabricSpec, source_name: str, source_format: str, checksum: str, user=None
) -> Snapshot:
    """Store `spec` as the next version of the named fabric (created on first use)."""
    spec.validate()
    fabric, _ = Fabric.objects.get_or_create(name=fabric_name)
    # Lock the fabric row so that two uploads at once get distinct versions.
    fabric = Fabric.objects.select_for_update().get(pk=fabric.pk)
    last = fabric.snapshots.order_by("-version").values_list("version", flat=True).first() or 0
    kinds = [node.kind for node in spec.nodes]
    snapshot = Snapshot.objects.create(
        fabric=fabric,
        version=last + 1,
        source_name=source_name[:255],
        source_format=source_format,
        checksum=checksum,
        attrs=spec.attrs.to_plain(),
        node_count=len(spec.nodes),
        card_count=kinds.count("card"),
        switch_count=kinds.count("switch"),
        link_count=len(spec.links),
        created_by=user,
    )
    nodes = Node.objects.bulk_create(
        (
            Node(
                snapshot=snapshot,
                key=node.id,
                kind=node.kind,
                name=node.name,
                tier=node.tier,
                radix=node.radix,
                host=node.host,
                attrs=node.attrs.to_plain(),
            )
            for node in spec.nodes
        ),
        batch_size=BULK_BATCH,
    )
    pk_by_key = {node.key: node.pk for node in nodes}
    if None in pk_by_key.values():  # backends that cannot return ids from bulk inserts
        pk_by_key = dict(snapshot.nodes.values_list("key", "pk"))
    Link.objects.bulk_create(
        (
            Link(
                snapshot=snapshot,
                a_id=pk_by_key[link.a],
                a_port=link.a_port,
                b_id=pk_by_key[link.b],
                b_port=link.b_port,
                bandwidth_gbps=link.bandwidth_gbps,
                latency_ns=link.latency_ns,
                state=link.state,
                domain=link.domain,
                attrs=link.attrs.to_plain(),
            )
            for link in spec.links
        ),
        batch_size=BULK_BATCH,
    )
    return snapshot


def snapshot_import(*, fabric_name: str, data: bytes, source_name: str, fmt: str | None = None, user=None) -> Snapshot:
    """Parse an uploaded file and store it as a new snapshot.

    Raises `twin.ingest.IngestError` (with file, line and what was expected) before anything
    is written when the file is not valid.
    """
    text = data.decode("utf-8-sig", errors="replace")
    # Without a detected format, parse_fabric raises an IngestError naming the known ones.
    format_name = fmt or detect_format(text)
    spec = parse_fabric(text, source_name=source_name, format=format_name)
    return snapshot_create(
        fabric_name=fabric_name or spec.name,
        spec=spec,
        source_name=source_name,
        source_format=format_name,
        checksum=hashlib.sha256(data).hexdigest(),
        user=user,
    )
