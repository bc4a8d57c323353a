#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then lint, type-check and run all tests
# (warnings are errors in tests: pyproject.toml [tool.pytest.ini_options] filterwarnings).
# Used verbatim by .ci/run and quoted in the README.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

# Browser tests drive Debian's chromium (Playwright must not download a browser).
if ! command -v chromium >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
  else
    echo "chromium is missing and apt-get is not available: install Debian's chromium" >&2
    exit 1
  fi
fi

python3 -m ruff check --no-cache .   # no cache: a warm local cache once passed what a clean clone failed
python3 -m mypy                  # dpviz/, settings in pyproject.toml [tool.mypy]
python3 -m pytest -n 2 --dist loadfile "$@"
