"""The super-node fabric twin: Django project package.

The Celery app is exposed here so that `celery -A twin worker` finds it and so that
`@shared_task` functions bind to it when Django starts.
"""
from .celery import app as celery_app

__all__ = ("celery_app",)
