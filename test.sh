#!/usr/bin/env bash
# Run every test: the same set-up as ./run.sh, then the frontend's unit tests and the Python
# suite. Without REDIS_URL a Redis is started for the run; without DATABASE_URL, SQLite is used.
# Arguments go to pytest (e.g. -k upload, -x).
source "$(dirname "$0")/scripts/setup.sh" requirements-test.txt
echo "==> Frontend unit tests"
(cd frontend && npm test --silent)
echo "==> Python test suite"
exec .venv/bin/python -m twin.common.embedded .venv/bin/python -m pytest "$@"
