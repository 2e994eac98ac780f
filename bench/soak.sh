#!/usr/bin/env bash
# Soak test: MINUTES of mixed traffic against `schemagate demo`, with resident memory, open
# files, request rate, p99 and errors sampled every 10 s and printed as a table (bench/soak.mjs).
# Usage: bash bench/soak.sh [MINUTES]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/release/apps/schemagate/schemagate
[ -x "$bin" ] || cmake --build --preset release --target schemagate
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
cp "$bin" "$copy/schemagate"
SCHEMAGATE_BINARY="$copy/schemagate" node bench/soak.mjs "${1:-5}"
