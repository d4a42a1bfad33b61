#!/usr/bin/env bash
# Independent-client check of the fake model server: the official `anthropic` and `openai`
# Python SDKs talk to `fleet dev fake-model` and must rebuild exactly what
# tests/sdk/scenario.yaml scripts. Our own client and our fake could share one misreading of
# the wire protocol; the SDKs cannot.
#
# Makes (or reuses) a venv at target/sdk-venv, installs the SDKs from PyPI, builds the fleet
# binary, starts the server, runs tests/sdk/check_*.py, and prints
# `sdk-check: N passed, M failed`. Exits non-zero on any failure; the server is always stopped.
set -euo pipefail
cd "$(dirname "$0")/.."

TARGET_DIR=${CARGO_TARGET_DIR:-target}
VENV=$TARGET_DIR/sdk-venv
SCENARIO=tests/sdk/scenario.yaml
WORK=$(mktemp -d)
SERVER_PID=""

cleanup() {
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ ! -x "$VENV/bin/python" ]]; then
  echo "sdk-check: creating $VENV" >&2
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import anthropic, openai, yaml" 2>/dev/null; then
  echo "sdk-check: installing anthropic, openai, pyyaml from PyPI" >&2
  # Pinned to the versions this check was last verified with; bump deliberately.
  "$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "anthropic==2.14.0" "openai==3.57.0" "pyyaml==6.0.4"
fi
"$VENV/bin/python" - <<'PY' >&2
import anthropic, openai
print(f"sdk-check: anthropic {anthropic.__version__}, openai {openai.__version__}")
PY

cargo build --quiet -p fleet-cli
"$TARGET_DIR/debug/fleet" dev fake-model --scenario "$SCENARIO" >"$WORK/stdout" 2>"$WORK/stderr" &
SERVER_PID=$!

# shellcheck source=lib/fake-model.sh
source scripts/lib/fake-model.sh
URL=$(fake_model_url "$WORK/stdout" "$SERVER_PID")
if [[ -z "$URL" ]]; then
  echo "sdk-check: the fake model server did not start" >&2
  cat "$WORK/stderr" >&2
  echo "sdk-check: 0 passed, 1 failed"
  exit 1
fi
echo "sdk-check: fake model server at $URL" >&2

passed=0
failed=0
for check in tests/sdk/check_anthropic.py tests/sdk/check_openai.py; do
  echo "== $check"
  if FAKE_MODEL_URL="$URL" "$VENV/bin/python" "$check"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done

if ((failed > 0)); then
  echo "-- fake model server log (stderr)" >&2
  cat "$WORK/stderr" >&2
fi
echo "sdk-check: $passed passed, $failed failed"
((failed == 0))
