"""What each kind of run computes: plain functions from a run to a JSON-ready result."""
from collections.abc import Callable

from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.hops import hop_statistics

from .models import Run, RunKind

__all__ = ("RUN_HANDLERS",)

ProgressCallback = Callable[[float, str], None]


def hop_stats(run: Run, on_progress: ProgressCallback) -> dict:
    on_progress(0.0, "Loading snapshot")
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    return hop_statistics(spec, on_progress=on_progress)


RUN_HANDLERS: dict[str, Callable[[Run, ProgressCallback], dict]] = {
    RunKind.HOP_STATS: hop_stats,
}
