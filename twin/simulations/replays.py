"""Replays of stored fabrics: traces in, frames out to every viewer (and the push of live telemetry frames, telemetry.py)."""
import functools
import logging
import time
from datetime import timedelta

from django.db import transaction
from django.db.models import F, Q
from django.utils.timezone import now as utc_now
from django.utils.translation import gettext as _

from twin.common.errors import ApplicationError, core_error_text
from twin.common.websocket import group_publish
from twin.fabrics.models import Fabric, Snapshot
from twin.fabrics.realtime import fabric_group
from twin.fabrics.selectors import snapshot_spec_get
from twin.fabrics.services import SourceFile, decode_text
from twin.ingest import IngestError
from twin.replay import ReplayOptions, Timeline, bind_trace, replay_summary, replay_trace, sample_timeline
from twin.replay.leafmatrix import leaf_matrix_frames
from twin.simcore.translation import LATER
from twin.traces import (
    TraceError,
    detect_nccl_log,
    detect_nccl_tests,
    detect_trace_csv,
    detect_trace_jsonl,
    measurement_trace,
    parse_nccl_log,
    parse_nccl_tests,
    parse_trace_csv,
    parse_trace_jsonl,
    training_step,
    training_step_problems,
)

from .models import ReplayPlayback, TraceFile
from .services import job_fits_check

__all__ = (
    "trace_file_create", "replay_check", "trace_of", "replay_compute", "replay_group", "playback_state", "playback_command",
    "replay_frame", "player_tick", "players_resume", "send_fabric_telemetry", "MAX_FRAMES_PER_SECOND",
)

log = logging.getLogger(__name__)

MAX_FRAMES_PER_SECOND = 10
PLAYER_SLICE_S = 2.0  # a player task plays this long, then queues its successor, so it never hogs a worker
# A playing player's lease runs this long past the moment it means to send its next frame; a
# player silent past its lease is taken as dead (players_resume).
PLAYER_GRACE_S = 5.0

TRACE_READERS = (  # detection order: the most specific formats first
    ("nccl-tests", detect_nccl_tests, lambda text, name: measurement_trace(parse_nccl_tests(text, source_name=name)[0])),
    ("nccl-log", detect_nccl_log, lambda text, name: parse_nccl_log(text, source_name=name)),
    ("trace-jsonl", detect_trace_jsonl, lambda text, name: parse_trace_jsonl(text, source_name=name)),
    ("trace-csv", detect_trace_csv, lambda text, name: parse_trace_csv(text, source_name=name)),
)


def read_trace(text: str, name: str):
    for format_name, detect, parse in TRACE_READERS:
        if detect(text):
            return format_name, parse(text, name)
    raise IngestError(
        LATER.gettext("cannot tell what kind of trace this is"),
        source=name,
        expected=LATER.gettext("our trace format (JSON lines or CSV), an NCCL debug log (NCCL_DEBUG=INFO) or nccl-tests output"),
    )


def trace_file_create(*, fabric: Fabric, source: SourceFile, user=None) -> TraceFile:
    """Check that a trace reads (IngestError naming file and line otherwise) and that its ranks
    are cards of the fabric's latest snapshot (ApplicationError listing the unknown ones), and
    keep it; a rejected trace stores nothing."""
    text = decode_text(source)
    format_name, trace = read_trace(text, source.name)
    snapshot = fabric.latest_snapshot()
    if snapshot is not None:
        try:
            bind_trace(snapshot_spec_get(snapshot_id=snapshot.pk), trace)
        except TraceError as error:
            does_not_fit = _("%(file)s: the trace does not fit %(fabric)s v%(version)s: %(reason)s") % {
                "file": source.name, "fabric": fabric.name, "version": snapshot.version, "reason": core_error_text(error),
            }
            raise ApplicationError(does_not_fit, extra={"problems": list(error.problems)}) from error
    return TraceFile.objects.create(fabric=fabric, name=source.name[:255], format=format_name, text=text, ranks=len(trace.ranks), events=len(trace.events), created_by=user)


def replay_check(*, snapshot: Snapshot, params: dict) -> TraceFile | None:
    """Refuse, when the run is submitted, a replay its worker could not do: a trace of another
    fabric, a training step on more ranks than the snapshot has cards, or training parameters
    that make no step (every reason, e.g. layers that do not split into the pipeline stages).
    Returns the trace file."""
    if params.get("trace_file"):
        trace_file = TraceFile.objects.filter(pk=params["trace_file"], fabric_id=snapshot.fabric_id).first()
        if trace_file is None:
            raise ApplicationError(_("Trace %(trace)s is not a trace of %(fabric)s.") % {"trace": params["trace_file"], "fabric": snapshot.fabric.name})
        return trace_file
    job_fits_check(snapshot=snapshot, job=params["training"])
    problems = training_step_problems(**params["training"])
    if problems:
        refused = TraceError(LATER.gettext("Cannot replay this training step"), problems)
        raise ApplicationError(core_error_text(refused), extra={"problems": list(refused.problems)})
    return None


def trace_of(snapshot: Snapshot, params: dict, spec):
    """The trace a replay run asks for: an uploaded file, or a generated training step on the
    snapshot's first cards."""
    trace_file = replay_check(snapshot=snapshot, params=params)
    if trace_file is not None:
        return read_trace(trace_file.text, trace_file.name)[1]
    job = params["training"]
    world = job["tp"] * job.get("pp", 1) * job["dp"]
    return training_step(placement=[card.id for card in spec.cards()][:world], **job)


def replay_compute(run) -> tuple[dict, dict]:
    """Replay a run's trace on its snapshot; returns the summary and the stored timeline."""
    spec = snapshot_spec_get(snapshot_id=run.snapshot_id)
    trace = trace_of(run.snapshot, run.params, spec)
    options = ReplayOptions(ecmp=run.params.get("ecmp", "hash"), transport=run.snapshot.fabric.transport or None, ordering=run.params.get("ordering", "communicator"))
    replay = replay_trace(bind_trace(spec, trace), options=options)
    max_frames = run.params.get("max_frames", 600)
    timeline = sample_timeline(replay, max_frames=max_frames)
    ReplayPlayback.objects.update_or_create(run=run, defaults={"frames": len(timeline), "index": 0, "playing": False})
    stored = {"timeline": timeline.to_plain(), "leaf_matrix": leaf_matrix_frames(replay, max_frames=max_frames), "options": options.to_plain()}
    return replay_summary(replay), stored


def replay_group(run_id: int) -> str:
    return f"twin.replay.{run_id}"


def playback_state(playback: ReplayPlayback) -> dict:
    return {"playing": playback.playing, "speed": playback.speed, "loop": playback.loop, "index": playback.index, "frames": playback.frames}


def timeline_of(run_id: int) -> "StoredReplay":
    """A finished replay's stored frames, kept in memory: a finished replay never changes, and
    every command and player slice needs them. The key includes when the run finished, so a
    reused id (a test database rolled back) never returns another run's frames."""
    from twin.runs.models import Run

    finished_at = Run.objects.values_list("finished_at", flat=True).get(pk=run_id)
    return timeline_cached(run_id, finished_at.isoformat() if finished_at else "")


class StoredReplay:
    """The stored timeline of a replay and its leaf-to-leaf matrices (when the fabric has leaves)."""

    def __init__(self, detail: dict, snapshot_id: int) -> None:
        self.snapshot_id = snapshot_id
        self.timeline = Timeline.from_plain(detail["timeline"])
        self.leaf_matrix = detail.get("leaf_matrix")
        self.t_s, self.t_end_s = self.timeline.t_s, self.timeline.t_end_s

    def __len__(self) -> int:
        return len(self.timeline)

    def frame(self, index: int) -> dict:
        frame = dict(self.timeline.frame(index))
        frame["snapshot"] = self.snapshot_id  # the snapshot whose links it colours
        if self.leaf_matrix is not None:
            frame["leaf_matrix"] = {"groups": self.leaf_matrix["groups"], "scale_bytes": self.leaf_matrix["scale_bytes"], "values": self.leaf_matrix["frames"][index]}
        return frame


@functools.lru_cache(maxsize=4)
def timeline_cached(run_id: int, finished_at: str) -> StoredReplay:
    from twin.runs.models import Run

    detail, snapshot_id = Run.objects.values_list("detail", "snapshot_id").get(pk=run_id)
    return StoredReplay(detail, snapshot_id)


def replay_frame(run_id: int, index: int, seq: int, timeline: "StoredReplay | None" = None) -> dict:
    """Frame `index` of a stored replay, with its seq."""
    frame = (timeline or timeline_of(run_id)).frame(index)
    frame["seq"] = seq
    return frame


def send(run_id: int, message: dict) -> None:
    try:
        group_publish(replay_group(run_id), message)
    except Exception:  # noqa: BLE001 - viewers catch up on the next frame or on reconnect
        log.warning("could not push to replay %s viewers", run_id, exc_info=True)


def broadcast_state(playback: ReplayPlayback) -> None:
    send(playback.run_id, {"type": "replay.state", "state": playback_state(playback)})


def playback_command(*, run_id: int, action: str, index: int | None = None, speed: float | None = None, loop: bool | None = None) -> ReplayPlayback:
    """Play, pause, seek, change speed or loop; every viewer gets the new state."""
    from .tasks import replay_player_task

    with transaction.atomic():
        playback = ReplayPlayback.objects.select_for_update().filter(run_id=run_id).first()
        if playback is None:
            raise ApplicationError(_("Run %(run)s is not a finished replay.") % {"run": run_id})
        if action == "play":
            playback.playing = True
            if playback.index >= playback.frames - 1 and not playback.loop:
                playback.index = 0
        elif action == "pause":
            playback.playing = False
        elif action == "seek":
            if index is None or not 0 <= index < playback.frames:
                raise ApplicationError(_("Seek to a frame between 0 and %(last)s.") % {"last": playback.frames - 1})
            playback.index = index
        elif action == "speed":
            if speed is None or not (speed == 0 or 0.25 <= speed <= 64):
                raise ApplicationError(_("Speed is 0 (as fast as possible) or between 0.25 and 64."))
            playback.speed = speed
        elif action == "loop":
            playback.loop = bool(loop)
        else:
            raise ApplicationError(_("Unknown action %(action)s; expected play, pause, seek, speed or loop.") % {"action": repr(action)})
        playback.generation += 1
        playback.lease_expires_at = utc_now() + timedelta(seconds=PLAYER_GRACE_S) if playback.playing else None
        playback.save()
    broadcast_state(playback)
    if action == "seek" or not playback.playing:
        playback_push_frame(playback)
    if playback.playing:
        transaction.on_commit(lambda: replay_player_task.apply_async(args=[run_id, playback.generation]))
    return playback


def playback_push_frame(playback: ReplayPlayback, timeline: "StoredReplay | None" = None) -> None:
    seq = ReplayPlayback.objects.filter(pk=playback.pk).update(seq=F("seq") + 1) and ReplayPlayback.objects.values_list("seq", flat=True).get(pk=playback.pk)
    send(playback.run_id, {"type": "replay.frame", "seq": seq, "index": playback.index, "frame": replay_frame(playback.run_id, playback.index, seq, timeline)})


def player_tick(*, run_id: int, generation: int) -> None:
    """Play frames for a slice of time at the chosen speed (at most 10 a second), then hand over
    to a successor task; stops when paused, finished or superseded by a newer command."""
    from .tasks import replay_player_task

    timeline = timeline_of(run_id)
    interval_s = float(timeline.t_end_s[0] - timeline.t_s[0]) or 1e-6  # simulated seconds per frame
    started = next_at = time.monotonic()
    while time.monotonic() - started < PLAYER_SLICE_S:
        playback = ReplayPlayback.objects.filter(run_id=run_id, generation=generation, playing=True).first()
        if playback is None:
            return  # paused, or a newer command runs its own player
        playback_push_frame(playback, timeline)
        # Frames due in one tick at this speed: skip ahead rather than exceed 10 frames a second.
        per_tick = 1 if playback.speed == 0 else max(1, round(playback.speed / (interval_s * MAX_FRAMES_PER_SECOND)))
        wait_s = 1 / MAX_FRAMES_PER_SECOND if playback.speed == 0 else max(1 / MAX_FRAMES_PER_SECOND, interval_s * per_tick / playback.speed)
        next_index = playback.index + per_tick
        changes = {"index": next_index}
        if next_index >= playback.frames:
            changes = {"index": 0} if playback.loop else {"index": playback.frames - 1, "playing": False}
        changes["lease_expires_at"] = utc_now() + timedelta(seconds=wait_s + PLAYER_GRACE_S)
        if not ReplayPlayback.objects.filter(run_id=run_id, generation=generation).update(**changes):
            return
        if changes.get("playing") is False:
            broadcast_state(ReplayPlayback.objects.get(run_id=run_id))
            return
        # Keep a fixed clock: the time spent sending a frame is not added to every period.
        next_at += wait_s
        time.sleep(max(0.0, next_at - time.monotonic()))
    replay_player_task.apply_async(args=[run_id, generation])


def players_resume() -> int:
    """Start a new player for every replay still marked playing whose player let its lease run
    out (its worker died, or the broker lost its successor task): it goes on from the frame it
    had reached, and the old player, should it wake, stops (a newer generation). Returns how many."""
    from .tasks import replay_player_task

    now = utc_now()
    resumed = 0
    stalled = ReplayPlayback.objects.filter(Q(lease_expires_at__isnull=True) | Q(lease_expires_at__lt=now), playing=True)
    for run_id, generation in stalled.values_list("run_id", "generation"):
        taken = ReplayPlayback.objects.filter(run_id=run_id, generation=generation, playing=True).update(
            generation=generation + 1, lease_expires_at=now + timedelta(seconds=PLAYER_GRACE_S)
        )
        if taken:
            log.warning("the player of replay %s went silent; resuming it", run_id)
            replay_player_task.apply_async(args=[run_id, generation + 1])
            resumed += 1
    return resumed


def send_fabric_telemetry(fabric_id: int, frame: dict) -> None:
    try:
        group_publish(fabric_group(fabric_id), {"type": "fabric.telemetry", "seq": frame["seq"], "frame": frame})
    except Exception:  # noqa: BLE001 - the frame is stored; viewers get the next one
        log.warning("could not push telemetry of fabric %s", fabric_id, exc_info=True)
