"""Whether the services behind the app answer."""
import redis
from django.conf import settings
from django.db import connection

__all__ = ("database_ok", "redis_ok")


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception:  # noqa: BLE001 - any failure means "not available"
        return False


def redis_ok() -> bool:
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:  # noqa: BLE001
        return False
