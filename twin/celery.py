"""Celery application. All settings come from Django settings with the CELERY_ prefix."""
import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "twin.settings")

app = Celery("twin")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
