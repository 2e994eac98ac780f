// Soak: MINUTES of mixed traffic against `schemagate demo` (searches, validated invocations,
// scenario payloads, registrations and removals, reads) from 8 concurrent clients, with the
// server's resident memory, open files, request rate, p99 and errors sampled every 10 s and
// printed as a table. Exits 1 when a request failed with a 5xx or the connection broke.
// Usage: node bench/soak.mjs MINUTES   (SCHEMAGATE_BINARY names the binary)
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const minutes = Number(process.argv[2] ?? 1);
const binary = process.env.SCHEMAGATE_BINARY;
const dir = mkdtempSync(join(tmpdir(), 'schemagate-soak-'));
const child = spawn(binary, ['demo', '--listen', '127.0.0.1:0', '--db', join(dir, 'soak.sqlite'), '--no-access-log'],
  { stdio: ['ignore', 'ignore', 'pipe'] });
let err = '';
child.stderr.on('data', (d) => { err += d; });
const base = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`demo did not start:\n${err}`)), 60000);
  const poll = setInterval(() => {
    const m = /schemagate listening on (http:\/\/[^\s]+)/.exec(err);
    if (m) { clearInterval(poll); clearTimeout(timer); resolve(m[1]); }
  }, 20);
});
const agentPort = /photo_retouch.*agent at http:\/\/127\.0\.0\.1:(\d+)/.exec(err)[1];
const post = (path, body, method = 'POST') => fetch(base + path, {
  method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
});
await post('/agents', {
  id: 'photo', name: 'Photo retouch', description: 'Retouches photos.',
  operations: [{ name: 'retouch', description: 'Retouches.', endpoint: `http://127.0.0.1:${agentPort}/execute`,
    input_schema: { type: 'object', properties: { skin_smoothing: { type: 'integer', minimum: 0, maximum: 10 } } },
    output_schema: { type: 'object', required: ['job_id', 'status'] } }],
});

const queries = ['translate my invoices', 'retouch a portrait photo', 'book a flight to Paris', 'judge a fight',
  'summarise a contract', 'find a restaurant', 'weather tomorrow', 'convert currencies'];
const mix = [
  [40, (i) => post('/agents/search', { query: queries[i % queries.length] })],
  [30, () => post('/agents/photo/invoke', { skin_smoothing: 3 })],
  [10, () => post('/scenarios/photo_retouch/payloads', { schema_id: 'photo_retouch_v2', payload: { skin_smoothing: 2 } })],
  [10, async (i) => {
    const id = `soak-${i}`;
    const r = await post('/agents', { id, name: id, description: `Soak agent ${i} that comes and goes.`, endpoint: 'http://127.0.0.1:9/x' });
    await r.arrayBuffer();
    return post(`/agents/${id}`, undefined, 'DELETE');
  }],
  [10, (i) => (i % 2 ? fetch(`${base}/agents?limit=20`) : fetch(`${base}/agents/photo`))],
];
const total = mix.reduce((s, [w]) => s + w, 0);
let window = [], errors = 0, requests = 0, stop = false, n = 0;
const clients = Array.from({ length: 8 }, async () => {
  while (!stop) {
    const i = n++;
    let pick = i * 7919 % total, k = 0;
    while (pick >= mix[k][0]) pick -= mix[k++][0];
    const t = performance.now();
    try {
      const r = await mix[k][1](i);
      const body = await r.text();
      if (r.status >= 500) {
        errors++;
        if (errors <= 5) console.error(`error ${errors}: ${r.status} from ${r.url}: ${body.slice(0, 300)}`);
      }
    } catch (e) {
      errors++;
      if (errors <= 5) console.error(`error ${errors}: request ${k} failed: ${e.cause?.message ?? e.message}`);
    }
    window.push(performance.now() - t);
    requests++;
  }
});

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
const fds = () => readdirSync(`/proc/${child.pid}/fd`).length;
const rows = [];
console.log(`soak: ${minutes} min of mixed traffic, 8 clients; sampled every 10 s`);
console.log('   time  requests/s  p99 ms  errors  RSS MB  open files');
const t0 = Date.now();
while (Date.now() - t0 < minutes * 60000) {
  await new Promise((r) => setTimeout(r, Math.min(10000, minutes * 60000 - (Date.now() - t0))));
  const lat = window.sort((a, b) => a - b);
  window = [];
  const row = { t: (Date.now() - t0) / 1000, rps: lat.length / 10, p99: lat[Math.floor(lat.length * 0.99)] ?? 0, errors, rss: rssMb(), fds: fds() };
  rows.push(row);
  console.log(`${row.t.toFixed(0).padStart(6)}s  ${row.rps.toFixed(0).padStart(10)}  ${row.p99.toFixed(1).padStart(6)}  ${String(errors).padStart(6)}  ${row.rss.toFixed(1).padStart(6)}  ${String(row.fds).padStart(10)}`);
}
stop = true;
await Promise.all(clients);
child.kill('SIGTERM');
const first = rows[0], last = rows[rows.length - 1];
console.log(`${requests} requests, ${errors} errors; RSS ${first.rss.toFixed(1)} -> ${last.rss.toFixed(1)} MB (max ${Math.max(...rows.map((r) => r.rss)).toFixed(1)}); open files ${first.fds} -> ${last.fds}; worst p99 ${Math.max(...rows.map((r) => r.p99)).toFixed(1)} ms`);
const logged = err.split('\n').filter((l) => / (error|critical) /.test(l));
if (logged.length) console.log(`the server logged ${logged.length} errors, the last ones:\n${logged.slice(-5).join('\n')}`);
rmSync(dir, { recursive: true, force: true });
process.exit(errors ? 1 : 0);
