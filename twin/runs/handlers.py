"""What each kind of run computes: plain functions from a run to a JSON-ready output."""
from collections.abc import Callable
from dataclasses import dataclass

from twin.fabrics.selectors import snapshot_spec_get
from twin.simcore.hops import hop_statistics
from twin.simcore.translation import LATER, Phrase
from twin.simulations.replays import replay_check, replay_compute
from twin.simulations.services import collective_simulate, job_from_params, placement_check, placement_compare

from .models import Run, RunKind

__all__ = ("RunOutput", "RUN_HANDLERS", "SUBMIT_CHECKS")

ProgressCallback = Callable[[float, Phrase], None]

# Per-link arrays are kept out of the state pushed to every viewer; the map fetches them.
PER_LINK_KEYS = ("link_bytes", "link_utilization")


@dataclass(frozen=True)
class RunOutput:
    """`result` is pushed to viewers and shown; `detail` (optional, bulky) is served on request."""

    result: dict
    detail: dict | None = None


def hop_stats(run: Run, on_progress: ProgressCallback) -> RunOutput:
    on_progress(0.0, LATER.gettext("Loading snapshot"))
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    return RunOutput(hop_statistics(spec, on_progress=on_progress))


def collective(run: Run, on_progress: ProgressCallback) -> RunOutput:
    on_progress(0.0, LATER.gettext("Compiling the fabric and simulating"))
    result = collective_simulate(snapshot=run.snapshot, **run.params)
    detail = {key: result.pop(key) for key in PER_LINK_KEYS if key in result}
    return RunOutput(result, detail)


def placement(run: Run, on_progress: ProgressCallback) -> RunOutput:
    on_progress(0.0, LATER.gettext("Placing and simulating each strategy"))
    params = run.params
    mapping = {int(rank): card for rank, card in params.get("mapping", {}).items()} or None
    compared = placement_compare(
        snapshot=run.snapshot, job=job_from_params(params["job"]), strategies=params["strategies"] + (["user"] if mapping else []),
        busy_cards=params.get("busy_cards", []), mapping=mapping, seed=params.get("seed", 0), ecmp=params.get("ecmp", "hash"),
    )
    ranks = {strategy: result.pop("ranks") for strategy, result in compared["results"].items()}
    return RunOutput(compared, {"ranks": ranks})


def replay(run: Run, on_progress: ProgressCallback) -> RunOutput:
    on_progress(0.0, LATER.gettext("Binding the trace to the fabric and replaying it"))
    summary, stored = replay_compute(run)
    return RunOutput(summary, stored)


RUN_HANDLERS: dict[str, Callable[[Run, ProgressCallback], RunOutput]] = {
    RunKind.HOP_STATS: hop_stats,
    RunKind.COLLECTIVE: collective,
    RunKind.PLACEMENT: placement,
    RunKind.REPLAY: replay,
}

# Checks that refuse, when a run is submitted, what its worker could not do (ApplicationError);
# fanned-out kinds check their parameters by planning their cells instead.
SUBMIT_CHECKS: dict[str, Callable[..., object]] = {
    RunKind.PLACEMENT: placement_check,
    RunKind.REPLAY: replay_check,
}
