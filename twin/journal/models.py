"""The experiment journal: every measured run, with what the article asks to record."""
from django.conf import settings
from django.db import models

__all__ = ("Experiment",)


class Experiment(models.Model):
    """One measured run (usually one nccl-tests report) and the twin's prediction for it.

    `points` holds the measurement per message size and `predicted` the twin's figures at the
    same sizes, so the two can be compared without recomputing.
    """

    fabric = models.ForeignKey("fabrics.Fabric", on_delete=models.CASCADE, related_name="experiments")
    snapshot = models.ForeignKey("fabrics.Snapshot", on_delete=models.SET_NULL, null=True, blank=True, related_name="experiments")
    title = models.CharField(max_length=200)
    collective = models.CharField(max_length=32)
    card_count = models.PositiveIntegerField()
    comm_library = models.CharField(max_length=64, default="NCCL", blank=True)
    library_version = models.CharField(max_length=64, blank=True)
    algorithm = models.CharField(max_length=64, blank=True, help_text="As configured for the run (e.g. NCCL_ALGO); empty = library default")
    protocol = models.CharField(max_length=16, blank=True, help_text="As configured for the run (NCCL_PROTO: LL, LL128 or Simple); empty = library default")
    chunk_size_bytes = models.PositiveBigIntegerField(null=True, blank=True)
    model_name = models.CharField(max_length=200, blank=True)
    tp = models.PositiveIntegerField(null=True, blank=True)
    pp = models.PositiveIntegerField(null=True, blank=True)
    dp = models.PositiveIntegerField(null=True, blank=True)
    ep = models.PositiveIntegerField(null=True, blank=True)
    notes = models.TextField(blank=True)
    source_name = models.CharField(max_length=255, blank=True)
    measurement = models.JSONField(default=dict, blank=True, help_text="The parsed report as stored plain data")
    points = models.JSONField(default=list, help_text="[{size_bytes, busbw_GBps, algbw_GBps, time_us}] as measured")
    predicted = models.JSONField(default=list, help_text="[{size_bytes, busbw_GBps, time_s, algorithm, protocol, error}] by the twin")
    peak_busbw_GBps = models.FloatField(null=True, blank=True)
    max_abs_error = models.FloatField(null=True, blank=True, help_text="Largest |predicted/measured - 1| over the sizes")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [models.Index(fields=("fabric", "collective"))]

    def __str__(self) -> str:
        return self.title
