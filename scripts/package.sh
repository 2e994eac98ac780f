#!/usr/bin/env bash
# Builds the Debian package with CPack: build/package/schemagate_<version>_<arch>.deb.
# A plain Release build, as a packager would run it (no presets, no -Werror), installed to /usr.
#   sudo apt install ./build/package/schemagate_*.deb   # installs, enables and starts the service
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build/package -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DSCHEMAGATE_BUILD_TESTS=OFF -DSCHEMAGATE_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build build/package --target schemagate
rm -f build/package/schemagate_*.deb
(cd build/package && cpack -G DEB >/dev/null)
ls build/package/schemagate_*.deb
