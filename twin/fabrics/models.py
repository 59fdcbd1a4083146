"""Fabrics and their versioned snapshots of nodes and links."""
from django.conf import settings
from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from twin.simcore.model import LINK_DOMAINS, LINK_STATES, NODE_KINDS, SWITCH_TIERS
from twin.simcore.translation import rendered, words_from_plain

__all__ = ("Fabric", "SnapshotRole", "Snapshot", "SnapshotLayout", "Node", "Link")


def choices(values: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(value, value) for value in values]


class Fabric(models.Model):
    """One physical fabric (a super-node and what joins it), known through its snapshots."""

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    transport = models.JSONField(default=dict, blank=True, help_text="Calibrated transport overrides used by simulations")
    calibration = models.JSONField(default=dict, blank=True, help_text="How the transport was fitted: source, parameters, errors")
    # PROTECT: deleting a team must not quietly open its fabrics to everyone.
    team = models.ForeignKey(
        "accounts.Team", null=True, blank=True, on_delete=models.PROTECT, related_name="fabrics",
        help_text="Only this team's members (and admins) see the fabric; empty: everyone does.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name

    def latest_snapshot(self) -> "Snapshot | None":
        """The newest discovered snapshot (plans are not what the fabric looks like)."""
        return self.snapshots.filter(role=SnapshotRole.DISCOVERED).order_by("-version").first()


class SnapshotRole(models.TextChoices):
    DISCOVERED = "discovered", _("Discovered")  # what the tools found
    PLAN = "plan", _("Cabling plan")  # what should be there; discovered snapshots are checked against it


class Snapshot(models.Model):
    """What one upload said the fabric looked like (or should look like, for a plan).
    Never changed after it is written; versions count up per fabric across both roles."""

    fabric = models.ForeignKey(Fabric, on_delete=models.CASCADE, related_name="snapshots")
    version = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=SnapshotRole.choices, default=SnapshotRole.DISCOVERED)
    source_name = models.CharField(max_length=255)
    source_format = models.CharField(max_length=64)
    checksum = models.CharField(max_length=64, help_text="SHA-256 of the uploaded bytes")
    attrs = models.JSONField(default=dict, blank=True)
    summary = models.JSONField(default=dict, blank=True, help_text="Counts by kind, speed and state, and warnings")
    node_count = models.PositiveIntegerField(default=0)
    card_count = models.PositiveIntegerField(default=0)
    switch_count = models.PositiveIntegerField(default=0)
    link_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("fabric", "-version")
        constraints = [
            models.UniqueConstraint(fields=("fabric", "version"), name="%(app_label)s_%(class)s_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.fabric.name} v{self.version}"

    def summary_text(self) -> dict:
        """The summary with its warnings in the active language (some are stored as Phrases)."""
        warnings = [str(rendered(words_from_plain(warning), translation)) for warning in self.summary.get("warnings", ())]
        return {**self.summary, "warnings": warnings}


class Node(models.Model):
    """A card, NIC, switch, host or in-switch aggregation engine in one snapshot."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="nodes")
    key = models.CharField(max_length=255, help_text="Stable identity across snapshots (GUID, bus id, name)")
    kind = models.CharField(max_length=16, choices=choices(NODE_KINDS))
    name = models.CharField(max_length=255)
    tier = models.CharField(max_length=8, choices=choices(SWITCH_TIERS), null=True, blank=True)
    radix = models.PositiveIntegerField(null=True, blank=True)
    host = models.CharField(max_length=255, null=True, blank=True)
    attrs = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ("snapshot", "id")
        constraints = [
            models.UniqueConstraint(fields=("snapshot", "key"), name="%(app_label)s_%(class)s_unique_key"),
        ]
        indexes = [models.Index(fields=("snapshot", "kind"))]

    def __str__(self) -> str:
        return self.name


class Link(models.Model):
    """A cable between two ports of one snapshot."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="links")
    a = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="+")
    a_port = models.CharField(max_length=64)
    b = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="+")
    b_port = models.CharField(max_length=64)
    bandwidth_gbps = models.FloatField()
    latency_ns = models.FloatField()
    state = models.CharField(max_length=16, choices=choices(LINK_STATES))
    domain = models.CharField(max_length=16, choices=choices(LINK_DOMAINS))
    attrs = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ("snapshot", "id")

    def __str__(self) -> str:
        return f"{self.a_id}:{self.a_port} - {self.b_id}:{self.b_port}"


class SnapshotLayout(models.Model):
    """The map layout of a snapshot as it is served: compact JSON, gzipped, and the ETag of that
    JSON. The worker computes it when the snapshot is stored (an older snapshot gets it on its
    first view); kept, since snapshots never change."""

    snapshot = models.OneToOneField(Snapshot, on_delete=models.CASCADE, primary_key=True, related_name="layout")
    gzip_json = models.BinaryField()
    etag = models.CharField(max_length=64)  # sha256 of the JSON, hex
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"layout of {self.snapshot}"
