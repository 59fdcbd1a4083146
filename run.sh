#!/usr/bin/env bash
# Run the fabric twin on this machine: sets everything up on first use, then starts Redis
# (embedded unless REDIS_URL is set), the web server and a Celery worker. Ctrl-C stops them.
# Arguments go to `manage.py serve` (e.g. --port 8080, --concurrency 2).
source "$(dirname "$0")/scripts/setup.sh" requirements.txt
exec .venv/bin/python manage.py serve "$@"
