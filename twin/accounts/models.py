"""Users and their roles."""
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import gettext_lazy as _

__all__ = ("Role", "User")


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
