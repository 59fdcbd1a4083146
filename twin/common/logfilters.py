"""Console log filters."""
import logging

# Housekeeping sent by the beat every few seconds: Celery's "received", "succeeded" and "Sending
# due task" lines at INFO for it would be two or three console lines every 5 s, burying the lines
# of real work. Its warnings and failures still show.
HOUSEKEEPING_TASKS = frozenset({"twin.runs.sweep"})


def _task_name(record: logging.LogRecord) -> str | None:
    """The task a Celery log line is about, where Celery says it."""
    data = getattr(record, "data", None)  # the worker's "received" line
    if isinstance(data, dict):
        return data.get("name")
    if isinstance(record.args, dict):  # the trace's "succeeded" line
        return record.args.get("name")
    if record.name == "celery.beat" and isinstance(record.args, tuple) and len(record.args) == 2:
        return record.args[1]  # "Sending due task <entry> (<task>)"
    return None


class QuietHousekeeping(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno > logging.INFO or _task_name(record) not in HOUSEKEEPING_TASKS
