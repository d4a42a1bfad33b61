#!/usr/bin/env bash
# The terminal UI's end-to-end tests run fleet inside tmux. CI starts on a clean machine, so
# tmux is installed here when it is missing (Debian's package, as root); elsewhere a missing
# tmux is reported and those tests skip themselves.
set -euo pipefail
if command -v tmux >/dev/null 2>&1; then
  tmux -V
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "need-tmux: installing tmux (apt-get)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux) >&2
  tmux -V
  exit 0
fi
echo "need-tmux: tmux is missing and cannot be installed here (not root, or no apt-get)" >&2
exit 1
