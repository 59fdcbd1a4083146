"""Writes to users."""
import secrets

from django.db import transaction

from .models import Role, User

__all__ = ("user_create", "user_set_role", "admin_ensure")


def user_create(*, username: str, password: str, role: Role, email: str = "") -> User:
    user = User(username=username, email=email, role=role)
    user.set_password(password)
    user.full_clean()
    user.save()
    return user


def user_set_role(*, user: User, role: Role, is_active: bool) -> User:
    user.role = role
    user.is_active = is_active
    user.full_clean()
    user.save(update_fields=["role", "is_active"])
    return user


@transaction.atomic
def admin_ensure(*, username: str = "admin", password: str | None = None) -> tuple[User, str | None]:
    """Make sure a first admin exists.

    Returns the admin and, when this call created it without a given password, the generated
    password (to be shown once); an existing admin is left untouched.
    """
    existing = User.objects.filter(username=username).first()
    if existing is not None:
        return existing, None
    generated = None
    if not password:
        generated = password = secrets.token_urlsafe(12)
    user = User(username=username, role=Role.ADMIN, is_staff=True, is_superuser=True)
    user.set_password(password)
    user.save()
    return user, generated
