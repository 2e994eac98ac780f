// What the A2A face costs over the plain gateway, side by side in one run:
//   direct   POST to the agent itself
//   invoke   POST /agents/{id}/invoke (validated in and out)
//   a2a      JSON-RPC SendMessage with a schema-tagged data part (validated in and out, a task
//            stored with its history and artifacts)
// Usage: node bench/a2a_overhead.mjs [requests=4000] [concurrency=8]
// Needs the release build (build/release/apps/schemagate/schemagate).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Agent, request as send } from 'node:http';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const total = Number(process.argv[2] ?? 4000);
const concurrency = Number(process.argv[3] ?? 8);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binary = process.env.SCHEMAGATE_BINARY ?? join(root, 'build/release/apps/schemagate/schemagate');

const keepAlive = new Agent({ keepAlive: true, maxSockets: concurrency });

function listen(srv) {
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv.address().port)));
}

function request(url, body, headers = {}) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const u = new URL(url);
    const out = send({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', agent: keepAlive,
      headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data), ...headers } },
    (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    out.on('error', reject);
    out.end(data);
  });
}

async function measure(name, url, body, headers) {
  const latencies = [];
  let next = 0;
  let failures = 0;
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) {
      next++;
      const t0 = process.hrtime.bigint();
      const r = await request(url, body, headers);
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e3);
      if (r.status !== 200 || r.text.includes('"error"')) failures++;
    }
  }));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  const rate = total / seconds;
  return { name, rate, p50: latencies[Math.floor(latencies.length / 2)], p99: latencies[Math.floor(latencies.length * 0.99)], failures };
}

const agent = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const { a, b } = JSON.parse(body);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ winner: a, probability: 0.6, explanation: `${a} beats ${b}` }));
  });
});
const agentPort = await listen(agent);
const dir = mkdtempSync(join(tmpdir(), 'schemagate-a2a-bench-'));
const server = spawn(binary, ['serve', '--listen', '127.0.0.1:0', '--db', join(dir, 'db.sqlite'), '--embedder', 'none',
  '--no-access-log'], { stdio: ['ignore', 'ignore', 'pipe'] });
const base = await new Promise((resolve, reject) => {
  let err = '';
  server.stderr.on('data', (d) => {
    err += d;
    const m = /listening on (http:\/\/\S+)/.exec(err);
    if (m) resolve(m[1]);
  });
  server.on('exit', (code) => reject(new Error(`schemagate exited ${code}: ${err}`)));
});

const input = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } }, required: ['a', 'b'], additionalProperties: false };
const output = { type: 'object', properties: { winner: { type: 'string' }, probability: { type: 'number' }, explanation: { type: 'string' } }, required: ['winner', 'probability', 'explanation'] };
const reg = await request(`${base}/agents`, { id: 'judge', name: 'Judge', description: 'Judges fights.', operations: [{
  name: 'fight', endpoint: `http://127.0.0.1:${agentPort}/fight`, input_schema: input, output_schema: output,
  input_schema_name: 'fightComparison', output_schema_name: 'fightResponse' }] });
if (reg.status !== 201) throw new Error(reg.text);

const data = { a: 'Lion', b: 'Tiger' };
const rpc = { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER',
  parts: [{ data, mediaType: 'application/json;schema=fightComparison' }] } } };
await measure('warm-up', `${base}/a2a/judge`, rpc, { 'A2A-Version': '1.0' });
const rows = [
  await measure('direct', `http://127.0.0.1:${agentPort}/fight`, data),
  await measure('invoke', `${base}/agents/judge/invoke`, data),
  await measure('a2a SendMessage', `${base}/a2a/judge`, rpc, { 'A2A-Version': '1.0' }),
];
console.log(`${total} requests, ${concurrency} concurrent, one run (agent, schemagate and this client share the machine)`);
for (const r of rows) {
  console.log(`${r.name.padEnd(16)} ${r.rate.toFixed(0).padStart(7)} req/s  p50 ${r.p50.toFixed(0).padStart(6)} us  p99 ${r.p99.toFixed(0).padStart(6)} us  failures ${r.failures}`);
}
console.log(`a2a / invoke throughput: ${(rows[2].rate / rows[1].rate).toFixed(2)}x`);
server.kill('SIGTERM');
agent.close();
keepAlive.destroy();
rmSync(dir, { recursive: true, force: true });
