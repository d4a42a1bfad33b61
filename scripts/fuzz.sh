#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time and says, per target, how many
# inputs ran and whether one crashed. Not part of scripts/test; the soak harness calls it in
# its short mode. See docs/fuzzing.md.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 20; TARGETs default to all of `cargo fuzz list`.
# Exit status: 0 when no target crashed, 1 when one did (its input is under
# fuzz/artifacts/<target>/), 2 when the tools are missing or the build failed.
#
# Environment: FUZZ_JOBS (default 1) runs that many targets at once; FUZZ_RSS_MB (default
# 2048) and FUZZ_MALLOC_MB (default 1024) are libFuzzer's memory limits — an input that makes
# a parser allocate more than that counts as a crash, which is how unbounded allocations show;
# FUZZ_MAX_LEN (default 65536) bounds the input size; FUZZ_NO_BUILD=1 runs the binaries of an
# earlier build as they are.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-20}"
shift || true
case "$seconds" in
  '' | *[!0-9]*)
    echo "scripts/fuzz.sh: SECONDS_PER_TARGET must be a whole number, got '$seconds'" >&2
    exit 2
    ;;
esac
jobs="${FUZZ_JOBS:-1}"
rss_mb="${FUZZ_RSS_MB:-2048}"
malloc_mb="${FUZZ_MALLOC_MB:-1024}"
max_len="${FUZZ_MAX_LEN:-65536}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  echo "scripts/fuzz.sh: the nightly toolchain is missing (rustup toolchain install nightly)" >&2
  exit 2
fi
if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "scripts/fuzz.sh: cargo-fuzz not found; installing it (cargo install --locked cargo-fuzz)" >&2
  if ! cargo install --locked cargo-fuzz; then
    echo "scripts/fuzz.sh: could not install cargo-fuzz" >&2
    exit 2
  fi
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
if [ "${#targets[@]}" -eq 0 ]; then
  echo "scripts/fuzz.sh: no fuzz targets found" >&2
  exit 2
fi

# One build for every target (the first is slow: every crate with coverage instrumentation and
# AddressSanitizer), bounded so a stuck build cannot hold the caller forever.
if [ "${FUZZ_NO_BUILD:-0}" = 1 ]; then
  echo "== using the targets built before (FUZZ_NO_BUILD=1)"
elif echo "== cargo fuzz build (${#targets[@]} targets)" && ! timeout "${FUZZ_BUILD_TIMEOUT:-5400}" cargo +nightly fuzz build >fuzz/build.log 2>&1; then
  tail -n 40 fuzz/build.log >&2
  echo "scripts/fuzz.sh: the fuzz build failed (whole log: fuzz/build.log)" >&2
  exit 2
fi

logs=fuzz/artifacts/logs
mkdir -p "$logs"
# The targets that read files work in folders under this one, removed when the script ends.
shm=/dev/shm
[ -d "$shm" ] || shm="${TMPDIR:-/tmp}"
scratch="$(mktemp -d "$shm/fleet-fuzz.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
export FLEET_FUZZ_SCRATCH="$scratch"

bin_dir=fuzz/target/x86_64-unknown-linux-gnu/release
# Runs one target's binary from the build above (not `cargo fuzz run`, which would build again
# whenever a source changed meanwhile); its log says the rest. libFuzzer's exit code is kept
# in <target>.rc.
run_one() {
  local target="$1"
  local corpus="fuzz/corpus/$target" seeds="fuzz/seeds/$target"
  mkdir -p "$corpus" "fuzz/artifacts/$target"
  local dirs=("$corpus")
  [ -d "$seeds" ] && dirs+=("$seeds")
  # The outer timeout is a backstop: libFuzzer stops itself after max_total_time, and a single
  # slow input is cut by -timeout (and counted as a crash).
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_odr_violation=0}" \
    timeout --kill-after=30 "$((seconds + 120))" \
    "$bin_dir/$target" -artifact_prefix="fuzz/artifacts/$target/" \
    -max_total_time="$seconds" -timeout=25 -rss_limit_mb="$rss_mb" \
    -malloc_limit_mb="$malloc_mb" -max_len="$max_len" -print_final_stats=1 \
    -close_fd_mask=1 "${dirs[@]}" >"$logs/$target.log" 2>&1
  echo "$?" >"$logs/$target.rc"
}

running=0
for target in "${targets[@]}"; do
  rm -f "$logs/$target.rc"
  run_one "$target" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait

crashed=0
printf '%-16s %8s %12s %10s %8s  %s\n' target seconds executions exec/s corpus result
for target in "${targets[@]}"; do
  log="$logs/$target.log"
  rc="$(cat "$logs/$target.rc" 2>/dev/null || echo 124)"
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)"
  rate="$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)"
  corpus="$(find "fuzz/corpus/$target" -type f 2>/dev/null | wc -l)"
  artifact="$(grep -o 'Test unit written to [^ ]*' "$log" | tail -n 1 | sed 's/Test unit written to //')"
  if [ "$rc" = 0 ]; then
    result=ok
  elif [ -n "$artifact" ]; then
    result="CRASH: $artifact (log: $log)"
    crashed=1
  else
    result="FAILED (exit $rc; log: $log)"
    crashed=1
  fi
  printf '%-16s %8s %12s %10s %8s  %s\n' "$target" "$seconds" "${execs:-?}" "${rate:-?}" "$corpus" "$result"
done
exit "$crashed"
