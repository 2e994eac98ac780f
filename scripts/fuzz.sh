#!/usr/bin/env bash
# Runs every libFuzzer harness in fuzz/ (Clang, ASan + UBSan) for SECONDS each, seeded from
# ../shared/testdata (JSON-Schema-Test-Suite schemas, JCS vectors), the example templates and the
# tests' own hostile corpus (tests/interop/data/hostile). The corpora grow in build/fuzz/corpus;
# a crash or a failed check leaves its input in build/fuzz/findings and fails the run.
# Prints executions, corpus size and findings per harness.
# Usage: bash scripts/fuzz.sh [SECONDS] [HARNESS...]
#   FUZZ_SEED=N  the mutation sequence's seed (default: a new one each run); the test script
#                fixes it, so that CI repeats the same exploration instead of a new one each time
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
shift || true
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y -q clang libclang-rt-14-dev >/dev/null
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
out=build/fuzz
mkdir -p "$out/corpus" "$out/findings"
shared=../shared/testdata
python3 - "$out/corpus" "$shared" <<'PY'
import json, os, sys, glob, hashlib
corpus, shared = sys.argv[1], sys.argv[2]
TEXT = ('json_pointer', 'semver', 'http_head')  # harnesses that take text, not JSON
def seed(harness, data):
    d = os.path.join(corpus, harness)
    os.makedirs(d, exist_ok=True)
    if not isinstance(data, bytes) and not (harness in TEXT and isinstance(data, str)):
        data = json.dumps(data)
    if isinstance(data, str): data = data.encode('latin1' if harness == 'http_head' else 'utf8', 'replace')
    open(os.path.join(d, 'seed-' + hashlib.sha1(data).hexdigest()[:16]), 'wb').write(data)
for f in glob.glob(os.path.join(shared, 'JSON-Schema-Test-Suite/tests/draft2020-12/*.json')) + \
         glob.glob(os.path.join(shared, 'JSON-Schema-Test-Suite/tests/draft7/*.json')):
    for group in json.load(open(f)):
        seed('jsonschema', group['schema'])
        for t in group['tests'][:2]:
            seed('json_parse', t['data'])
for f in glob.glob(os.path.join(shared, 'jcs/testdata/input/*.json')):
    text = open(f, 'rb').read()
    seed('jcs', text); seed('json_parse', text)
for f in glob.glob('examples/templates/*.json'):
    seed('template', open(f, 'rb').read())
for f in sorted(glob.glob('tests/interop/data/hostile/*.json')):
    for c in json.load(open(f))['cases']:
        if 'raw' in c: seed('http_head', c['raw'])
        body = c.get('body')
        if body is None: continue
        path = c.get('path', '')
        if '/versions/' in path and path.startswith('/scenarios/'): seed('template', body)
        elif path.startswith('/agents'): seed('agent_card', body)
        elif path.startswith('/mappings/'): seed('mapping', body)
        elif path.startswith('/a2a/'):
            seed('a2a_message', body)
            msg = body.get('params', body).get('message') if isinstance(body, dict) and isinstance(body.get('params', body), dict) else None
            if msg is not None: seed('a2a_message', msg)
        seed('json_parse', body)
seed('agent_card', {"id": "translator", "name": "Translator", "description": "Translates text.", "capabilities": ["translation"],
                    "operations": [{"name": "translate", "description": "Translates.", "endpoint": "http://127.0.0.1:9/t",
                                    "input_schema": {"type": "object"}, "scenario": "flight_booking", "version": "1.0.0"}],
                    "visibility": {"groups": ["acme"]}})
seed('agent_card', {"name": "A2A agent", "description": "Speaks A2A.", "url": "http://127.0.0.1:9/a2a", "version": "1.0.0",
                    "protocolVersion": "0.3.0", "capabilities": {"streaming": True}, "defaultInputModes": ["application/json"],
                    "defaultOutputModes": ["application/json"], "skills": [{"id": "s", "name": "S", "description": "A skill.", "tags": ["t"]}]})
seed('a2a_message', {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}, {"data": {"a": 1}}, {"url": "http://x/f", "mediaType": "text/plain"}]})
seed('a2a_message', {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t1", "contextId": "c1", "status": {"state": "TASK_STATE_COMPLETED"}}}})
seed('a2a_message', {"jsonrpc": "2.0", "id": 1, "result": {"kind": "task", "id": "t1", "contextId": "c1", "status": {"state": "completed"}}})
for m in ([{"op": "add", "path": "/seat_preference", "default": "no preference"}],
          [{"op": "rename", "from": "/a", "to": "/b"}, {"op": "remove", "path": "/c", "restore": 1}],
          [{"op": "derive", "path": "/d", "function": "concat", "from": ["/a", "/b"], "separator": " "}],
          [{"op": "in", "path": "/items", "steps": [{"op": "convert", "path": "/u", "table": {"a": "b"}}]}]):
    seed('mapping', {"contract": "c", "from": "1.0.0", "to": "1.1.0", "direction": "bidirectional", "operations": m,
                     "examples": [{"a": "x", "b": "y", "c": [1, 2]}]})
for p in ["", "/", "/a/b", "/a~1b/~0c", "/0/-", "#", "#/a%20b", "#/%7e0"]: seed('json_pointer', p)
for v in ["1.0.0", "0.0.1-rc.1", "1.2.3-alpha.10.beta+build.5", "10.20.30", "1.0.0-0A.is.legal"]: seed('semver', v)
seed('http_head', "POST /agents/x/invoke?a=1&b=%20 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
seed('http_head', "GET /a2a/agent/tasks/t1:cancel HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
PY
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(json_parse jcs json_pointer semver jsonschema template agent_card a2a_message mapping http_head)
printf '%-12s %12s %8s %9s\n' harness executions corpus findings
failed=0
for h in "${harnesses[@]}"; do
  mkdir -p "$out/corpus/$h"
  log="$out/findings/$h.log"
  set +e
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$out/fuzz/fuzz_$h" -seed="${FUZZ_SEED:-0}" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$out/findings/$h-" "$out/corpus/$h" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
  found=$(ls "$out/findings" | grep -c "^$h-" || true)
  printf '%-12s %12s %8s %9s\n' "$h" "$runs" "$(ls "$out/corpus/$h" | wc -l)" "$found"
  if [ $rc -ne 0 ]; then
    failed=1
    echo "fuzz_$h failed (exit $rc); the end of its log ($log):" >&2
    tail -40 "$log" >&2
  fi
done
exit $failed
