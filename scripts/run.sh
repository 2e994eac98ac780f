#!/usr/bin/env bash
# Installs what is missing, builds the release binary and starts the server on its embedded
# default (SQLite file ./schemagate.db, http://127.0.0.1:8080) with the demo agents (seeds 000, 001).
# Extra arguments go to `schemagate demo` (same options as `serve`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target schemagate
exec ./build/release/apps/schemagate/schemagate demo "$@"
