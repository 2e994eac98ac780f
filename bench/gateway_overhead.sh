#!/usr/bin/env bash
# Gateway overhead, side by side in one run on loopback: a demo agent called directly, through
# nginx proxy_pass (Debian nginx, as many worker processes as schemagate has I/O threads), and
# through schemagate's POST /agents/{id}/invoke (with input and output validation), and a
# scenario operation (a seed 000 template behind the gateway: the demo's photo-retouch) and the
# same payload through POST /scenarios/photo_retouch/payloads. Load
# from wrk: throughput at CONNECTIONS, then latency at one connection. Prints requests/s and
# p50/p99, schemagate's throughput as a ratio of nginx's, and the p50 each adds to the direct call.
# schemagate runs with --busy-poll-us (an I/O thread polls a while after work before it sleeps);
# the one-connection table adds a second schemagate that sleeps at once (the default).
# Usage: bash bench/gateway_overhead.sh [SECONDS] [CONNECTIONS]
#   SCHEMAGATE_BENCH_THREADS=N  schemagate's I/O threads and nginx's workers (default: cores)
#   SCHEMAGATE_BENCH_ROUNDS=N   nginx and schemagate runs at CONNECTIONS, taken in turn (default
#                               3); the ratio is the median of the rounds' ratios: on a shared
#                               2-core VM one run's throughput varies by 10-20%
#   SCHEMAGATE_BENCH_BUSY_POLL_US=N  schemagate's --busy-poll-us (default 50)
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
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

threads="${SCHEMAGATE_BENCH_THREADS:-$(nproc)}"
busy="${SCHEMAGATE_BENCH_BUSY_POLL_US:-50}"
"$bin" demo --listen 127.0.0.1:0 --db "$work/demo.db" --no-access-log --threads "$threads" \
  --busy-poll-us "$busy" 2> "$work/demo.err" &
"$bin" serve --listen 127.0.0.1:0 --db "$work/sleeping.db" --no-access-log --threads "$threads" \
  2> "$work/sleeping.err" &
for _ in $(seq 100); do grep -q "schemagate listening" "$work/demo.err" && break; sleep 0.1; done
for _ in $(seq 100); do grep -q "schemagate listening" "$work/sleeping.err" && break; sleep 0.1; done
gateway=$(grep -o 'schemagate listening on http://127.0.0.1:[0-9]*' "$work/demo.err" | grep -o '[0-9]*$')
sleeping=$(grep -o 'schemagate listening on http://127.0.0.1:[0-9]*' "$work/sleeping.err" | grep -o '[0-9]*$')
agent=$(grep -o 'photo_retouch.*agent at http://127.0.0.1:[0-9]*' "$work/demo.err" | grep -o '[0-9]*$')

for port in "$gateway" "$sleeping"; do
curl -sf "http://127.0.0.1:$port/agents" -H 'Content-Type: application/json' -d '{
  "id": "photo", "name": "Photo retouch", "description": "Retouches photos.",
  "operations": [{"name": "retouch", "endpoint": "http://127.0.0.1:'"$agent"'/execute",
    "input_schema": {"type": "object", "properties": {"skin_smoothing": {"type": "integer", "minimum": 0, "maximum": 10},
                     "filter_style": {"enum": ["none", "vintage", "cinematic", "warm", "cool"]}}, "additionalProperties": false},
    "output_schema": {"type": "object", "required": ["job_id", "status", "applied"]}}]}' >/dev/null
done

cat > "$work/nginx.conf" <<CONF
worker_processes $threads;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  upstream agent { server 127.0.0.1:$agent; keepalive 64; }
  server {
    listen 127.0.0.1:0;
    location / { proxy_pass http://agent; proxy_http_version 1.1; proxy_set_header Connection ""; }
  }
}
CONF
# nginx cannot listen on port 0: pick a free port first.
nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
sed -i "s/listen 127.0.0.1:0;/listen 127.0.0.1:$nginx_port;/" "$work/nginx.conf"
nginx -c "$work/nginx.conf" -p "$work" -g 'daemon off;' &
sleep 0.5

cat > "$work/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"skin_smoothing": 3, "filter_style": "vintage"}'
wrk.headers["Content-Type"] = "application/json"
LUA
cat > "$work/payload.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"schema_id": "photo_retouch_v2", "payload": {"skin_smoothing": 3, "filter_style": "vintage"}}'
wrk.headers["Content-Type"] = "application/json"
LUA

run() {  # name url [connections] [script] -> "name rps p50 p99"
  local out c="${3:-$conns}"
  out=$(wrk -t"$(( c < 2 ? 1 : 2 ))" -c"$c" -d"${secs}s" --latency -s "$work/${4:-post}.lua" "$2")
  local rps p50 p99
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  echo "$1 $rps $p50 $p99"
}
rounds="${SCHEMAGATE_BENCH_ROUNDS:-3}"
direct=$(run direct "http://127.0.0.1:$agent/execute")
round_lines=()
for r in $(seq "$rounds"); do
  proxied=$(run nginx "http://127.0.0.1:$nginx_port/execute")
  gated=$(run schemagate "http://127.0.0.1:$gateway/agents/photo/invoke")
  round_lines+=("$proxied" "$gated")
done
scenario=$(run scenario "http://127.0.0.1:$gateway/agents/photo-retouch/invoke")
payloads=$(run payloads "http://127.0.0.1:$gateway/scenarios/photo_retouch/payloads" "$conns" payload)
direct1=$(run direct "http://127.0.0.1:$agent/execute" 1)
proxied1=$(run nginx "http://127.0.0.1:$nginx_port/execute" 1)
gated1=$(run schemagate "http://127.0.0.1:$gateway/agents/photo/invoke" 1)
sleeping1=$(run 'no-busy-poll' "http://127.0.0.1:$sleeping/agents/photo/invoke" 1)

table() {
  printf '%-12s %12s %10s %10s\n' path 'requests/s' p50 p99
  for line in "$@"; do
    set -- $line
    printf '%-12s %12s %10s %10s\n' "$1" "$2" "$3" "$4"
  done
}
echo "POST of a 50-byte JSON body; schemagate $threads I/O threads (--busy-poll-us $busy), nginx $threads workers; 2 cores shared by load and servers"
echo "wrk -c$conns -d${secs}s ($rounds rounds of nginx and schemagate in turn; the last shown here):"
table "$direct" "$proxied" "$gated" "$scenario" "$payloads"
echo "rounds (requests/s):"
for ((i = 0; i < ${#round_lines[@]}; i += 2)); do
  n=$(echo "${round_lines[i]}" | awk '{print $2}'); g=$(echo "${round_lines[i+1]}" | awk '{print $2}')
  echo "  round $((i / 2 + 1)): nginx $n, schemagate $g, ratio $(python3 -c "print(f'{$g / $n:.2f}')")"
done
echo "wrk -c1 -d${secs}s:"
table "$direct1" "$proxied1" "$gated1" "$sleeping1"
python3 - "$direct" "$proxied" "$gated" "$scenario" "$payloads" "$direct1" "$proxied1" "$gated1" "$sleeping1" "${round_lines[@]}" <<'PY'
import statistics, sys
def parse(line):
    name, rps, p50, p99 = line.split()
    def us(t):
        for unit, f in (("us", 1), ("ms", 1000), ("s", 1e6)):
            if t.endswith(unit): return float(t[:-len(unit)]) * f
        return float(t)
    return float(rps), us(p50), us(p99)
d, n, g, s, p, d1, n1, g1, z1 = (parse(a) for a in sys.argv[1:10])
rounds = [parse(a) for a in sys.argv[10:]]
ratio = statistics.median(rounds[i + 1][0] / rounds[i][0] for i in range(0, len(rounds), 2))
print(f"schemagate throughput / nginx throughput: {ratio:.2f}x (median of {len(rounds) // 2} rounds; scenario operation {s[0] / n[0]:.2f}x, {s[0] / g[0]:.2f}x of a plain operation; payloads {p[0] / g[0]:.2f}x)")
print(f"added p50 at one connection vs direct: schemagate {g1[1] - d1[1]:.0f} us (without busy polling {z1[1] - d1[1]:.0f} us), nginx {n1[1] - d1[1]:.0f} us")
PY
