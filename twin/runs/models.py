"""Background runs: one row per piece of work a Celery worker does for a user."""
from django.conf import settings
from django.db import models
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from twin.simcore.translation import Phrase, rendered, words_from_plain

__all__ = ("RunKind", "RunStatus", "Run", "CellStatus", "RunCell")


class RunKind(models.TextChoices):
    HOP_STATS = "hop_stats", _("Hop-distance statistics")
    COLLECTIVE = "collective", _("Collective simulation")
    PLACEMENT = "placement", _("Job placement")
    FAILURES = "failures", _("Failure what-if")
    REPLAY = "replay", _("Traffic replay")
    WHATIF = "whatif", _("Staged scale-out what-if")


class RunStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")

    @classmethod
    def terminal(cls) -> tuple["RunStatus", ...]:
        return (cls.SUCCEEDED, cls.FAILED, cls.CANCELLED)


class Run(models.Model):
    """The database is the source of truth for a run; websocket frames only mirror it.

    `seq` grows with every state change so that viewers can drop frames that arrive late.
    """

    kind = models.CharField(max_length=32, choices=RunKind.choices)
    snapshot = models.ForeignKey("fabrics.Snapshot", on_delete=models.CASCADE, related_name="runs")
    params = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.PENDING)
    progress = models.FloatField(default=0.0)
    # The progress message in English (logs, the admin, API clients asking in English) and as a
    # Phrase (twin.simcore.translation), rendered in each reader's language: see `message_text`.
    message = models.CharField(max_length=255, blank=True)
    message_phrase = models.JSONField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    detail = models.JSONField(null=True, blank=True, help_text="Bulky per-link data, served apart from the pushed state")
    # Why it failed or was cancelled, in English and as words (a Phrase or Joined), rendered in
    # each reader's language: see `error_text`.
    error = models.TextField(blank=True)
    error_phrase = models.JSONField(null=True, blank=True)
    seq = models.PositiveBigIntegerField(default=0)
    # Leases (twin.runs.sweeper): when the run's task was last sent, the last sign of life of the
    # worker doing it (None: nobody has it), and how many workers have taken it.
    queued_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = [models.Index(fields=("status",))]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk}"

    @property
    def is_terminal(self) -> bool:
        return self.status in RunStatus.terminal()

    def message_text(self) -> str:
        """The progress message in the active language (rows from before phrases were stored
        hold an English msgid, or text that stays English)."""
        if self.message_phrase:
            return Phrase.from_plain(self.message_phrase).render(translation)
        return translation.gettext(self.message) if self.message else ""

    def error_text(self) -> str:
        """Why the run failed or was cancelled, in the active language (rows from before words
        were stored, and failures nobody wrote words for, hold English text)."""
        if self.error_phrase:
            return str(rendered(words_from_plain(self.error_phrase), translation))
        return self.error

    def may_be_cancelled_by(self, user) -> bool:
        """Operators cancel the runs they started; admins any run."""
        return user.is_admin or (user.is_operator and self.created_by_id == user.pk)


class CellStatus(models.TextChoices):
    PENDING = "pending", _("Pending")
    DONE = "done", _("Done")
    FAILED = "failed", _("Failed")
    SKIPPED = "skipped", _("Skipped")


class RunCell(models.Model):
    """One independent piece of a fanned-out run (e.g. stage x alternative x collective of a
    what-if), done by its own Celery task. Cells are pure computations: doing one twice gives
    the same result, so a redelivered task simply does it again unless it is already done."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="cells")
    key = models.CharField(max_length=200, help_text="Stable name of the cell within its run")
    label = models.CharField(max_length=200, blank=True, help_text="The cell for people, in progress messages")
    label_phrase = models.JSONField(null=True, blank=True, help_text="The label as a Phrase, rendered in the reader's language")
    position = models.PositiveIntegerField()
    params = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=CellStatus.choices, default=CellStatus.PENDING)
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("run", "position")
        constraints = [models.UniqueConstraint(fields=("run", "key"), name="%(app_label)s_%(class)s_unique_key")]
        indexes = [models.Index(fields=("run", "status"))]

    def __str__(self) -> str:
        return f"{self.run} / {self.key}"

    @property
    def label_words(self) -> Phrase | str:
        """The label to put in a message: its Phrase, else the English text, else the key."""
        return Phrase.from_plain(self.label_phrase) if self.label_phrase else self.label or self.key
