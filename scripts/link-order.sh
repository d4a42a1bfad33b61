#!/usr/bin/env bash
# Regenerates crates/fleet-cli/link-order.txt: the functions the common paths run, in the
# order they first run, which the release link puts first (see crates/fleet-cli/build.rs).
#
#   scripts/link-order.sh            # build release, trace, write the file
#   scripts/link-order.sh --check    # print how many listed symbols the current binary lacks
#
# Run it after large changes to start-up, the agent loop or the printers, then compare
# `/usr/bin/time -f %M target/release/fleet -p hi` (against `fleet dev fake-model`) before and
# after. Needs valgrind (callgrind); no network, no API key.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "link-order: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
out=crates/fleet-cli/link-order.txt
bin=target/release/fleet

cargo build --release -p fleet-cli >&2

if [[ "${1:-}" == "--check" ]]; then
  nm "$bin" | awk '{print $NF}' | sort -u > "${TMPDIR:-/tmp}/link-order.have"
  missing=$(sort -u "$out" | comm -23 - "${TMPDIR:-/tmp}/link-order.have" | wc -l)
  echo "link-order: $missing of $(wc -l < "$out") listed symbols are not in $bin"
  exit 0
fi

work=$(mktemp -d)
server_pid=""
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$bin" dev fake-model --port 0 > "$work/fake.log" 2>&1 &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'http://[0-9.:]*' "$work/fake.log" | head -n 1 || true)
  [[ -n "$url" ]] && break
  sleep 0.1
done
[[ -n "$url" ]] || { echo "link-order: the fake model did not start (see $work/fake.log)" >&2; exit 1; }

mkdir -p "$work/home" "$work/project"
export HOME="$work/home" FLEET_HOME="$work/home/.fleet" ANTHROPIC_API_KEY=fake ANTHROPIC_BASE_URL="$url"
trace() {
  local name=$1; shift
  (cd "$work/project" && valgrind --tool=callgrind --demangle=no --dump-line=no \
    --callgrind-out-file="$work/cg.$name" "$OLDPWD/$bin" "$@" >/dev/null 2>&1) ||
    echo "link-order: the '$name' run failed; its functions are still listed" >&2
}
trace version --version
trace text -p "hi"
trace stream -p "hi" --output-format stream-json --verbose
trace fanout dev bench fanout --agents 20 --work

# Mangled Rust names only (C library functions live in their own objects), first use first;
# callgrind marks recursion depth with a `'N` suffix, which is not part of the name.
for name in version text stream fanout; do
  grep -oE "^c?fn=\([0-9]+\) (_ZN|_R)[^ ']+" "$work/cg.$name" | sed -E 's/^c?fn=\([0-9]+\) //'
done | awk '!seen[$0]++' > "$out"
echo "link-order: wrote $(wc -l < "$out") symbols to $out" >&2
