"""Traces to replay, replay playback state, live telemetry state of a fabric and where it comes from."""
from django.conf import settings
from django.db import models

__all__ = ("TraceFile", "ReplayPlayback", "TelemetryState", "TelemetrySource")


class TraceFile(models.Model):
    """An uploaded traffic trace (our trace format, an NCCL debug log or nccl-tests output),
    kept as text so that any worker can replay it."""

    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.CASCADE, related_name="traces")
    name = models.CharField(max_length=255)
    format = models.CharField(max_length=32)
    text = models.TextField()
    ranks = models.PositiveIntegerField()
    events = models.PositiveIntegerField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return self.name


class ReplayPlayback(models.Model):
    """Where the shared player of a finished replay stands. `generation` grows with every command,
    so a player task that is no longer current stops by itself."""

    run = models.OneToOneField("runs.Run", on_delete=models.CASCADE, primary_key=True, related_name="playback")
    frames = models.PositiveIntegerField()
    index = models.PositiveIntegerField(default=0)
    playing = models.BooleanField(default=False)
    speed = models.FloatField(default=1.0, help_text="Simulated seconds per wall-clock second; 0 = as fast as frames may go")
    loop = models.BooleanField(default=False)
    generation = models.PositiveIntegerField(default=0)
    seq = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)
    # A playing player promises its next sign of life by then; past it, its worker is gone and the
    # sweeper starts a new player at the current frame (twin.runs.sweeper).
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"playback of {self.run}"


class TelemetryState(models.Model):
    """The last counters seen from a running fabric (to turn counters into rates) and its last frame."""

    fabric = models.OneToOneField("fabrics.Fabric", on_delete=models.CASCADE, primary_key=True, related_name="telemetry")
    state = models.JSONField(default=dict)
    frame = models.JSONField(null=True, blank=True)
    history = models.JSONField(default=list, help_text="Recent error-counter samples per link, for diagnosis (flapping links)")
    seq = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)


class TelemetrySource(models.Model):
    """The Prometheus server a fabric's counters are read from, and how its labels name ports.

    A worker polls it every `interval_s` while `enabled`; `generation` grows with every change,
    so the polling task of an older configuration stops by itself. The last poll's outcome is
    kept for the fabric page (`last_error` empty when it worked)."""

    fabric = models.OneToOneField("fabrics.Fabric", on_delete=models.CASCADE, primary_key=True, related_name="telemetry_source")
    url = models.URLField(max_length=500, help_text="Base URL of the Prometheus server (its HTTP API is under /api/v1/)")
    preset = models.CharField(max_length=64, help_text="Metric names and label templates to start from (twin.replay.prometheus.PRESETS)")
    mapping = models.JSONField(default=dict, blank=True, help_text="Overrides of the preset: metrics, node/port label templates, a nodes table, a selector")
    interval_s = models.FloatField(default=10.0)
    rate_window_s = models.PositiveIntegerField(default=60)
    enabled = models.BooleanField(default=True)
    generation = models.PositiveIntegerField(default=0)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_report = models.JSONField(default=dict, blank=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"telemetry of {self.fabric} from {self.url}"
