# Shared set-up for ./run.sh and ./test.sh (sourced, not run): a virtual environment with the
# pinned requirements, and the built frontend. Each step is skipped when its inputs are unchanged.
# Usage: source scripts/setup.sh REQUIREMENTS_FILE
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

requirements_file="$1"

python_bin="${PYTHON:-$(command -v python3.11 || command -v python3 || true)}"
if [ -z "$python_bin" ]; then
  echo "setup: Python 3.11 is needed (python3.11 or python3 on PATH)." >&2; exit 1
fi
if ! "$python_bin" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup: $python_bin is $("$python_bin" --version 2>&1); Python 3.11 or newer is needed." >&2; exit 1
fi
if ! command -v npm >/dev/null; then
  echo "setup: Node.js 20 and npm are needed to build the frontend." >&2; exit 1
fi

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

if [ ! -x .venv/bin/python ]; then
  step "Creating the virtual environment (.venv)"
  "$python_bin" -m venv .venv
fi

requirements_stamp=".venv/.installed-$(cat requirements*.txt | sha256sum | cut -c1-16)-$(basename "$requirements_file")"
if [ ! -f "$requirements_stamp" ]; then
  step "Installing Python packages from $requirements_file"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements_file"
  rm -f .venv/.installed-*
  touch "$requirements_stamp"
fi

frontend_stamp="frontend/dist/.built-$( (cat frontend/package-lock.json frontend/*.json frontend/*.ts; find frontend/src frontend/public -type f -print0 | sort -z | xargs -0 cat) | sha256sum | cut -c1-16)"
if [ ! -f "$frontend_stamp" ]; then
  step "Building the frontend"
  (cd frontend && npm ci --no-audit --no-fund --loglevel=error && npm run --silent build)
  touch "$frontend_stamp"
fi

export DJANGO_SETTINGS_MODULE=twin.settings
