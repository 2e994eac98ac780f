#!/usr/bin/env bash
# The .deb from scripts/package.sh, unpacked into a temporary root (not this machine's /usr) and
# started from there: the binary runs, finds its word vectors relative to itself, serves the
# console and the API, and the unit and maintainer scripts are in place.
set -euo pipefail
cd "$(dirname "$0")/../.."
deb=$(ls build/package/schemagate_*.deb)
work=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "package test: $*" >&2; exit 1; }

info=$(dpkg-deb --info "$deb")
for dep in libsqlite3 libre2 libssl3 libsodium libboost-json; do
  grep -q "Depends:.*$dep" <<<"$info" || fail "the package does not depend on $dep: $info"
done
for script in postinst prerm postrm; do
  grep -q " $script" <<<"$info" || fail "no $script in the package"
done

root="$work/root"
dpkg-deb -x "$deb" "$root"
for f in usr/bin/schemagate usr/share/schemagate/word-vectors/glove-100d.sgwv \
  usr/lib/systemd/system/schemagate.service; do
  [ -f "$root/$f" ] || fail "$f is not in the package"
done
grep -q '^ExecStart=/usr/bin/schemagate serve' "$root/usr/lib/systemd/system/schemagate.service" ||
  fail "the unit does not start /usr/bin/schemagate"

"$root/usr/bin/schemagate" --version >/dev/null
"$root/usr/bin/schemagate" serve --listen 127.0.0.1:0 --db "$work/schemagate.db" --no-access-log \
  2>"$work/log" &
pid=$!
base=""
for _ in $(seq 1 100); do
  base=$(grep -o 'listening on http://[^ ]*' "$work/log" | head -1 | sed 's/listening on //') || true
  [ -n "$base" ] && break
  kill -0 "$pid" 2>/dev/null || fail "the server exited: $(cat "$work/log")"
  sleep 0.1
done
[ -n "$base" ] || fail "the server did not start: $(cat "$work/log")"

ready=$(curl -sf "$base/readyz") || fail "readyz: $(cat "$work/log")"
grep -q '"ranking":"hybrid"' <<<"$ready" ||
  fail "search is not hybrid: the word vectors beside the binary were not found: $ready"
curl -sf "$base/ui/" | grep -q '<script type="module" src="app.js">' || fail "no console at /ui/"
curl -sf "$base/agents" -H 'Content-Type: application/json' -d '{"id": "pkg-agent",
  "name": "Package test agent", "description": "Translates invoices from French to English.",
  "endpoint": "http://127.0.0.1:9/x", "inputs": {"text": "string"}}' >/dev/null ||
  fail "cannot register an agent"
curl -sf "$base/agents/search" -H 'Content-Type: application/json' \
  -d '{"query": "convert a bill into another language"}' | grep -q '"id":"pkg-agent"' ||
  fail "search does not find the agent by meaning"
echo "package test: $(basename "$deb") unpacked and served from $root"
