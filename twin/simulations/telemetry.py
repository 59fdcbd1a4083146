"""Live telemetry of stored fabrics: counters posted by collectors, polled from the Prometheus
server ops already run, or read once from perfquery/ibqueryerrors output; one frame shape out
to everyone viewing the fabric.

Where posted counters are turned into frames: in the live worker. The web process only checks a
post (its size, its shape, who sends it) and leaves the batch in the fabric's slot in Redis,
which holds the newest batch not yet taken: a newer post replaces it (the older one is
superseded, not queued; counters are cumulative, so the newer batch's deltas span the gap) and
the answer says so. A post that finds no drain claimed queues a drain task (`telemetry_drain`),
which takes batches until the slot is empty, waiting a moment for the next one during a short
slice (posts wake it); taking and finding the slot empty are one atomic step with giving up the
drain, so a batch is never left without a drain to take it. The port index of a snapshot is
built in the worker, never in a request.

Where polling runs: in a Celery worker, one task chain per fabric source (`telemetry_poller`).
The web processes only serve pages and websockets; a poll (HTTP queries plus the frame) is CPU
and waiting that must not sit in a request. A chain polls for a short slice, then queues its
successor, like the replay player, so no worker is held for good and a changed configuration
(a new `generation`) ends the old chain by itself. A chain never overlaps itself: a slow
Prometheus delays the next poll of its own fabric instead of queueing polls (newest wins), and
other fabrics' chains are not behind it. No beat scheduler is needed: `serve` runs the web
server and a worker, nothing else.
"""
import functools
import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from datetime import datetime, timezone as dt_timezone

import redis
from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from twin.common.errors import ApplicationError, PayloadTooLarge, ServiceUnavailable, UnsupportedEncoding, core_error_text
from twin.fabrics.models import Fabric, Snapshot, SnapshotRole
from twin.fabrics.selectors import snapshot_spec_cached
from twin.runs.services import queue_task
from twin.fabrics.services import SourceFile, decode_text
from twin.ingest import IngestError
from twin.ingest.errors import in_language
from twin.replay import TelemetryError, telemetry_frame
from twin.replay.ibdiags import parse_reading, reading_samples
from twin.replay.prometheus import PRESETS, PrometheusMapping, error_counters, error_totals, prometheus_mapping, rates_frame, series_ports
from twin.replay.telemetry import TelemetryIndex, check_batch
from twin.simcore.translation import LATER, plain_words, rendered

from .models import TelemetrySource, TelemetryState
from .replays import send_fabric_telemetry

__all__ = (
    "telemetry_index", "telemetry_index_warm", "snapshot_stored", "telemetry_post", "unpacked_body", "batch_of", "telemetry_drain", "telemetry_ingest", "telemetry_reading_import", "telemetry_source_check", "telemetry_source_save",
    "telemetry_poll", "telemetry_poller", "TELEMETRY_HISTORY", "MIN_INTERVAL_S",
)

log = logging.getLogger(__name__)

TELEMETRY_HISTORY = 5000  # error-counter changes kept per fabric for the diagnosis rules
# A drain that died (its worker killed) gives up its claim after this long; the next post queues
# another. Also how long an untaken batch waits in its slot.
DRAIN_CLAIM_S = 30
# A drain waits up to DRAIN_WAIT_S at a time for the next batch (a collector posting at 1 Hz or
# faster finds it there), for DRAIN_SLICE_S at most: then it gives up once the slot is empty, so
# it holds a live-worker thread no longer than a poller's slice.
DRAIN_WAIT_S = 1.0
DRAIN_SLICE_S = 2.0
PROMETHEUS_TIMEOUT_S = 5.0
POLL_SLICE_S = 2.0  # a poller polls this long, then queues its successor
MIN_INTERVAL_S = 0.1
MAX_INTERVAL_S = 3600.0


def telemetry_index(snapshot: Snapshot) -> TelemetryIndex:
    """The snapshot's ports numbered for telemetry, built once per process and snapshot."""
    return _index_cached(snapshot.pk, snapshot.created_at.isoformat())


@functools.lru_cache(maxsize=2)
def _index_cached(snapshot_id: int, created_at: str) -> TelemetryIndex:
    return TelemetryIndex(snapshot_spec_cached(snapshot_id, created_at))


def snapshot_stored(sender, instance: Snapshot, created: bool, **kwargs) -> None:
    """(post_save of Snapshot) A fabric whose counters already come in gets its new snapshot's
    port index built in the live worker once the snapshot is stored, so that no post waits for
    it. Fabrics without telemetry are left alone: an index costs memory as large as the fabric."""
    if not created or instance.role != SnapshotRole.DISCOVERED:
        return
    fabric_id = instance.fabric_id
    if TelemetryState.objects.filter(fabric_id=fabric_id).exists() or TelemetrySource.objects.filter(fabric_id=fabric_id, enabled=True).exists():
        transaction.on_commit(lambda: _queue_index_warm(instance.pk))


def _queue_index_warm(snapshot_id: int) -> None:
    from .tasks import telemetry_index_task

    try:
        telemetry_index_task.apply_async(args=[snapshot_id])
    except Exception:  # noqa: BLE001 - best effort: the first batch builds the index instead
        log.warning("could not queue the telemetry index of snapshot %s", snapshot_id, exc_info=True)


def telemetry_index_warm(snapshot_id: int) -> None:
    """Build the snapshot's port index in this process (the live worker), if it still exists."""
    snapshot = Snapshot.objects.filter(pk=snapshot_id).only("pk", "created_at", "fabric_id").first()
    if snapshot is not None:
        telemetry_index(snapshot)


def _latest_snapshot(fabric: Fabric) -> Snapshot:
    # Only what the index's cache key needs: a snapshot row carries its summary, read on every post otherwise.
    snapshot = fabric.snapshots.filter(role=SnapshotRole.DISCOVERED).order_by("-version").only("pk", "created_at", "fabric_id").first()
    if snapshot is None:
        raise ApplicationError(_("%(fabric)s has no discovered snapshot to map telemetry onto.") % {"fabric": fabric.name})
    return snapshot


# -- posted counters: checked in the web process, turned into frames in the live worker ------------

# Leave a batch in the slot (replacing any untaken one), claim the drain if nobody holds it, and
# wake a drain that waits for the next batch.
# KEYS: slot, drain claim, batch counter, superseded counter, wake-up list; ARGV: body, its
# content encoding, claim seconds. Returns {batch number, number of the batch it replaced or
# false, 1 if a drain must be queued, batches superseded so far}.
_PUT = """
local batch = redis.call('INCR', KEYS[3])
local replaced = redis.call('HGET', KEYS[1], 'batch')
redis.call('HSET', KEYS[1], 'batch', batch, 'body', ARGV[1], 'encoding', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
local superseded = replaced and redis.call('INCR', KEYS[4]) or tonumber(redis.call('GET', KEYS[4]) or '0')
local claimed = redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3])
redis.call('LPUSH', KEYS[5], batch)
redis.call('LTRIM', KEYS[5], 0, 0)
redis.call('EXPIRE', KEYS[5], ARGV[3])
return {batch, replaced, claimed and 1 or 0, superseded}
"""
# Take the slot's batch and renew the claim, or, the slot being empty, give the claim up if
# ARGV[2] is "release" (else keep it: the drain waits for the next batch).
# KEYS: slot, drain claim; ARGV: claim seconds, "release" or "keep". Returns {batch, body,
# encoding} or false.
_TAKE = """
local taken = redis.call('HMGET', KEYS[1], 'batch', 'body', 'encoding')
if not taken[1] then
  if ARGV[2] == 'release' then
    redis.call('DEL', KEYS[2])
  end
  return false
end
redis.call('DEL', KEYS[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return taken
"""


class TelemetrySlots:
    """The slots of every fabric in this process's Redis (REDIS_URL): one client, its scripts loaded once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.client: redis.Redis | None = None

    def scripts(self):
        with self.lock:
            if self.client is None:
                self.client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=5)
                self.put, self.take = self.client.register_script(_PUT), self.client.register_script(_TAKE)
            return self.put, self.take

    @staticmethod
    def keys(fabric: Fabric) -> list[str]:
        # With the fabric's creation time: a fabric deleted and made again under the same id
        # (SQLite reuses ids) starts with slots of its own.
        owner = f"{fabric.pk}.{fabric.created_at.timestamp():.6f}"
        return [f"twin:telemetry:{owner}:{name}" for name in ("slot", "drain", "batches", "superseded", "wake")]


slots = TelemetrySlots()


def telemetry_post(*, fabric: Fabric, samples, body: bytes, encoding: str = "") -> dict:
    """Check a posted batch (`samples`: a list of samples or an object of columns, docs/replay.md,
    parsed from `body`) and leave the body as it was sent (`encoding`: its Content-Encoding) for
    the live worker: nothing is encoded again. Returns `{batch, superseded, superseded_total}`:
    the batch's number (frames carry the number of the batch they were made of), the number of
    the untaken batch it replaced (None if the slot was empty), and how many batches of the
    fabric were replaced so far. A malformed batch is refused here with its problems, and
    nothing is kept."""
    _latest_snapshot(fabric)
    try:
        check_batch(samples)
    except TelemetryError as error:
        raise ApplicationError(core_error_text(error), extra={"problems": list(error.problems)}) from error
    put, _take = slots.scripts()
    try:
        batch, replaced, claimed, superseded = put(keys=slots.keys(fabric), args=[body, encoding, DRAIN_CLAIM_S])
    except redis.RedisError as error:
        raise ServiceUnavailable(_("Telemetry cannot be taken now: Redis does not answer (%(error)s). Try again.") % {"error": error}) from error
    if claimed:
        from .tasks import telemetry_drain_task

        queue_task(telemetry_drain_task, fabric.pk)
    return {"batch": int(batch), "superseded": int(replaced) if replaced else None, "superseded_total": int(superseded)}


def unpacked_body(body: bytes, encoding: str) -> bytes:
    """A telemetry post's body without its Content-Encoding (`gzip`, or none), at most
    TWIN_TELEMETRY_MAX_BYTES once unpacked."""
    limit = settings.TWIN_TELEMETRY_MAX_BYTES
    if encoding.strip().lower() in ("", "identity"):
        return body
    if encoding.strip().lower() != "gzip":
        raise UnsupportedEncoding(_("A telemetry post may be sent as it is or gzip-compressed (Content-Encoding: gzip), not %(encoding)s.") % {"encoding": encoding})
    unpacker = zlib.decompressobj(wbits=31)  # gzip framing
    try:
        unpacked = unpacker.decompress(body, limit + 1)
    except zlib.error as error:
        raise ApplicationError(_("The body says Content-Encoding: gzip, but it is not gzip data (%(error)s).") % {"error": error}) from error
    if len(unpacked) > limit or unpacker.unconsumed_tail:
        raise PayloadTooLarge(
            _("A telemetry post may be at most %(limit)s bytes (TWIN_TELEMETRY_MAX_BYTES) once unpacked; this one is larger. Post the ports in several batches.") % {"limit": limit}
        )
    if not unpacker.eof:
        raise ApplicationError(_("The body says Content-Encoding: gzip, but the gzip data ends early."))
    return unpacked


def batch_of(data) -> list | dict:
    """The batch of a parsed telemetry post: its `columns` (an object of lists), else its `samples` (a list)."""
    body = data if isinstance(data, dict) else {}
    samples = body.get("columns") if isinstance(body.get("columns"), dict) else body.get("samples")
    if not isinstance(samples, list | dict):
        raise ApplicationError(_("samples: Expected a list of samples, or columns: an object of lists."))
    return samples


def telemetry_drain(fabric_id: int) -> int:
    """Turn the fabric's posted batches into frames until its slot is empty (the live worker);
    returns how many it took. A collector posts on a schedule, so an empty slot is waited on for
    a moment (woken by the next post) during a short slice: batches in that slice need no task
    each. After the slice, taking the last batch and giving up the drain are one step. A batch
    that cannot be used (the snapshot gone meanwhile) is logged and dropped; a fabric deleted
    meanwhile leaves its slot to expire."""
    fabric = Fabric.objects.filter(pk=fabric_id).first()
    if fabric is None:
        return 0
    _put, take = slots.scripts()
    slot, claim, *_counters, wake = slots.keys(fabric)
    waits_until = time.monotonic() + DRAIN_SLICE_S
    taken = 0
    while True:
        item = take(keys=[slot, claim], args=[DRAIN_CLAIM_S, "keep"])
        if not item and time.monotonic() < waits_until:
            slots.client.blpop([wake], timeout=DRAIN_WAIT_S)
            continue
        item = item or take(keys=[slot, claim], args=[DRAIN_CLAIM_S, "release"])
        if not item:
            return taken
        taken += 1
        batch, body, encoding = item
        try:
            samples = batch_of(json.loads(unpacked_body(body, (encoding or b"").decode())))
            telemetry_ingest(fabric=fabric, samples=samples, batch=int(batch))
        except ApplicationError as error:
            log.warning("telemetry batch %s of fabric %s dropped: %s", batch, fabric_id, error.message)


# -- frames of counters, and one-off readings ------------------------------------------------------


def telemetry_ingest(*, fabric: Fabric, samples, publish: bool = True, batch: int | None = None) -> dict:
    """Turn port-counter samples (a list of samples or an object of columns, docs/replay.md)
    into a frame on the fabric's latest snapshot and push it to everyone viewing the fabric;
    returns the frame (with the number of the posted `batch` it was made of, if any). With
    `publish` false (a reading of error counters only) the counters are kept for the next
    reading and the diagnosis, and viewers keep the frame they have."""
    snapshot = _latest_snapshot(fabric)
    index = telemetry_index(snapshot)
    with transaction.atomic():
        current, _ = TelemetryState.objects.select_for_update().get_or_create(fabric=fabric)
        try:
            frame, state = telemetry_frame(index, samples, previous=current.state or None)
        except TelemetryError as error:
            raise ApplicationError(core_error_text(error), extra={"problems": list(error.problems)}) from error
        current.state = state
        current.history = history_with_changes(current.history, error_samples(index, samples))
        if publish:
            current.seq += 1
            frame = {**frame, "seq": current.seq, "snapshot": snapshot.pk, **({"batch": batch} if batch is not None else {})}
            current.frame = frame
        current.save()
    if publish:
        transaction.on_commit(lambda: send_fabric_telemetry(fabric.pk, frame))
    return frame


def error_samples(index: TelemetryIndex, samples) -> list[dict]:
    """The samples' cumulative error counters, by link index (telemetry_frame has already checked
    the batch's shape)."""
    if isinstance(samples, dict):  # columns
        names = samples.get("errors") or {}
        rows = zip(samples["node"], samples["port"], *names.values()) if names else ()
        t = samples["timestamp"]
        entries = []
        for position, (node, port, *values) in enumerate(rows):
            port_number = index.number.get((node, str(port)))
            if port_number is not None:
                t_s = float(t if isinstance(t, int | float) else t[position])
                entries.append({"t_s": t_s, "link": index.link(port_number), "counters": {name: int(value) for name, value in zip(names, values)}})
        return entries
    entries = []
    for sample in samples:
        port, errors = sample.get("port") or {}, sample.get("errors")
        port_number = index.number.get((port.get("node"), str(port.get("port"))))
        if port_number is not None and isinstance(errors, dict) and errors:
            entries.append({"t_s": _sample_time(sample.get("timestamp")), "link": index.link(port_number), "counters": {name: int(value) for name, value in errors.items()}})
    return entries


def history_with_changes(history: list[dict], entries: list[dict]) -> list[dict]:
    """The history with the entries whose counters differ from their link's last one: counters
    that stand still add nothing, so the row grows with events, never with the polling rate,
    and stays under TELEMETRY_HISTORY entries."""
    last = {entry["link"]: entry["counters"] for entry in history}
    kept = list(history)
    for entry in entries:
        if last.get(entry["link"]) != entry["counters"]:
            kept.append(entry)
            last[entry["link"]] = entry["counters"]
    return kept[-TELEMETRY_HISTORY:]


def _sample_time(value) -> float:
    """Seconds since the epoch of a checked sample's timestamp (a number, or ISO 8601; no zone = UTC)."""
    if isinstance(value, int | float):
        return float(value)
    moment = datetime.fromisoformat(value.strip())
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt_timezone.utc)).timestamp()


def telemetry_reading_import(*, fabric: Fabric, source: SourceFile, taken_at: float | None = None) -> dict:
    """One `perfquery -x` or `ibqueryerrors` reading, taken at `taken_at` (now by default), as
    telemetry of the fabric: perfquery's byte counters give utilisation against the previous
    reading; error counters go to the report and the diagnosis. Returns what was read."""
    snapshot = _latest_snapshot(fabric)
    index = telemetry_index(snapshot)
    try:
        kind, readings = parse_reading(decode_text(source), source_name=source.name)
    except IngestError as error:
        shown = in_language(error.as_dict(), translation)
        raise ApplicationError(shown["detail"], extra=shown) from error
    samples, unknown = reading_samples(index, readings, timestamp=taken_at if taken_at is not None else time.time())
    if not samples:
        raise ApplicationError(
            _("None of the %(count)s ports in %(name)s is a port of %(fabric)s: %(examples)s")
            % {"count": len(readings), "name": source.name, "fabric": fabric.name, "examples": "; ".join(unknown[:5])}
        )
    publish = any(("tx_bytes" in sample or "rx_bytes" in sample) for sample in samples)
    frame = telemetry_ingest(fabric=fabric, samples=samples, publish=publish)
    return {"kind": kind, "ports": len(samples), "unknown": unknown, "published": publish, "telemetry": frame.get("telemetry", {})}


# -- Prometheus -----------------------------------------------------------------------------------


def prometheus_get(url: str, path: str, params: dict | None = None, *, timeout: float = PROMETHEUS_TIMEOUT_S):
    """`data` of a Prometheus HTTP API answer, or an ApplicationError saying what went wrong."""
    address = url.rstrip("/") + path + ("?" + urllib.parse.urlencode(params) if params else "")
    request = urllib.request.Request(address, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - an operator's http(s) URL, checked by the form
            body = response.read()
    except urllib.error.HTTPError as error:
        refused = LATER.gettext("Prometheus at %(url)s refused %(path)s (HTTP %(status)s): %(reason)s")
        raise ApplicationError(refused % {"url": url, "path": path, "status": str(error.code), "reason": _prometheus_error(error.read()) or str(error.reason)}) from error
    except (urllib.error.URLError, OSError, ValueError) as error:
        # The reason is the system's or the server's own, in English.
        reason = str(getattr(error, "reason", error))
        raise ApplicationError(LATER.gettext("Could not reach Prometheus at %(url)s: %(reason)s.") % {"url": url, "reason": reason}) from error
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if not isinstance(answer, dict) or answer.get("status") != "success" or "data" not in answer:
        raise ApplicationError(LATER.gettext("%(url)s answered %(path)s with something that is not a Prometheus API answer.") % {"url": url, "path": path})
    return answer["data"]


def _prometheus_error(body: bytes) -> str:
    try:
        return str(json.loads(body).get("error", ""))
    except (ValueError, AttributeError):
        return ""


def _mapping_of(preset: str, mapping) -> PrometheusMapping:
    try:
        return prometheus_mapping(mapping, preset=preset)
    except TelemetryError as error:
        raise ApplicationError(error.words, extra={"problems": list(error.problems)}) from error


def telemetry_source_check(*, fabric: Fabric, url: str, preset: str, mapping, rate_window_s: int) -> dict:
    """Ask the server once: that it is a Prometheus, and how many of the series of the first
    byte counter name ports of the fabric (with examples of those that do, and of those that do
    not)."""
    checked = _mapping_of(preset, mapping)
    index = telemetry_index(_latest_snapshot(fabric))
    build = prometheus_get(url, "/api/v1/status/buildinfo")
    key, query = next(iter(checked.queries(rate_window_s).items()))
    answer = prometheus_get(url, "/api/v1/query", {"query": query})
    try:
        report = rates_frame(index, checked, {key: answer}, window_s=rate_window_s)["telemetry"]
        mapped_examples = series_ports(index, checked, key, answer)
    except TelemetryError as error:
        raise ApplicationError(core_error_text(error)) from error
    return {
        "version": build.get("version", "") if isinstance(build, dict) else "",
        "query": query,
        "series": report["samples"],
        "mapped": report["samples"] - report["unknown_ports"],
        "unknown": report["unknown"][:5],
        "mapped_examples": mapped_examples,
    }


def telemetry_source_save(*, fabric: Fabric, url: str, preset: str, mapping, interval_s: float, rate_window_s: int, enabled: bool, user) -> TelemetrySource:
    """Store the fabric's Prometheus source once it answered (when enabled), and (re)start its
    polling; a disabled source stops polling."""
    if preset not in PRESETS:
        raise ApplicationError(_("Unknown preset %(preset)s.") % {"preset": preset})
    if not MIN_INTERVAL_S <= interval_s <= MAX_INTERVAL_S:
        raise ApplicationError(_("The interval must be between %(low)s and %(high)s seconds.") % {"low": MIN_INTERVAL_S, "high": MAX_INTERVAL_S})
    checked = telemetry_source_check(fabric=fabric, url=url, preset=preset, mapping=mapping, rate_window_s=rate_window_s) if enabled else {}
    if enabled and not checked["series"]:
        raise ApplicationError(
            _("Prometheus has no series for %(query)s: check the metric names and the selector, and that Prometheus scrapes the exporters.") % {"query": checked["query"]}
        )
    if enabled and not checked["mapped"]:
        raise ApplicationError(
            _("Prometheus answered %(series)s series for %(query)s, but none names a port of %(fabric)s: %(examples)s")
            % {"series": checked["series"], "query": checked["query"], "fabric": fabric.name, "examples": "; ".join(checked["unknown"])}
        )
    with transaction.atomic():
        source, _created = TelemetrySource.objects.select_for_update().get_or_create(fabric=fabric, defaults={"url": url, "preset": preset})
        source.url, source.preset, source.mapping = url, preset, mapping or {}
        source.interval_s, source.rate_window_s, source.enabled = interval_s, rate_window_s, enabled
        source.generation += 1
        source.last_error, source.last_report, source.updated_by = "", {"check": checked} if checked else {}, user
        source.save()
        if enabled:
            generation = source.generation
            transaction.on_commit(lambda: _start_poller(fabric.pk, generation))
    return source


def _start_poller(fabric_id: int, generation: int) -> None:
    from .tasks import telemetry_poll_task

    telemetry_poll_task.apply_async(args=[fabric_id, generation])


# fabric -> ((snapshot, generation), label set -> port, (port, error counter) -> count at the last poll)
_polled: dict[int, tuple[tuple, dict, dict]] = {}


def telemetry_poll(source: TelemetrySource) -> dict:
    """One poll: ask Prometheus for the rates (a query per reading) and the error counters (one
    query for all), push the frame, keep the counters that changed for the diagnosis (as the POST
    endpoint's error readings); returns the frame. Which port each label set names is resolved
    once per snapshot and configuration; the error counts of the last poll are kept in this
    process to list what grew since (none at a chain's first poll in a process)."""
    snapshot = _latest_snapshot(source.fabric)
    index = telemetry_index(snapshot)
    checked = _mapping_of(source.preset, source.mapping)
    window = source.rate_window_s
    answers = {key: prometheus_get(source.url, "/api/v1/query", {"query": query}) for key, query in checked.queries(window).items()}
    errors_query = checked.errors_query()
    errors_answer = prometheus_get(source.url, "/api/v1/query", {"query": errors_query}) if errors_query else None
    key = (snapshot.pk, source.generation)
    if _polled.get(source.fabric_id, (None,))[0] != key:
        _polled[source.fabric_id] = (key, {}, {})
    _key, ports_of, error_counts = _polled[source.fabric_id]
    try:
        counters = error_counters(index, checked, errors_answer, previous=error_counts, ports_of=ports_of)
        frame = rates_frame(index, checked, answers, window_s=window, ports_of=ports_of, error_counters=counters)
        errors = error_totals(index, counters)
    except TelemetryError as error:
        raise ApplicationError(error.words) from error
    with transaction.atomic():
        current, _created = TelemetryState.objects.select_for_update().get_or_create(fabric_id=source.fabric_id)
        current.seq += 1
        frame = {**frame, "seq": current.seq, "snapshot": snapshot.pk}
        current.frame = frame
        current.history = history_with_changes(current.history, errors)
        current.save(update_fields=["frame", "seq", "history", "updated_at"])
    send_fabric_telemetry(source.fabric_id, frame)
    return frame


def telemetry_poller(*, fabric_id: int, generation: int) -> float | None:
    """Poll the fabric's source for one slice at its interval; returns the delay before the next
    slice, or None when this configuration is no longer current (changed, disabled, deleted)."""
    slice_ends = time.monotonic() + POLL_SLICE_S
    while True:
        source = TelemetrySource.objects.select_related("fabric").filter(pk=fabric_id, generation=generation, enabled=True).first()
        if source is None:
            return None
        started = time.monotonic()
        try:
            frame = telemetry_poll(source)
        except ApplicationError as error:  # the server may come back: say so on the page, keep polling
            # `last_error` in English for logs and the admin; the words for each reader of the page.
            TelemetrySource.objects.filter(pk=fabric_id, generation=generation).update(
                last_polled_at=timezone.now(), last_error=str(rendered(error.words)), last_report={**source.last_report, "error": plain_words(error.words)},
            )  # fmt: skip
        else:
            report = frame["telemetry"]
            summary = {key: report[key] for key in ("samples", "links_measured", "unknown_ports", "unknown", "ports_with_errors")}
            TelemetrySource.objects.filter(pk=fabric_id, generation=generation).update(last_polled_at=timezone.now(), last_error="", last_report={**{key: value for key, value in source.last_report.items() if key != "error"}, "poll": summary})
        # A fixed clock from the poll's start: a slow poll shortens the wait, never queues polls.
        wait_s = max(0.0, source.interval_s - (time.monotonic() - started))
        if time.monotonic() + wait_s >= slice_ends:
            return wait_s
        time.sleep(wait_s)
