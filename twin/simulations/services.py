"""Simulations of a stored fabric: thin calls into the core with the fabric's calibration."""
from collections.abc import Sequence

from django.utils import timezone, translation

from twin.common.errors import ApplicationError
from twin.fabrics.models import Fabric, Snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.algorithms import ALGORITHMS, COLLECTIVES
from twin.simcore.calibrate import DEFAULT_FIT, calibrate
from twin.simcore.compile import ECMP_MODES
from twin.operations.diagnosis import MeasurementPoint, diagnose
from twin.operations.placement import STRATEGIES, Job, Placement, PlacementError, compare_placements
from twin.simcore.diff import diff_fabrics
from twin.simcore.simulate import simulate
from twin.simcore.transport import PROTOCOLS
from twin.simcore.translation import LATER, words_from_plain

__all__ = (
    "COLLECTIVES", "ALGORITHMS", "ECMP_MODES", "PROTOCOLS", "STRATEGIES", "SEARCHED_STRATEGIES", "collective_simulate", "fabric_calibrate",
    "job_from_params", "job_fits_check", "placement_check", "placement_compare", "placement_from_result", "fabric_diagnose",
)

# The strategies that place a job themselves; "user" is an uploaded placement, evaluated alongside.
SEARCHED_STRATEGIES = tuple(strategy for strategy in STRATEGIES if strategy != "user")
JOB_FIELDS = ("tp", "pp", "dp", "ep", "model_params", "bytes_per_param", "hidden_size", "seq_len", "layers", "micro_batches", "micro_batch_size", "group_bytes")


def collective_simulate(
    *,
    snapshot: Snapshot,
    collective: str,
    size_bytes: float,
    algorithm: str = "auto",
    protocol: str = "auto",
    ecmp: str = "hash",
    channels: int = 1,
    in_switch_reduction: bool | None = None,
    top_links: int = 10,
    transport: dict | None = None,
) -> dict:
    """Predicted time, algbw/busbw, bottleneck and link loads of one collective on every card
    of the snapshot (raises TwinCoreError when it cannot run as asked). The fabric's calibrated
    transport, when it has one, is used, with this run's `transport` overrides on top."""
    spec = snapshot_spec_get(snapshot_id=snapshot.pk)
    return simulate(
        spec,
        collective=collective,
        size_bytes=size_bytes,
        algorithm=algorithm,
        protocol=protocol,
        top_links=top_links,
        transport=merged_overrides(snapshot.fabric.transport, transport or {}) or None,
        ecmp=ecmp,
        channels=channels,
        in_switch_reduction=in_switch_reduction,
    )


def as_nccl_release(overrides: dict, nccl_version: str | None) -> dict:
    """Transport `overrides` run as NCCL `nccl_version` when one is given (a measurement's)."""
    return merged_overrides(overrides, {"nccl_version": nccl_version}) if nccl_version else overrides


def merged_overrides(base: dict, extra: dict) -> dict:
    """Transport overrides of `extra` on top of `base`, merging sections at every depth (a
    domain's protocol sections too)."""
    merged = dict(base)
    for key, value in extra.items():
        merged[key] = merged_overrides(merged[key], value) if isinstance(value, dict) and isinstance(merged.get(key), dict) else value
    return merged


def fabric_calibrate(
    *, fabric: Fabric, snapshot: Snapshot, points: list[tuple[float, float]], source: str, collective: str = "allreduce",
    ranks: list[str] | None = None, algorithm: str = "auto", protocol: str = "auto", fit: Sequence[str] = DEFAULT_FIT,
    held_out: Sequence[float] = (), nccl_version: str | None = None,
) -> dict:
    """Fit the `fit` transport parameters of the fabric to measured busbw points (taken on `ranks`,
    default every card, with `algorithm` and `protocol`, default the twin's choice, and as NCCL
    `nccl_version` when given) and store them: later runs use them (the release is the
    measurement's, not stored). With `held_out` sizes it only validates: those sizes are left
    out of the fit and reported apart, and nothing is stored."""
    fitted = calibrate(
        snapshot_spec_get(snapshot_id=snapshot.pk), points, collective=collective, algorithm=algorithm, protocol=protocol,
        ranks=ranks, fit=fit, held_out=held_out, transport=as_nccl_release(fabric.transport, nccl_version),
    )
    if held_out:
        return fitted
    # Only the fitted parameters change: the fabric's other settings (an NVLink efficiency, an
    # earlier fit of other parameters) stay what its runs, and this fit, used.
    fabric.transport = merged_overrides(fabric.transport, fitted["transport"])
    fabric.calibration = {
        "source": source,
        "snapshot": snapshot.pk,
        "collective": collective,
        "fitted_at": timezone.now().isoformat(),
        **{key: fitted[key] for key in ("parameters", "standard_errors", "max_relative_error", "rms_relative_error", "points")},
    }
    fabric.save(update_fields=["transport", "calibration"])
    return fitted


def job_from_params(params: dict) -> Job:
    """A Job from run parameters or Job.to_dict() output (`world` is derived, not given)."""
    return Job(**{key: value for key, value in params.items() if key in JOB_FIELDS})


def job_fits_check(*, snapshot: Snapshot, job: dict) -> None:
    """Refuse, before any worker starts, a job on more ranks (TP x PP x DP) than the snapshot has cards."""
    world = job["tp"] * job.get("pp", 1) * job["dp"]
    if world > snapshot.card_count:
        raise ApplicationError(
            translation.gettext("TP x PP x DP = %(world)s ranks; %(fabric)s v%(version)s has %(cards)s cards.")
            % {"world": f"{world:,}", "fabric": snapshot.fabric.name, "version": snapshot.version, "cards": f"{snapshot.card_count:,}"}
        )


def placement_check(*, snapshot: Snapshot, params: dict) -> None:
    job_fits_check(snapshot=snapshot, job=params["job"])


def placement_compare(*, snapshot: Snapshot, job: Job, strategies=SEARCHED_STRATEGIES, busy_cards=(), mapping: dict | None = None, seed: int = 0, ecmp: str = "hash") -> dict:
    """Each strategy's placement of `job` on the snapshot's free cards, evaluated by the core."""
    spec = snapshot_spec_get(snapshot_id=snapshot.pk)
    busy = set(busy_cards)
    unknown = sorted(busy - {card.id for card in spec.cards()})
    if unknown:
        lacking = LATER.gettext("busy cards that %(fabric)s v%(version)s does not have") % {"fabric": snapshot.fabric.name, "version": str(snapshot.version)}
        raise PlacementError(lacking, [repr(card) for card in unknown[:20]])
    free = [card.id for card in spec.cards() if card.id not in busy] if busy else None
    return compare_placements(spec, job, free=free, strategies=strategies, seed=seed, mapping=mapping, ecmp=ecmp)


def placement_from_result(result: dict, ranks: list[dict]) -> Placement:
    """Rebuild a stored placement (a run's result for one strategy plus its rank records)."""
    return Placement(
        strategy=result["strategy"], job=job_from_params(result["job"]), cards=tuple(r["card"] for r in ranks),
        hosts=tuple(r["host"] for r in ranks), warnings=tuple(words_from_plain(result.get("warning_words", result.get("warnings", ())))),
    )


def fabric_diagnose(*, snapshot: Snapshot, measurement_entries=(), telemetry=()) -> dict:
    """The troubleshooting table, bottom-up, on a discovered snapshot: against the fabric's newest
    cabling plan (if any), the chosen journal entries' measurements next to the twin's
    predictions, and telemetry samples."""
    spec = snapshot_spec_get(snapshot_id=snapshot.pk)
    plan = snapshot.fabric.snapshots.filter(role="plan").order_by("-version").first()
    report = diff_fabrics(snapshot_spec_get(snapshot_id=plan.pk), spec) if plan else None
    measurements = [
        MeasurementPoint(size_bytes=point["size_bytes"], measured_busbw_GBps=point["busbw_GBps"], predicted_busbw_GBps=twin["busbw_GBps"],
                         measured_time_s=point["time_us"] * 1e-6 if point.get("time_us") else None, predicted_time_s=twin.get("time_s"))
        for entry in measurement_entries
        for point, twin in zip(entry.points, entry.predicted, strict=False)
    ]
    result = diagnose(spec, diff=report, measurements=measurements, telemetry=telemetry, translations=translation)
    return {**result, "plan": plan.version if plan else None, "measured_points": len(measurements)}
