#!/usr/bin/env bash
# Installs @modelcontextprotocol/server-everything, pinned, into the target folder (once), and
# prints the path of its entry point (run it as `node <path> stdio|streamableHttp`).
# Node.js and npm come from the machine; where they are missing and Debian's apt-get can be
# used (root, as on CI), they are installed first. Only when that is impossible does it print
# nothing and exit 0: the tests then say they were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="2026.8.31"
DIR="${CARGO_TARGET_DIR:-target}/mcp-everything/$VERSION"
ENTRY="$DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
have_node() { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; }
if ! have_node && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "mcp-everything: installing Node.js and npm from Debian's packages" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm) >&2 \
    || echo "mcp-everything: apt-get could not install nodejs/npm" >&2
fi
if ! have_node; then
  echo "mcp-everything: node or npm not found; MCP server-everything tests will be skipped" >&2
  exit 0
fi
if [ ! -f "$ENTRY" ]; then
  mkdir -p "$DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" \
    "@modelcontextprotocol/server-everything@$VERSION" >&2
fi
realpath "$ENTRY"
