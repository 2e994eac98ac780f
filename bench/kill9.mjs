// Durability under kill -9: N cycles of concurrent acknowledged writes to a real server, a
// SIGKILL at a random moment, a restart, and a check that every write the server acknowledged
// (201) is there. Each cycle then deletes what it wrote (so the store stays the same size over a
// thousand cycles) and the next restart checks that every acknowledged deletion (204) held.
// Prints one row per 10% of the cycles and a summary; exits 1 on any loss.
// Usage: node bench/kill9.mjs CYCLES [--db postgres://...]   (SCHEMAGATE_BINARY names the binary)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const cycles = Number(process.argv[2] ?? 10);
const dbArg = process.argv.indexOf('--db');
const binary = process.env.SCHEMAGATE_BINARY;
const admin = 'kill9-admin-key-0123456789abcdef';
const dir = mkdtempSync(join(tmpdir(), 'schemagate-kill9-'));
const db = dbArg > 0 ? process.argv[dbArg + 1] : join(dir, 'kill9.sqlite');
const writers = 4;

const freePort = () => new Promise((resolve) => {
  const s = createServer();
  s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function start(port) {
  const t0 = Date.now();
  const child = spawn(binary, ['serve', '--listen', `127.0.0.1:${port}`, '--db', db, '--no-access-log',
    '--vector-graph-file', 'none'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, SCHEMAGATE_ADMIN_KEY: admin } });
  let err = '';
  child.stderr.on('data', (d) => { err += d; });
  for (;;) {
    if (child.exitCode !== null) throw new Error(`schemagate exited ${child.exitCode}:\n${err}`);
    if (err.includes('listening on')) return { child, ms: Date.now() - t0 };
    if (Date.now() - t0 > 120000) throw new Error(`schemagate did not start:\n${err}`);
    await sleep(10);
  }
}

const call = (port, method, path, body) => fetch(`http://127.0.0.1:${port}${path}`, {
  method, headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
  body: body === undefined ? undefined : JSON.stringify(body),
});

const port = await freePort();
let server = await start(port);
let acknowledged = 0, lost = 0, refused = 0, deleted = 0, revived = 0;
let deletedLastCycle = [];
const restarts = [];
const t0 = Date.now();
console.log(`kill -9 durability: ${cycles} cycles, ${writers} concurrent writers, store ${dbArg > 0 ? 'postgres' : 'sqlite'}`);
console.log('cycle  acknowledged  lost  undone  restart ms');
for (let cycle = 1; cycle <= cycles; cycle++) {
  const acked = [];
  let stop = false;
  const work = Array.from({ length: writers }, async (_, w) => {
    for (let i = 0; !stop; i++) {
      const id = `c${cycle}-w${w}-${i}`;
      try {
        const r = await call(port, 'POST', '/agents', { id, name: id, description: `Written in cycle ${cycle} by writer ${w}.`, endpoint: 'http://127.0.0.1:9/x' });
        if (r.status === 201) acked.push(id); else refused++;
        await r.arrayBuffer();
      } catch { return; }  // the server is gone
    }
  });
  await sleep(100 + Math.random() * 900);
  server.child.kill('SIGKILL');
  stop = true;
  await Promise.all(work);
  await new Promise((r) => (server.child.exitCode !== null || server.child.signalCode ? r() : server.child.once('exit', r)));
  server = await start(port);
  restarts.push(server.ms);
  let missing = 0;
  for (const id of acked) {
    const r = await call(port, 'GET', `/agents/${id}`);
    if (r.status !== 200) missing++;
    await r.arrayBuffer();
  }
  let back = 0;
  for (const id of deletedLastCycle) {
    const r = await call(port, 'GET', `/agents/${id}`);
    if (r.status !== 404) back++;
    await r.arrayBuffer();
  }
  acknowledged += acked.length;
  lost += missing;
  revived += back;
  if (missing) console.log(`cycle ${cycle}: ${missing} of ${acked.length} acknowledged writes LOST`);
  if (back) console.log(`cycle ${cycle}: ${back} of ${deletedLastCycle.length} acknowledged deletions UNDONE`);
  deletedLastCycle = [];
  for (const id of acked) {
    const r = await call(port, 'DELETE', `/agents/${id}`);
    if (r.status === 204) deletedLastCycle.push(id);
    await r.arrayBuffer();
  }
  deleted += deletedLastCycle.length;
  if (cycle % Math.max(1, Math.round(cycles / 10)) === 0 || cycle === cycles) {
    console.log(`${String(cycle).padStart(5)}  ${String(acknowledged).padStart(12)}  ${String(lost).padStart(4)}  ${String(revived).padStart(7)}  ${String(server.ms).padStart(10)}`);
  }
}
server.child.kill('SIGTERM');
restarts.sort((a, b) => a - b);
console.log(`${cycles} cycles in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${acknowledged} writes acknowledged, ${lost} lost, ${refused} refused; ${deleted} deletions acknowledged, ${revived} undone; restart p50 ${restarts[Math.floor(restarts.length / 2)]} ms, max ${restarts[restarts.length - 1]} ms`);
rmSync(dir, { recursive: true, force: true });
process.exit(lost || revived ? 1 : 0);
