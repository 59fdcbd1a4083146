"""The web server alone (docker-compose's web containers and the image's default command): empty
the upload temporary directory, then become daphne with its arguments:

    python manage.py web -- -b 0.0.0.0 -p 8000 --proxy-headers twin.asgi:application

`serve` empties the directory the same way before it starts its own web processes."""
import os
import shutil
import sys

from django.conf import settings
from django.core.management.base import BaseCommand


def upload_temp_dir_empty() -> None:
    """Files of uploads a killed web server left half-written (nothing else uses the directory).
    Call it only before any web process that shares the directory has started."""
    directory = settings.FILE_UPLOAD_TEMP_DIR
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, exist_ok=True)


def web_server_environment(env: dict[str, str]) -> dict[str, str]:
    """The web server's other temporary files (request bodies spooled to disk) go there too."""
    return {**env, "TMPDIR": str(settings.FILE_UPLOAD_TEMP_DIR)}


class Command(BaseCommand):
    help = "Empty the upload temporary directory, then run daphne with the arguments after -- (e.g. -- -b 0.0.0.0 -p 8000 twin.asgi:application)."

    def add_arguments(self, parser):
        parser.add_argument("daphne_arguments", nargs="+", help="Passed to daphne as they are.")

    def handle(self, *args, daphne_arguments: list[str], **options):
        upload_temp_dir_empty()
        # exec: daphne becomes the container's process and receives its signals directly.
        os.execve(sys.executable, [sys.executable, "-m", "daphne", *daphne_arguments], web_server_environment(dict(os.environ)))
