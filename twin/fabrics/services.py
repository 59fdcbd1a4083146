"""Writes to fabrics: every snapshot is written whole or not at all."""
import gzip
import hashlib
import json
import logging
from collections.abc import Iterable, Sequence

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import translation

from twin.common.errors import ApplicationError, core_error_text
from twin.ingest import IngestError, ParseOptions
from twin.ingest.archive import ArchiveLimits
from twin.ingest.completion import Completion, usability_warnings, with_scale_up
from twin.ingest.errors import in_language
from twin.ingest.summary import fabric_summary
from twin.simcore.layout import fabric_layout
from twin.simcore.model import FabricSpec
from twin.simcore.translation import plain_words
from twin.whatif.errors import WhatIfError
from twin.whatif.rules import design_rules

from .access import fabric_hidden_from
from .models import Fabric, Link, Node, Snapshot, SnapshotLayout, SnapshotRole
from .reading import FilesRefused, SourceFile, decode_text, read_files_isolated
from .realtime import fabric_broadcast_snapshot
from .selectors import snapshot_spec_get

__all__ = ("snapshot_scale_up_correct", "SourceFile", "decode_text", "UploadRejected", "source_files_from_uploads", "snapshot_create", "snapshot_import", "snapshot_layout_get_or_create")

log = logging.getLogger(__name__)

BULK_BATCH = 5000
LAYOUT_GZIP_LEVEL = 6  # at 65,536 cards: 7.5 MB of JSON to 0.54 MB in 0.5 s; level 9 saves 0.4 % in twice the time
NODE_COLUMNS = ("snapshot_id", "key", "kind", "name", "tier", "radix", "host", "attrs")
LINK_COLUMNS = ("snapshot_id", "a_id", "a_port", "b_id", "b_port", "bandwidth_gbps", "latency_ns", "state", "domain", "attrs")


def insert_rows(model, columns: tuple[str, ...], rows: Iterable[tuple]) -> None:
    """Insert many rows fast. PostgreSQL takes them through COPY (about five times faster
    than INSERTs for a 50,000-link fabric); other databases through bulk_create. The last
    column is JSON."""
    if connection.vendor == "postgresql":
        table = connection.ops.quote_name(model._meta.db_table)
        names = ", ".join(connection.ops.quote_name(model._meta.get_field(column.removesuffix("_id")).column) for column in columns)
        # The driver's own cursor: its errors made Django's (a lost connection is then a 503, not a 500).
        with connection.wrap_database_errors, connection.cursor() as cursor, cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row((*row[:-1], json.dumps(row[-1])))
        return
    model.objects.bulk_create((model(**dict(zip(columns, row))) for row in rows), batch_size=BULK_BATCH)


class UploadRejected(ApplicationError):
    """One or more files cannot be read; `extra["files"]` holds each file's problems."""


def fabric_get_or_create_locked(name: str) -> Fabric:
    """The fabric row, created if new, locked until the transaction ends so that concurrent
    uploads to one fabric get distinct versions."""
    try:
        with transaction.atomic():  # a savepoint: a racing creator leaves us a usable transaction
            Fabric.objects.get_or_create(name=name)
    except IntegrityError:
        pass  # another upload created it between our look-up and insert
    return Fabric.objects.select_for_update().get(name=name)


@transaction.atomic
def snapshot_create(
    *,
    fabric_name: str,
    spec: FabricSpec,
    source_name: str,
    source_format: str,
    checksum: str,
    role: SnapshotRole = SnapshotRole.DISCOVERED,
    user=None,
    completion: Completion | None = None,
) -> Snapshot:
    """Store `spec` as the next version of the named fabric (created on first use). An upload's
    `completion` (what was added to the files, and the warnings) is kept in the summary."""
    spec.validate()
    fabric = fabric_get_or_create_locked(fabric_name)
    if user is not None and fabric_hidden_from(user, fabric.pk):
        raise ApplicationError(translation.gettext("The name %(name)s is taken by a fabric of another team; choose another name.") % {"name": repr(fabric_name)})
    last = fabric.snapshots.order_by("-version").values_list("version", flat=True).first() or 0
    summary = fabric_summary(spec)
    summary["design"] = snapshot_design(spec)
    if completion is not None:
        summary["completion"] = completion.summary
        summary["warnings"] += [plain_words(warning) for warning in completion.warnings]
    snapshot = Snapshot.objects.create(
        fabric=fabric,
        version=last + 1,
        role=role,
        source_name=source_name[:255],
        source_format=source_format[:64],
        checksum=checksum,
        attrs=spec.attrs.to_plain(),
        summary=summary,
        node_count=len(spec.nodes),
        card_count=summary["nodes_by_kind"].get("card", 0),
        switch_count=summary["nodes_by_kind"].get("switch", 0),
        link_count=len(spec.links),
        created_by=user,
    )
    insert_rows(Node, NODE_COLUMNS, (
        (snapshot.pk, node.id, node.kind, node.name, node.tier, node.radix, node.host, node.attrs.to_plain())
        for node in spec.nodes
    ))
    pk_by_key = dict(snapshot.nodes.values_list("key", "pk"))
    insert_rows(Link, LINK_COLUMNS, (
        (
            snapshot.pk, pk_by_key[link.a], link.a_port, pk_by_key[link.b], link.b_port,
            link.bandwidth_gbps, link.latency_ns, link.state, link.domain, link.attrs.to_plain(),
        )
        for link in spec.links
    ))
    transaction.on_commit(lambda: fabric_broadcast_snapshot(snapshot))
    transaction.on_commit(lambda: snapshot_layout_enqueue(snapshot.pk))
    return snapshot


def snapshot_layout_enqueue(snapshot_id: int) -> None:
    """Have the worker compute the new snapshot's map layout, so that no viewer waits for it (at
    65,536 cards it takes seconds). Best effort: a layout not made yet is made on first view."""
    from .tasks import snapshot_layout_task

    try:
        snapshot_layout_task.apply_async(args=[snapshot_id])
    except Exception:  # noqa: BLE001 - the snapshot is stored; its first viewer computes the layout
        log.warning("could not queue the layout of snapshot %s", snapshot_id, exc_info=True)


def snapshot_design(spec: FabricSpec) -> dict:
    """The design rules the what-if infers from `spec` (each with where its value came from),
    kept with the snapshot so that its page shows them before a run; or why there are none: in
    English, and as words (`words`: the whole error, and the lines the page lists) to be shown in
    the reader's language."""
    try:
        return design_rules(spec).to_dict()
    except WhatIfError as error:
        words = {"error": plain_words(error.words), "problems": plain_words(list(error.problem_words) or [error.words])}
        return {"error": str(error), "problems": list(error.problems), "words": words}


def source_files_from_uploads(uploads) -> list[SourceFile]:
    """Read Django UploadedFiles, refusing any over the size limit before reading a byte of it.
    Archives stay packed: `snapshot_import` unpacks them in its reading child."""
    limit = settings.TWIN_MAX_UPLOAD_BYTES
    too_large = [translation.gettext("%(name)s (%(size)s bytes)") % {"name": upload.name, "size": f"{upload.size:,}"} for upload in uploads if upload.size > limit]
    if too_large:
        raise ApplicationError(
            translation.gettext("Larger than the %(limit)s-byte limit (TWIN_MAX_UPLOAD_BYTES): %(files)s.") % {"limit": f"{limit:,}", "files": translation.gettext(", ").join(too_large)},
            extra={"limit_bytes": limit},
        )
    return [SourceFile(name=upload.name, data=upload.read()) for upload in uploads]


def archive_limits() -> ArchiveLimits:
    """What one uploaded archive may hold, from the settings (TWIN_ARCHIVE_*)."""
    return ArchiveLimits(
        max_members=settings.TWIN_ARCHIVE_MAX_MEMBERS,
        max_member_bytes=settings.TWIN_MAX_UPLOAD_BYTES,
        max_total_bytes=settings.TWIN_ARCHIVE_MAX_UNPACKED_BYTES,
        max_ratio=settings.TWIN_ARCHIVE_MAX_RATIO,
    )


def snapshot_import(
    *,
    fabric_name: str,
    files: Sequence[SourceFile],
    fmt: str | None = None,
    options: ParseOptions = ParseOptions(),
    role: SnapshotRole = SnapshotRole.DISCOVERED,
    user=None,
) -> Snapshot:
    """Parse uploaded files (archives of per-node files unpacked, each member read as a file named
    `<archive>/<member path>`; several files describing one fabric are merged), complete what they
    leave out (cards from HCAs, scale-up, SHARP: twin.ingest.completion) and store them as the
    fabric's next snapshot.

    Every file is unpacked and read before anything is written, in a child process with hard
    limits on memory and time (twin.fabrics.reading); if any cannot be read, an archive passes one
    of its limits (TWIN_ARCHIVE_*) or reading them passes a limit, UploadRejected lists the
    problems of each file and nothing is stored.
    """
    if not files:
        raise ApplicationError(translation.gettext("No file was uploaded."))
    outcome = read_files_isolated(
        files, fmt=fmt, options=options, fabric_name=fabric_name, archive_limits=archive_limits(),
        memory_bytes=settings.TWIN_PARSE_MEMORY_BYTES, time_limit_s=settings.TWIN_PARSE_TIME_LIMIT_S,
    )
    if isinstance(outcome, FilesRefused):
        files = [in_language(problems, translation) for problems in outcome.files]
        raise UploadRejected(translation.gettext("; ").join(problems["detail"] for problems in files), extra={"files": files})
    completion = outcome.completion
    return snapshot_create(
        fabric_name=fabric_name or completion.spec.name,
        spec=completion.spec,
        completion=completion,
        source_name=", ".join(outcome.source_names),
        source_format=outcome.format_name,
        checksum=outcome.checksum,
        role=role,
        user=user,
    )


def snapshot_scale_up_correct(*, snapshot: Snapshot, nvlink_gbps: float | None, user=None) -> Snapshot:
    """The fabric's next snapshot: `snapshot` with the scale-up the twin completed at upload
    set to `nvlink_gbps` per GPU, or left out with None (the user knows the hosts better)."""
    try:
        spec = with_scale_up(snapshot_spec_get(snapshot_id=snapshot.pk), nvlink_gbps)
    except IngestError as error:
        raise ApplicationError(core_error_text(error)) from error
    summary = dict(snapshot.summary.get("completion") or {})
    before = summary.get("scale_up") or {}
    corrected = f"{nvlink_gbps:,.0f} Gb/s per GPU" if nvlink_gbps is not None else "left out"
    summary["scale_up"] = {
        **before,
        "hosts": before.get("hosts", 0) if nvlink_gbps is not None else 0,
        "generations": {f"corrected by {getattr(user, 'username', None) or 'an operator'}: {corrected}": before.get("hosts", 0)} if nvlink_gbps is not None else {},
        "corrected": corrected,
    }
    return snapshot_create(
        fabric_name=snapshot.fabric.name,
        spec=spec,
        source_name=f"{snapshot.source_name[:200]} (scale-up {corrected})",
        source_format=snapshot.source_format,
        checksum=snapshot.checksum,
        role=snapshot.role,
        user=user,
        completion=Completion(spec, summary, tuple(usability_warnings(spec))),
    )


def snapshot_layout_get_or_create(*, snapshot_id: int) -> SnapshotLayout | None:
    """The snapshot's stored map layout, computed and stored first if it has none yet (the worker
    computing it and a first viewer may both do it; the second write is a no-op). None when there
    is no such snapshot."""
    stored = SnapshotLayout.objects.filter(snapshot_id=snapshot_id).first()
    if stored is not None or not Snapshot.objects.filter(pk=snapshot_id).exists():
        return stored
    layout = {**fabric_layout(snapshot_spec_get(snapshot_id=snapshot_id)), "snapshot": snapshot_id}
    text = json.dumps(layout, separators=(",", ":")).encode()
    stored, _ = SnapshotLayout.objects.get_or_create(
        snapshot_id=snapshot_id, defaults={"gzip_json": gzip.compress(text, compresslevel=LAYOUT_GZIP_LEVEL), "etag": hashlib.sha256(text).hexdigest()},
    )
    return stored
