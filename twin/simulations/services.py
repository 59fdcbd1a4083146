"""Simulations of a stored fabric: thin calls into the core with the fabric's calibration."""
from django.utils import timezone

from twin.fabrics.models import Fabric, Snapshot
from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.algorithms import ALGORITHMS, COLLECTIVES
from twin.simcore.calibrate import calibrate
from twin.simcore.compile import ECMP_MODES
from twin.simcore.simulate import simulate

__all__ = ("COLLECTIVES", "ALGORITHMS", "ECMP_MODES", "collective_simulate", "fabric_calibrate")


def collective_simulate(
    *,
    snapshot: Snapshot,
    collective: str,
    size_bytes: float,
    algorithm: str = "auto",
    ecmp: str = "hash",
    channels: int = 1,
    in_switch_reduction: bool | None = None,
    top_links: int = 10,
) -> dict:
    """Predicted time, algbw/busbw, bottleneck and link loads of one collective on every card
    of the snapshot (raises TwinCoreError when it cannot run as asked). The fabric's calibrated
    transport, when it has one, is used."""
    spec = snapshot_spec_get(snapshot_id=snapshot.pk)
    return simulate(
        spec,
        collective=collective,
        size_bytes=size_bytes,
        algorithm=algorithm,
        top_links=top_links,
        transport=snapshot.fabric.transport or None,
        ecmp=ecmp,
        channels=channels,
        in_switch_reduction=in_switch_reduction,
    )


def fabric_calibrate(
    *, fabric: Fabric, snapshot: Snapshot, points: list[tuple[float, float]], source: str, collective: str = "allreduce", ranks: list[str] | None = None
) -> dict:
    """Fit the fabric's transport to measured busbw points (taken on `ranks`, default every
    card) and store it: later runs use it."""
    fitted = calibrate(snapshot_spec_get(snapshot_id=snapshot.pk), points, collective=collective, ranks=ranks)
    fabric.transport = fitted["transport"]
    fabric.calibration = {
        "source": source,
        "snapshot": snapshot.pk,
        "collective": collective,
        "fitted_at": timezone.now().isoformat(),
        "parameters": fitted["parameters"],
        "max_relative_error": fitted["max_relative_error"],
        "rms_relative_error": fitted["rms_relative_error"],
        "points": fitted["points"],
    }
    fabric.save(update_fields=["transport", "calibration"])
    return fitted
