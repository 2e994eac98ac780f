#!/usr/bin/env bash
# Fails, listing the files, when a C++ source differs from its clang-format form.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=()
while IFS= read -r -d '' f; do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done < <(git ls-files -z '*.cpp' '*.hpp')
if ((${#bad[@]})); then
  echo "clang-format: these files need formatting (run: clang-format -i FILE):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
