"""Users, their roles and the settings they keep."""
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = ("Role", "Team", "User", "Preference", "PREFERENCE_KEYS")


class Role(models.TextChoices):
    """What a user may do. Each role includes the ones before it."""

    VIEWER = "viewer", _("Viewer")  # looks at fabrics, runs and reports
    OPERATOR = "operator", _("Operator")  # also uploads snapshots and starts runs
    ADMIN = "admin", _("Admin")  # also manages users


ROLE_RANK = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}


class User(AbstractUser):
    """A person using the twin. Superusers always act as admins."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    def has_role(self, role: Role) -> bool:
        effective = Role.ADMIN if self.is_superuser else Role(self.role)
        return ROLE_RANK[effective] >= ROLE_RANK[role]

    @property
    def is_operator(self) -> bool:
        return self.has_role(Role.OPERATOR)

    @property
    def is_admin(self) -> bool:
        return self.has_role(Role.ADMIN)


class Team(models.Model):
    """A group of users that a fabric can be given to: a fabric with a team is seen only by its
    members (and admins); a fabric without one is seen by everyone, as before teams existed."""

    name = models.CharField(max_length=100, unique=True)
    members = models.ManyToManyField(User, related_name="teams", blank=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


# The settings a user may keep; a key outside this list is refused (404), so the table holds no junk.
PREFERENCE_KEYS = ("workspace",)  # workspace: the fabric page's docked panels (frontend/src/workspace/layout.ts)


class Preference(models.Model):
    """One setting a user keeps on the server, so that it follows them from browser to browser."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="preferences")
    key = models.CharField(max_length=40)
    value = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("user", "key"), name="preference_once_per_user")]

    def __str__(self) -> str:
        return f"{self.key} of {self.user}"
