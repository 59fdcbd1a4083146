"""Writes to the journal: measured runs in (from nccl-tests output or by hand), each with the
twin's prediction at the same sizes; calibration from chosen entries."""
import math
from collections.abc import Sequence

from django.db import transaction
from django.utils import translation
from django.utils.translation import gettext as _, ngettext

from twin.common.errors import ApplicationError, core_error_text
from twin.fabrics.models import Fabric, Snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.fabrics.services import SourceFile, UploadRejected, decode_text
from twin.ingest import IngestError
from twin.ingest.errors import in_language
from twin.simcore.algorithms import ALGORITHMS, COLLECTIVES
from twin.simcore.calibrate import DEFAULT_FIT
from twin.simcore.errors import TwinCoreError
from twin.simcore.simulate import Simulator
from twin.simcore.transport import PROTOCOLS, nccl_release
from twin.simulations.services import as_nccl_release, fabric_calibrate
from twin.traces import gpu_card_id, measurement_to_dict, parse_nccl_tests

from .models import Experiment

__all__ = ("experiment_import", "experiment_import_calibrated", "experiment_create", "experiments_calibrate", "JOURNAL_FIELDS")

# What a person records about a run beyond the measurement itself (the article's list).
JOURNAL_FIELDS = ("title", "comm_library", "library_version", "algorithm", "protocol", "chunk_size_bytes", "model_name", "tp", "pp", "dp", "ep", "notes")


def measured_points(measurement) -> list[dict]:
    """One point per message size: the out-of-place figures, else the in-place ones."""
    points = []
    for row in measurement.rows:
        timing = row.out_of_place or row.in_place
        if row.size_bytes > 0 and timing is not None and math.isfinite(timing.busbw_gbytes_per_s) and timing.busbw_gbytes_per_s > 0:
            points.append({"size_bytes": row.size_bytes, "busbw_GBps": timing.busbw_gbytes_per_s, "algbw_GBps": timing.algbw_gbytes_per_s, "time_us": timing.time_us})
    return points


def ranks_on_snapshot(spec, card_count: int, bindings=()) -> list[str]:
    """The cards a measurement ran on: those its report names (host + bus id) when they are all
    in the snapshot, else the first `card_count` cards in the snapshot's order."""
    cards = [card.id for card in spec.cards()]
    if card_count > len(cards):
        raise ApplicationError(
            _("The measurement ran on %(count)s cards; the snapshot has only %(cards)s. Choose the snapshot of the fabric it ran on.") % {"count": card_count, "cards": len(cards)}
        )
    named = [gpu_card_id(binding.host, binding.bus_id) for binding in bindings if binding.host and binding.bus_id]
    known = set(cards)
    if len(named) == card_count and all(card in known for card in named):
        return named
    return cards[:card_count]


# NCCL_ALGO names -> the twin's algorithms (NVLS and CollNet reduce in the switches).
_NCCL_ALGORITHMS = {"ring": "ring", "tree": "tree", "nvls": "in_switch", "nvlstree": "in_switch", "collnetdirect": "in_switch", "collnetchain": "in_switch"}


def run_settings(algorithm: str, protocol: str) -> tuple[str, str]:
    """The twin's (algorithm, protocol) for what a run recorded: NCCL_ALGO / NCCL_PROTO values or
    the twin's own names; "auto" (the library's own choice) for empty, lists and unknown names.

    >>> run_settings("NVLS", "simple"), run_settings("Ring,Tree", "")
    (('in_switch', 'Simple'), ('auto', 'auto'))
    """
    spelled = algorithm.strip().lower()
    chosen_algorithm = _NCCL_ALGORITHMS.get(spelled) or (spelled if spelled in ALGORITHMS else "auto")
    protocols = {name.lower(): name for name in PROTOCOLS}
    return chosen_algorithm, protocols.get(protocol.strip().lower(), "auto")


def recorded_nccl_version(comm_library: str, library_version: str) -> str | None:
    """The NCCL release a run recorded (its library NCCL, or none named, and a version NCCL's way:
    2.18.5, v2.20.5-1, 2.21.5+cuda12.4), which the twin then follows (``Transport.nccl_version``:
    how NVLS spreads a buffer over its channels changed in 2.20); None for another library or a
    version that does not read as one.

    >>> recorded_nccl_version("NCCL", "2.18.5+cuda12.2"), recorded_nccl_version("RCCL", "2.18.5"), recorded_nccl_version("", "latest")
    ('2.18.5+cuda12.2', None, None)
    """
    version = library_version.strip()
    if comm_library.strip().lower() not in ("", "nccl") or not version:
        return None
    try:
        nccl_release(version)
    except TwinCoreError:
        return None
    return version


def predict(
    snapshot: Snapshot, collective: str, ranks: list[str], points: list[dict], *, algorithm: str = "", protocol: str = "",
    comm_library: str = "", library_version: str = "",
) -> tuple[list[dict], float | None]:
    """The twin's busbw at each measured size with the run's own algorithm, protocol and NCCL
    release when it recorded them (`run_settings`, `recorded_nccl_version`), and the largest relative error."""
    transport = as_nccl_release(snapshot.fabric.transport, recorded_nccl_version(comm_library, library_version))
    simulator = Simulator(snapshot_spec_get(snapshot_id=snapshot.pk), ranks=ranks, transport=transport or None)
    chosen_algorithm, chosen_protocol = run_settings(algorithm, protocol)
    predicted = []
    for point in points:
        result = simulator.run(collective, point["size_bytes"], chosen_algorithm, chosen_protocol, top_links=0)
        predicted.append({
            "size_bytes": point["size_bytes"], "busbw_GBps": result["busbw_GBps"], "time_s": result["time_s"],
            "algorithm": result["algorithm"], "protocol": result["protocol"], "error": result["busbw_GBps"] / point["busbw_GBps"] - 1,
            "nccl_version": simulator.transport.nccl_version,
        })
    return predicted, max((abs(p["error"]) for p in predicted), default=None)


def library_of_report(report_attrs: dict, meta: dict) -> dict:
    """The library release an nccl-tests report names (2025+ writers: ``nccl-library=22005``,
    NCCL's version code major x 10,000 + minor x 100 + patch), for an entry whose form gave none."""
    code = report_attrs.get("nccl_library")
    if meta.get("library_version") or not isinstance(code, int) or code < 20900:  # the code's form since 2.9
        return {}
    return {"comm_library": meta.get("comm_library") or "NCCL", "library_version": f"{code // 10000}.{code // 100 % 100}.{code % 100}"}


def _run_recorded(meta: dict) -> dict:
    """What a run recorded that its prediction follows: `predict`'s keyword arguments."""
    return {name: meta.get(name) or "" for name in ("algorithm", "protocol", "comm_library", "library_version")}


def check_collective(collective: str, source: str) -> None:
    if collective not in COLLECTIVES:
        raise ApplicationError(
            _("%(source)s: the twin cannot predict %(collective)s; it models %(collectives)s.") % {"source": source, "collective": collective, "collectives": _(", ").join(COLLECTIVES)}
        )


@transaction.atomic
def experiment_import(*, fabric: Fabric, snapshot: Snapshot, files: Sequence[SourceFile], meta: dict, user=None) -> list[Experiment]:
    """One journal entry per nccl-tests report in the files; all or nothing."""
    if snapshot.fabric_id != fabric.pk:
        raise ApplicationError(_("Snapshot %(snapshot)s is not a snapshot of %(fabric)s.") % {"snapshot": snapshot.pk, "fabric": fabric.name})
    reports, failures = [], []
    for source in files:
        try:
            reports += [(source.name, measurement) for measurement in parse_nccl_tests(decode_text(source), source_name=source.name)]
        except IngestError as error:
            failures.append(error)
    if failures:
        shown = [in_language(error.as_dict(), translation) for error in failures]
        raise UploadRejected(translation.gettext("; ").join(error["detail"] for error in shown), extra={"files": shown})
    if not reports:
        raise ApplicationError(_("The files hold no nccl-tests report."))
    spec = snapshot_spec_get(snapshot_id=snapshot.pk)
    created = []
    for source_name, measurement in reports:
        check_collective(measurement.collective, source_name)
        points = measured_points(measurement)
        if not points:
            raise ApplicationError(_("%(source)s: the %(collective)s report has no usable rows (all sizes 0 or failed).") % {"source": source_name, "collective": measurement.collective})
        card_count = len(measurement.ranks) or int(meta.get("card_count") or 0)
        if not card_count:
            raise ApplicationError(_("%(source)s: the report does not say how many cards it ran on; give the card count.") % {"source": source_name})
        ranks = ranks_on_snapshot(spec, card_count, measurement.ranks)
        entry_meta = {**meta, **library_of_report(measurement.attrs, meta)}
        try:
            predicted, max_error = predict(snapshot, measurement.collective, ranks, points, **_run_recorded(entry_meta))
        except TwinCoreError as error:
            raise ApplicationError(_("%(where)s: %(problem)s") % {"where": source_name, "problem": core_error_text(error)}) from error
        entry = Experiment(
            fabric=fabric, snapshot=snapshot, collective=measurement.collective, card_count=card_count,
            source_name=source_name[:255], measurement=measurement_to_dict(measurement), points=points, predicted=predicted,
            peak_busbw_GBps=max(p["busbw_GBps"] for p in points), max_abs_error=max_error, created_by=user,
            **{name: entry_meta.get(name) or Experiment._meta.get_field(name).get_default() for name in JOURNAL_FIELDS},
        )
        entry.title = entry.title or f"{measurement.collective} on {card_count} cards ({source_name})"
        entry.full_clean()
        entry.save()
        created.append(entry)
    return created


@transaction.atomic
def experiment_create(*, fabric: Fabric, snapshot: Snapshot, collective: str, card_count: int, points: list[tuple[float, float]], meta: dict, user=None) -> Experiment:
    """A journal entry typed in by hand: (size in bytes, measured busbw in GB/s) pairs."""
    check_collective(collective, "entry")
    if not points:
        raise ApplicationError(_("Give at least one measured point (size and busbw)."))
    plain = [{"size_bytes": int(size), "busbw_GBps": float(busbw)} for size, busbw in sorted(points)]
    ranks = ranks_on_snapshot(snapshot_spec_get(snapshot_id=snapshot.pk), card_count)
    try:
        predicted, max_error = predict(snapshot, collective, ranks, plain, **_run_recorded(meta))
    except TwinCoreError as error:
        raise ApplicationError(core_error_text(error)) from error
    entry = Experiment(
        fabric=fabric, snapshot=snapshot, collective=collective, card_count=card_count, points=plain, predicted=predicted,
        peak_busbw_GBps=max(p["busbw_GBps"] for p in plain), max_abs_error=max_error, created_by=user,
        **{name: meta.get(name) or Experiment._meta.get_field(name).get_default() for name in JOURNAL_FIELDS},
    )
    entry.title = entry.title or ngettext("%(collective)s on %(count)s card (by hand)", "%(collective)s on %(count)s cards (by hand)", card_count) % {
        "collective": collective, "count": f"{card_count:,}"
    }  # the creating user's language: the title is theirs to edit
    entry.full_clean()
    entry.save()
    return entry


def experiments_calibrate(*, experiments: Sequence[Experiment], fit: Sequence[str] = DEFAULT_FIT, held_out: Sequence[float] = ()) -> dict:
    """Fit the `fit` parameters of the fabric to the chosen entries (one fabric, one collective,
    one card count), run with the algorithm and protocol they recorded (`run_settings`), and
    store them; with `held_out` sizes only validate (`fabric_calibrate`)."""
    if not experiments:
        raise ApplicationError(_("Choose at least one journal entry to calibrate against."))
    kinds = {(e.fabric_id, e.collective, e.card_count) for e in experiments}
    if len(kinds) > 1:
        raise ApplicationError(_("Calibrate against entries of one fabric, one collective and one card count at a time."))
    settings = {run_settings(e.algorithm, e.protocol) for e in experiments}
    if len(settings) > 1:
        raise ApplicationError(_("Calibrate against entries run with one algorithm and protocol at a time."))
    ((algorithm, protocol),) = settings
    releases = {recorded_nccl_version(e.comm_library, e.library_version) for e in experiments}
    if len(releases) > 1:
        raise ApplicationError(_("Calibrate against entries run with one NCCL release at a time."))
    (nccl_version,) = releases
    first = experiments[0]
    snapshot = first.snapshot or first.fabric.latest_snapshot()
    if snapshot is None:
        raise ApplicationError(_("%(fabric)s has no snapshot to calibrate.") % {"fabric": first.fabric.name})
    points = [(p["size_bytes"], p["busbw_GBps"]) for e in experiments for p in e.points]
    ranks = ranks_on_snapshot(snapshot_spec_get(snapshot_id=snapshot.pk), first.card_count)
    try:
        return fabric_calibrate(
            fabric=first.fabric, snapshot=snapshot, points=points, collective=first.collective, ranks=ranks,
            algorithm=algorithm, protocol=protocol, fit=fit, held_out=held_out, nccl_version=nccl_version,
            source=", ".join(e.title for e in experiments)[:200],
        )
    except TwinCoreError as error:
        raise ApplicationError(_("Calibration failed: %(reason)s") % {"reason": core_error_text(error)}) from error


@transaction.atomic
def experiment_import_calibrated(
    *, fabric: Fabric, snapshot: Snapshot, files: Sequence[SourceFile], meta: dict, fit: Sequence[str] = DEFAULT_FIT,
    held_out: Sequence[float] = (), user=None,
) -> tuple[list[Experiment], dict]:
    """`experiment_import`, then `experiments_calibrate` on the new entries, in one transaction:
    when the fit fails, no entry is kept either."""
    entries = experiment_import(fabric=fabric, snapshot=snapshot, files=files, meta=meta, user=user)
    return entries, experiments_calibrate(experiments=entries, fit=fit, held_out=held_out)
