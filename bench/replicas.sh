#!/usr/bin/env bash
# One replica on SQLite against two replicas on PostgreSQL behind nginx (round robin), in one run
# on loopback: agent registrations (PUT /agents/{id}, each a durable commit) and validated
# invocations (POST /agents/{id}/invoke to a demo agent). Load from wrk. Prints requests/s and
# p50/p99 for each, and the two-replica figures as ratios of the one-replica ones.
# Usage: bash bench/replicas.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-10}"
conns="${2:-16}"
for tool in wrk nginx; do
  command -v "$tool" >/dev/null || { echo "installing $tool" >&2; apt-get install -y -q wrk nginx-light >/dev/null; }
done
bin=./build/release/apps/schemagate/schemagate
[ -x "$bin" ] || cmake --build --preset release --target schemagate
work=$(mktemp -d)
eval "$(bash scripts/pg-test-cluster.sh start)"
trap 'kill $(jobs -p) 2>/dev/null || true; bash scripts/pg-test-cluster.sh stop "$PG_TEST_DIR"; rm -rf "$work"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
# Not in a $(...) subshell: the server must stay a job of this shell.
start() {  # name command db: the port goes into $port
  "$bin" "$2" --listen 127.0.0.1:0 --db "$3" --no-access-log 2>"$work/$1.err" &
  for _ in $(seq 200); do grep -q "schemagate listening" "$work/$1.err" && break; sleep 0.1; done
  port=$(grep -o 'schemagate listening on http://127.0.0.1:[0-9]*' "$work/$1.err" | grep -o '[0-9]*$')
}

# The single replica is the demo (its photo agent serves every case); the replicas share PostgreSQL.
start single demo "$work/single.db"
single=$port
agent=$(grep -o 'photo_retouch.*agent at http://127.0.0.1:[0-9]*' "$work/single.err" | grep -o '[0-9]*$')
start a serve "$SCHEMAGATE_TEST_POSTGRES_URL"
a=$port
start b serve "$SCHEMAGATE_TEST_POSTGRES_URL"
b=$port
lb=$(free_port)
cat > "$work/nginx.conf" <<CONF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  upstream replicas { server 127.0.0.1:$a; server 127.0.0.1:$b; keepalive 64; }
  server {
    listen 127.0.0.1:$lb;
    location / { proxy_pass http://replicas; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
CONF
nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
sleep 0.5
for target in "$single" "$a"; do
  curl -sf "http://127.0.0.1:$target/agents" -H 'Content-Type: application/json' -d '{
    "id": "photo", "name": "Photo retouch", "description": "Retouches photos.",
    "operations": [{"name": "retouch", "endpoint": "http://127.0.0.1:'"$agent"'/execute",
      "input_schema": {"type": "object", "properties": {"skin_smoothing": {"type": "integer", "minimum": 0, "maximum": 10},
        "filter_style": {"enum": ["none", "vintage", "cinematic", "warm", "cool"]}}, "additionalProperties": false}}]}' >/dev/null
done
sleep 0.5

cat > "$work/invoke.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"skin_smoothing": 3, "filter_style": "vintage"}'
wrk.headers["Content-Type"] = "application/json"
LUA
cat > "$work/register.lua" <<'LUA'
local n = 0
local prefix = tostring(math.random(1, 1e9))
request = function()
  n = n + 1
  local id = "bench-" .. prefix .. "-" .. n
  return wrk.format("PUT", "/agents/" .. id, {["Content-Type"] = "application/json"},
    '{"name": "Bench agent ' .. n .. '", "description": "Converts invoices between currencies, number ' .. n .. '.",' ..
    ' "endpoint": "http://127.0.0.1:9/x", "inputs": {"text": "string"}}')
end
LUA

run() {  # name script url -> "name rps p50 p99"
  local out rps p50 p99
  out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$work/$2.lua" "$3")
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  echo "$1 $rps $p50 $p99"
}
results=(
  "$(run register/1-sqlite register "http://127.0.0.1:$single")"
  "$(run register/2-postgres register "http://127.0.0.1:$lb")"
  "$(run invoke/1-sqlite invoke "http://127.0.0.1:$single/agents/photo/invoke")"
  "$(run invoke/2-postgres invoke "http://127.0.0.1:$lb/agents/photo/invoke")"
)
echo "wrk -t2 -c$conns -d${secs}s on loopback; load, replicas, nginx and PostgreSQL share this machine's $(nproc) cores"
printf '%-20s %12s %10s %10s\n' case 'requests/s' p50 p99
for line in "${results[@]}"; do
  set -- $line
  printf '%-20s %12s %10s %10s\n' "$1" "$2" "$3" "$4"
done
python3 - "${results[@]}" <<'PY'
import sys
def parse(line):
    name, rps, p50, p99 = line.split()
    def us(t):
        for unit, f in (("us", 1), ("ms", 1000), ("s", 1e6)):
            if t.endswith(unit): return float(t[:-len(unit)]) * f
        return float(t)
    return float(rps), us(p99)
r1, r2, i1, i2 = (parse(a) for a in sys.argv[1:5])
print(f"registrations: two replicas on PostgreSQL / one on SQLite: {r2[0] / r1[0]:.2f}x throughput, p99 {r2[1] / r1[1]:.2f}x")
print(f"invocations:   two replicas on PostgreSQL / one on SQLite: {i2[0] / i1[0]:.2f}x throughput, p99 {i2[1] / i1[1]:.2f}x")
PY
