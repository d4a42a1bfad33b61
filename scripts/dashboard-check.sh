#!/usr/bin/env bash
# The web dashboard in a real browser: Playwright for Python drives Debian's Chromium (both set
# up by scripts/need-browser.sh, pinned, cached under the target folder) against the real fleet
# binary and `fleet dev fake-model`: a fan-out with `--dashboard`, a team watched by
# `fleet dashboard`, and what the server refuses (tests/dashboard/).
#
#   bash scripts/dashboard-check.sh                 the tests (extra arguments go to pytest,
#                                                   e.g. -k stop, -x, -v)
#   bash scripts/dashboard-check.sh --screenshots   the same, saving docs/img/dashboard-*.png
#   bash scripts/dashboard-check.sh --bench [ARGS]  the benchmark (scripts/dashboard-bench.py)
#
# FLEET_BIN names a fleet binary to use instead of building one (cargo build -p fleet-cli).
# Every wait in the tests is bounded (FLEET_DASH_WAIT_S, default 30 s) and the whole run is
# stopped after DASHBOARD_CHECK_TIMEOUT seconds (default 600); every process a test started
# is stopped with its process group when the test ends.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")

mode=test
case "${1:-}" in
  --screenshots) mode=screenshots; shift ;;
  --bench) mode=bench; shift ;;
esac

eval "$(bash scripts/need-browser.sh)"
export FLEET_CHROMIUM
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

if [[ $mode == bench ]]; then
  exec "$FLEET_BROWSER_PYTHON" scripts/dashboard-bench.py "$@"
fi

if [[ -z "${FLEET_BIN:-}" ]]; then
  cargo build --quiet -p fleet-cli
  FLEET_BIN=$TARGET_DIR/debug/fleet
fi
FLEET_BIN=$(realpath "$FLEET_BIN")
export FLEET_BIN
if [[ $mode == screenshots ]]; then
  export FLEET_DASH_SCREENSHOTS
  FLEET_DASH_SCREENSHOTS=$(realpath docs/img)
  echo "dashboard-check: screenshots go to $FLEET_DASH_SCREENSHOTS" >&2
fi
echo "dashboard-check: $FLEET_BIN, $FLEET_CHROMIUM" >&2
timeout --kill-after=10 "${DASHBOARD_CHECK_TIMEOUT:-600}" \
  "$FLEET_BROWSER_PYTHON" -m pytest -p no:cacheprovider -q -rfE tests/dashboard "$@"
