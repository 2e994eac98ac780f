#!/usr/bin/env bash
# kill -9 durability: N cycles of concurrent acknowledged registrations, SIGKILL at a random
# moment, restart, and a check of every acknowledged write; on SQLite, then on PostgreSQL when it
# is installed (a private cluster from scripts/pg-test-cluster.sh). Exits 1 on any loss.
# Usage: bash bench/kill9.sh [CYCLES]
set -euo pipefail
cd "$(dirname "$0")/.."
cycles="${1:-20}"
bin=./build/release/apps/schemagate/schemagate
[ -x "$bin" ] || cmake --build --preset release --target schemagate
# A copy: a rebuild during a long run must not replace the binary between two restarts.
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp "$bin" "$copy/schemagate"
export SCHEMAGATE_BINARY="$copy/schemagate"
node bench/kill9.mjs "$cycles"
if ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
  eval "$(bash scripts/pg-test-cluster.sh start)"
  trap 'bash scripts/pg-test-cluster.sh stop "$PG_TEST_DIR"; rm -rf "$copy"' EXIT
  node bench/kill9.mjs "$cycles" --db "$SCHEMAGATE_TEST_POSTGRES_URL"
else
  echo "PostgreSQL is not installed: the PostgreSQL pass is skipped"
fi
