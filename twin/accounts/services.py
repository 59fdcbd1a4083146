"""Writes to users and their preferences."""
import json
import secrets

from django.db import transaction
from django.utils.translation import gettext

from twin.common.errors import ApplicationError

from .models import PREFERENCE_KEYS, Preference, Role, User

__all__ = ("user_create", "user_set_role", "admin_ensure", "preference_get", "preference_set")

# A layout is a few hundred bytes; the cap keeps a script from storing megabytes per user.
PREFERENCE_MAX_BYTES = 4096


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


def preference_get(*, user: User, key: str) -> dict:
    """The user's stored value for `key`, or {} when they have none yet."""
    stored = Preference.objects.filter(user=user, key=key).values_list("value", flat=True).first()
    return stored if isinstance(stored, dict) else {}


def preference_set(*, user: User, key: str, value) -> dict:
    """Stores `value` (a JSON object of at most PREFERENCE_MAX_BYTES) as the user's `key`."""
    if key not in PREFERENCE_KEYS:
        raise ApplicationError(gettext("Unknown preference %(key)s; expected one of: %(known)s.") % {"key": repr(key), "known": gettext(", ").join(PREFERENCE_KEYS)})
    if not isinstance(value, dict):
        raise ApplicationError(gettext("Expected a JSON object as the value."))
    size = len(json.dumps(value, separators=(",", ":")).encode())
    if size > PREFERENCE_MAX_BYTES:
        raise ApplicationError(gettext("The value is %(size)s bytes; at most %(limit)s are kept.") % {"size": size, "limit": PREFERENCE_MAX_BYTES})
    Preference.objects.update_or_create(user=user, key=key, defaults={"value": value})
    return value
