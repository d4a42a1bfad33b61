#!/usr/bin/env bash
# Installs @modelcontextprotocol/server-everything, pinned, into the target folder (once), and
# prints the path of its entry point (run it as `node <path> stdio|streamableHttp`). Prints
# nothing and exits 0 when node or npm is missing: the tests then say they were skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="2026.8.31"
DIR="${CARGO_TARGET_DIR:-target}/mcp-everything/$VERSION"
ENTRY="$DIR/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "mcp-everything: node or npm not found; MCP server-everything tests will be skipped" >&2
  exit 0
fi
if [ ! -f "$ENTRY" ]; then
  mkdir -p "$DIR"
  npm install --silent --no-audit --no-fund --prefix "$DIR" \
    "@modelcontextprotocol/server-everything@$VERSION" >&2
fi
realpath "$ENTRY"
