"""Pushing run state to viewers over the channel layer.

Each frame is the complete state of the run with its `seq`, so a viewer that misses frames
(a slow viewer is skipped to the newest) is still right after the next one.
"""
import logging
from typing import Any

from django.conf import settings
from django.utils import translation

from twin.common.websocket import group_publish
from twin.simcore.translation import rendered, words_from_plain

from .models import Run, RunKind

__all__ = ("run_group", "run_state_payload", "run_broadcast")

log = logging.getLogger(__name__)


def run_group(run_id: int) -> str:
    return f"twin.run.{run_id}"


def iso(value) -> str | None:
    return value.isoformat() if value else None


def run_state_payload(run: Run) -> dict:
    """The run as the frontend's RUN object.

    `message` and `error` are in the active language (an API request's); `messages` and `errors`
    have them in every language of the site, since one encoded frame goes to every viewer and each
    page shows its own.
    """
    messages, errors = {}, {}
    for language, _ in settings.LANGUAGES:
        with translation.override(language):
            messages[language] = run.message_text()
            errors[language] = run.error_text() or None
    return {
        "id": run.pk,
        "kind": run.kind,
        "snapshot": run.snapshot_id,
        "status": run.status,
        "progress": round(run.progress, 4),
        "message": run.message_text(),
        "messages": messages,
        "result": result_in_language(run),
        "error": run.error_text() or None,
        "errors": errors,
        "created_at": iso(run.created_at),
        "started_at": iso(run.started_at),
        "finished_at": iso(run.finished_at),
    }


def in_every_language(words) -> dict[str, Any]:
    """``words`` (plain, as stored) rendered in each language of the site: one frame goes to every viewer."""
    shown = {}
    for language, _ in settings.LANGUAGES:
        with translation.override(language):
            shown[language] = rendered_plain(words)
    return shown


def rendered_plain(words):
    """Stored words (a list or a mapping of them) as text in the active language."""
    if isinstance(words, dict) and not {"phrase", "joined"} & words.keys():
        return {key: rendered_plain(value) for key, value in words.items()}
    if isinstance(words, list):
        return [rendered_plain(value) for value in words]
    return str(rendered(words_from_plain(words), translation))


def result_in_language(run: Run) -> dict | None:
    """The run's result with the words it stores (a placement's `warning_words`, a collective's
    `skipped_words`) as text: in the active language in place of the English kept beside them,
    and in every language of the site (`warnings_by_language`, `skipped_by_language`), since one
    frame goes to every viewer."""
    if run.kind == RunKind.COLLECTIVE and run.result and "skipped_words" in (run.result.get("choice") or {}):
        choice = {key: value for key, value in run.result["choice"].items() if key != "skipped_words"}
        words = run.result["choice"]["skipped_words"]
        return {**run.result, "choice": {**choice, "skipped": rendered_plain(words), "skipped_by_language": in_every_language(words)}}
    if run.kind != RunKind.PLACEMENT or not run.result:
        return run.result
    shown = {}
    for strategy, result in run.result["results"].items():
        shown[strategy] = {key: value for key, value in result.items() if key != "warning_words"}
        words = list(result.get("warning_words", ()))
        if words:
            shown[strategy]["warnings"] = rendered_plain(words)
            shown[strategy]["warnings_by_language"] = in_every_language(words)
    return {**run.result, "results": shown}


def run_broadcast(run: Run) -> None:
    """Best effort: the database already holds the state, so a lost frame only delays a viewer."""
    try:
        group_publish(run_group(run.pk), {"type": "run.state", "seq": run.seq, "run": run_state_payload(run)})
    except Exception:  # noqa: BLE001 - Redis down must not fail the run itself
        log.warning("could not push state of run %s to viewers", run.pk, exc_info=True)
