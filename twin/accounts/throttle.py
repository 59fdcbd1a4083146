"""Login throttling: after TWIN_LOGIN_FAILURES_ALLOWED failed logins for one user name from one
address within TWIN_LOGIN_LOCKOUT_S seconds, that pair is locked out for TWIN_LOGIN_LOCKOUT_S
seconds, whatever the user's role. Counts live in the cache (Redis), shared by every web process.

When the cache cannot be reached, logins go on unthrottled: pages keep working while Redis is
down, as they do for sessions."""
import hashlib
import logging
import math
import time

from django.conf import settings
from django.core.cache import cache

__all__ = ("login_lockout_remaining_s", "login_failure_record", "login_failures_clear")

log = logging.getLogger(__name__)


def _key(kind: str, username: str, address: str) -> str:
    digest = hashlib.sha256(f"{username.casefold()}\x00{address}".encode()).hexdigest()
    return f"login-{kind}:{digest}"


def login_lockout_remaining_s(username: str, address: str) -> int:
    """Seconds until this user name may try again from this address; 0 when not locked."""
    try:
        locked_until = cache.get(_key("locked", username, address))
    except Exception as error:  # noqa: BLE001 - any cache failure: fail open, and say so
        log.warning("login throttle unavailable: %s", error)
        return 0
    return max(0, math.ceil(locked_until - time.time())) if locked_until else 0


def login_failure_record(username: str, address: str) -> None:
    """Count a failed login; the one that reaches the limit starts the lockout."""
    failures_key, window = _key("failures", username, address), settings.TWIN_LOGIN_LOCKOUT_S
    try:
        cache.add(failures_key, 0, timeout=window)  # the window starts at the first failure
        if cache.incr(failures_key) >= settings.TWIN_LOGIN_FAILURES_ALLOWED:
            cache.set(_key("locked", username, address), time.time() + window, timeout=window)
            cache.delete(failures_key)
    except Exception as error:  # noqa: BLE001 - as above
        log.warning("login throttle unavailable: %s", error)


def login_failures_clear(username: str, address: str) -> None:
    try:
        cache.delete(_key("failures", username, address))
    except Exception as error:  # noqa: BLE001 - as above
        log.warning("login throttle unavailable: %s", error)
