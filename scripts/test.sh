#!/usr/bin/env bash
# Install everything the test suite needs on a fresh machine, then lint, type-check and run all tests
# (warnings are errors in tests: pyproject.toml [tool.pytest.ini_options] filterwarnings).
# Used verbatim by .ci/run and quoted in the README.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt

# Debian packages the tests drive: chromium's headless shell for the browser tests and kaleido's
# figure exports (Playwright must not download a browser; the full chromium is the exports' fallback)
# and nginx for tests/serve (scripts/serve.sh puts it in front of streamlit replicas).
apt_updated=""
need_deb() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$1 is missing and apt-get is not available: install Debian's $1" >&2
    exit 1
  fi
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  [ -n "$apt_updated" ] || { $SUDO apt-get update -qq; apt_updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$1" >/dev/null
}
need_deb chromium
need_deb chromium-headless-shell
need_deb nginx

# The report-table round trip compiles LaTeX: pdflatex (texlive-latex-base) with booktabs.sty, which
# Debian ships in texlive-latex-recommended (it depends on texlive-latex-base).
if ! command -v pdflatex >/dev/null 2>&1 || ! kpsewhich booktabs.sty >/dev/null 2>&1; then
  need_deb texlive-latex-recommended
fi

python3 -m ruff check --no-cache .   # no cache: a warm local cache once passed what a clean clone failed
# The type checker (dpviz/, settings in pyproject.toml [tool.mypy]; 25 s of one core on a clean clone)
# runs beside the tests; its exit status is waited for, so a type error still fails the run.
python3 -m mypy &
types=$!
# Three workers on two cores: the browser tests wait for their pages about half of the time, and
# each test goes to whichever worker is free (worksteal), so no long file ends the run alone.
python3 -m pytest -n 3 --dist worksteal "$@" || { status=$?; wait "$types" || true; exit "$status"; }
wait "$types"
