#!/usr/bin/env bash
# fleet under the official Claude Agent SDKs: the Python `claude-agent-sdk` and the TypeScript
# `@anthropic-ai/claude-agent-sdk` start the real fleet binary as their CLI (`cli_path` /
# `pathToClaudeCodeExecutable`) and drive it over the stream-json control protocol, while fleet
# talks to `fleet dev fake-model` running tests/agent-sdk/scenario.yaml. Each check works in a
# fresh git repository of its own.
#
# The SDKs are pinned and installed under the target folder: the Python wheel (~180 MB, it
# bundles a Claude Code binary that is never run here) is downloaded once into
# $TARGET/agent-sdk-cache and installed from there into $TARGET/agent-sdk-venv; the npm package
# (without its optional platform binaries) goes to $TARGET/agent-sdk-node.
#
# Prints one line per check and `agent-sdk-check: N passed, M failed`; exits non-zero on any
# failure. FLEET_BIN names a fleet binary to use instead of building one; AGENT_SDK_CLI names
# the CLI the SDKs start (default: that fleet). Every check has a timeout (AGENT_SDK_CHECK_TIMEOUT seconds, default 30), and the
# fake server and every process a check started are stopped however the script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

TARGET_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")
CACHE=$TARGET_DIR/agent-sdk-cache
VENV=$TARGET_DIR/agent-sdk-venv
NODE_DIR=$TARGET_DIR/agent-sdk-node
PY_SDK=claude-agent-sdk==0.2.189
PY_EXTRA=pyyaml==6.0.4
TS_SDK_VERSION=0.3.333
# The TypeScript SDK's peer dependencies, pinned to the versions this check was verified with.
TS_PEERS='"zod": "4.6.7", "@modelcontextprotocol/sdk": "1.32.2", "@anthropic-ai/sdk": "1.15.0"'
# A runner that outlives every check's own timeout is stopped whole.
RUNNER_TIMEOUT=${AGENT_SDK_RUNNER_TIMEOUT:-900}

WORK=$(realpath "$(mktemp -d)")
SERVER_PID=""

# Kills what still runs inside the work folder: the checks' fleet processes and the commands
# they started (each check's fleet runs in its own repository there). Nothing else is touched.
stop_leftovers() {
  local proc pid cwd
  for proc in /proc/[0-9]*; do
    pid=${proc#/proc/}
    cwd=$(readlink "$proc/cwd" 2>/dev/null) || continue
    if [[ $cwd == "$WORK" || $cwd == "$WORK"/* ]]; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

cleanup() {
  stop_leftovers
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in python3 node npm git timeout; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "agent-sdk-check: $tool is needed and not found" >&2
    echo "agent-sdk-check: 0 passed, 1 failed"
    exit 1
  fi
done

# --- the Python SDK ----------------------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "agent-sdk-check: creating $VENV" >&2
  python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import claude_agent_sdk, yaml, sys; sys.exit(claude_agent_sdk.__version__ != '${PY_SDK#*==}')" 2>/dev/null; then
  pip_install() {
    "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-index \
      --find-links "$CACHE/pip" "$PY_SDK" "$PY_EXTRA"
  }
  if ! pip_install 2>/dev/null; then
    echo "agent-sdk-check: downloading $PY_SDK into $CACHE/pip" >&2
    mkdir -p "$CACHE/pip"
    "$VENV/bin/pip" download --quiet --disable-pip-version-check -d "$CACHE/pip" "$PY_SDK" "$PY_EXTRA"
    pip_install
  fi
fi

# --- the TypeScript SDK ------------------------------------------------------------------------
mkdir -p "$NODE_DIR"
cat >"$NODE_DIR/package.json.new" <<JSON
{
  "name": "fleet-agent-sdk-check",
  "private": true,
  "dependencies": { "@anthropic-ai/claude-agent-sdk": "$TS_SDK_VERSION", $TS_PEERS }
}
JSON
if ! cmp -s "$NODE_DIR/package.json.new" "$NODE_DIR/package.json" \
    || [[ ! -d "$NODE_DIR/node_modules/@anthropic-ai/claude-agent-sdk" ]]; then
  mv "$NODE_DIR/package.json.new" "$NODE_DIR/package.json"
  echo "agent-sdk-check: installing @anthropic-ai/claude-agent-sdk@$TS_SDK_VERSION into $NODE_DIR" >&2
  (cd "$NODE_DIR" && npm install --silent --no-audit --no-fund --omit=optional \
    --cache "$CACHE/npm" >/dev/null)
fi
rm -f "$NODE_DIR/package.json.new"
echo "agent-sdk-check: python $("$VENV/bin/python" -c 'import claude_agent_sdk as s; print(s.__version__)'), typescript $(node -p "require('$NODE_DIR/node_modules/@anthropic-ai/claude-agent-sdk/package.json').version")" >&2

# --- fleet and the fake model server -----------------------------------------------------------
# shellcheck source=lib/fake-model.sh
source scripts/lib/fake-model.sh
if [[ -z "${FLEET_BIN:-}" ]]; then
  cargo build --quiet -p fleet-cli
  FLEET_BIN=$TARGET_DIR/debug/fleet
fi
FLEET_BIN=$(realpath "$FLEET_BIN")
# The CLI the SDKs start: fleet, unless AGENT_SDK_CLI names another (Claude Code itself, say,
# to see that a check holds against the program fleet stands in for).
AGENT_SDK_CLI=$(realpath "${AGENT_SDK_CLI:-$FLEET_BIN}")

mkdir -p "$WORK/repos" "$WORK/homes"
sed "s|__REPOS__|$WORK/repos|g" tests/agent-sdk/scenario.yaml >"$WORK/scenario.yaml"
# The TypeScript checks read the scenario as JSON (node has no YAML reader).
"$VENV/bin/python" -c 'import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)' \
  "$WORK/scenario.yaml" >"$WORK/scenario.json"
"$FLEET_BIN" dev fake-model --scenario "$WORK/scenario.yaml" >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=$!

URL=$(fake_model_url "$WORK/server.out" "$SERVER_PID")
if [[ -z "$URL" ]]; then
  echo "agent-sdk-check: the fake model server did not start" >&2
  cat "$WORK/server.err" >&2
  echo "agent-sdk-check: 0 passed, 1 failed"
  exit 1
fi
echo "agent-sdk-check: fake model server at $URL, the SDKs start $AGENT_SDK_CLI" >&2

# --- the checks --------------------------------------------------------------------------------
# Only the fake server is reachable: no real key, no provider chosen by the caller's shell.
unset ANTHROPIC_AUTH_TOKEN OPENAI_API_KEY OPENAI_BASE_URL FLEET_PROVIDER \
  CLAUDE_CONFIG_DIR CLAUDECODE
export PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 AGENT_SDK_CLI FAKE_MODEL_URL="$URL" AGENT_SDK_WORK="$WORK" AGENT_SDK_NODE_DIR="$NODE_DIR"

run_checks() { # <label> <command…>: prints the runner's lines; appends them to $WORK/lines
  local label=$1 status=0 before
  shift
  echo "== $label"
  before=$(grep -c '^  FAIL ' "$WORK/lines" || true)
  timeout --kill-after=10 "$RUNNER_TIMEOUT" "$@" 2>&1 | tee -a "$WORK/lines" || status=$?
  stop_leftovers
  if ((status != 0)) && (($(grep -c '^  FAIL ' "$WORK/lines" || true) == before)); then
    # The runner died without naming a failed check (an import error, its own timeout).
    echo "  FAIL $label (the runner exited with status $status)" | tee -a "$WORK/lines"
  fi
}
: >"$WORK/lines"
run_checks "Python SDK (tests/agent-sdk/check_python.py)" \
  "$VENV/bin/python" tests/agent-sdk/check_python.py
# The TypeScript checks import the SDK by name, so they run from beside its node_modules.
cp tests/agent-sdk/check_typescript.mjs "$NODE_DIR/check_typescript.mjs"
run_checks "TypeScript SDK (tests/agent-sdk/check_typescript.mjs)" \
  node "$NODE_DIR/check_typescript.mjs"

passed=$(grep -c '^  ok ' "$WORK/lines" || true)
failed=$(grep -c '^  FAIL ' "$WORK/lines" || true)
if ((failed > 0)); then
  if [[ -s "$WORK/server.err" ]]; then
    echo "-- fake model server log (stderr)" >&2
    tail -n 40 "$WORK/server.err" >&2
  fi
  # An overview: what fleet first said on stderr in each failed check (details above).
  echo "-- first stderr line of the CLI in each failed check"
  awk '/^  FAIL / { check = $2; shown = 0; next }
       /^  ok / { check = ""; next }
       check != "" && !shown && /^    err> / { sub(/^    err> /, ""); printf "  %-18s %s\n", check, $0; shown = 1 }' \
    "$WORK/lines"
fi
cd "$ROOT"
echo "agent-sdk-check: $passed passed, $failed failed"
((failed == 0))
