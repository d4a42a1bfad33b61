#!/usr/bin/env bash
# The dashboard's end-to-end tests drive a real browser: Chromium from Debian's `chromium`
# package, through Playwright for Python (PyPI). CI starts on a clean machine with no internet
# but the package registries, so both are installed here when missing:
#   - `chromium` with apt-get (as root);
#   - `playwright` and `pytest` (pinned) into a venv under the target folder, their wheels
#     cached under $TARGET/browser-cache so a second venv needs no download.
# `playwright install` is never run (it downloads browsers from a CDN): the tests launch
# Debian's chromium with Playwright's `executable_path`.
#
# Prints what it uses as shell assignments on stdout, for `eval "$(bash scripts/need-browser.sh)"`:
#   FLEET_CHROMIUM=/usr/bin/chromium
#   FLEET_BROWSER_PYTHON=…/target/browser-venv/bin/python
# and the versions on stderr. Quick when everything is there (no network, no apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."

PLAYWRIGHT=playwright==1.65.3
PYTEST=pytest==9.2.0
TARGET_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")
VENV=$TARGET_DIR/browser-venv
CACHE=$TARGET_DIR/browser-cache

say() { echo "need-browser: $*" >&2; }

apt_install() { # <package…>: as root with apt-get, else fail saying why
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    say "installing $* (apt-get)"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@") >&2
    return 0
  fi
  say "$* missing and cannot be installed here (not root, or no apt-get)"
  return 1
}

# --- Chromium ------------------------------------------------------------------------------
# FLEET_CHROMIUM may name another Chromium; otherwise Debian's.
CHROMIUM=${FLEET_CHROMIUM:-}
if [ -z "$CHROMIUM" ]; then
  if ! command -v chromium >/dev/null 2>&1; then
    apt_install chromium fonts-dejavu-core
  fi
  CHROMIUM=$(command -v chromium)
fi
CHROMIUM_VERSION=$("$CHROMIUM" --version 2>/dev/null || true)
if [ -z "$CHROMIUM_VERSION" ]; then
  say "$CHROMIUM does not run ($CHROMIUM --version printed nothing)"
  exit 1
fi

# --- Playwright for Python -----------------------------------------------------------------
if ! command -v python3 >/dev/null 2>&1; then
  apt_install python3 python3-venv
fi
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  if ! python3 -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    apt_install python3-venv
    python3 -m venv "$VENV"
  fi
fi
want_pw=${PLAYWRIGHT#*==} want_pt=${PYTEST#*==}
if ! "$VENV/bin/python" - "$want_pw" "$want_pt" 2>/dev/null <<'PY'
import sys
from importlib.metadata import version
sys.exit(not (version("playwright") == sys.argv[1] and version("pytest") == sys.argv[2]))
PY
then
  pip_install() {
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-index \
      --find-links "$CACHE/pip" "$PLAYWRIGHT" "$PYTEST"
  }
  if ! pip_install 2>/dev/null; then
    say "downloading $PLAYWRIGHT $PYTEST into $CACHE/pip"
    mkdir -p "$CACHE/pip"
    "$VENV/bin/pip" download --quiet --disable-pip-version-check -d "$CACHE/pip" "$PLAYWRIGHT" "$PYTEST"
    pip_install
  fi
fi

say "$CHROMIUM_VERSION at $CHROMIUM; playwright $want_pw and pytest $want_pt in $VENV"
printf 'FLEET_CHROMIUM=%q\n' "$CHROMIUM"
printf 'FLEET_BROWSER_PYTHON=%q\n' "$VENV/bin/python"
