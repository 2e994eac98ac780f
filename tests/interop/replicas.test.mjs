// Two schemagate replicas on one PostgreSQL server (started by scripts/test.sh, named by
// SCHEMAGATE_TEST_POSTGRES_URL): what one commits, the other serves; kill -9 of a replica loses
// no acknowledged write; both survive a restart of PostgreSQL; idempotency keys hold across them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSchemagate } from './schemagate_process.mjs';

const url = process.env.SCHEMAGATE_TEST_POSTGRES_URL;
const skip = !url && 'SCHEMAGATE_TEST_POSTGRES_URL is not set (scripts/test.sh starts PostgreSQL)';
const admin = 'replicas-admin-key-0123456789abcdef';
const here = dirname(fileURLToPath(import.meta.url));
const database = `replicas_${process.pid}`;
let a, b, db, agent, agentCalls = 0;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
function psql(sql) {
  execFileSync('psql', [url, '-q', '-c', sql], { stdio: ['ignore', 'ignore', 'pipe'] });
}
async function call(replica, method, path, body, headers = {}) {
  const r = await fetch(replica.base + path, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${admin}`, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, headers: r.headers, body: await r.json().catch(() => null) };
}
const card = (id, description) => ({ id, name: id, description, endpoint: 'http://127.0.0.1:9/x', inputs: { text: 'string' } });

before(async () => {
  if (skip) return;
  psql(`DROP DATABASE IF EXISTS ${database}`);
  psql(`CREATE DATABASE ${database}`);
  db = `${url.slice(0, url.lastIndexOf('/'))}/${database}`;
  const env = { SCHEMAGATE_ADMIN_KEY: admin };
  a = await startSchemagate('serve', ['--db', db], env);
  b = await startSchemagate('serve', ['--db', db], env);
  agent = createServer((req, res) => {
    agentCalls++;
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ echo: JSON.parse(body).text, call: agentCalls }));
    });
  });
  await new Promise((resolve) => agent.listen(0, '127.0.0.1', resolve));
});

after(() => {
  a?.stop();
  b?.stop();
  agent?.close();
  if (!skip) psql(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
});

test('a registration on replica A is found by search on replica B within a second', { skip }, async () => {
  const t0 = Date.now();
  assert.equal((await call(a, 'POST', '/agents', card('invoice-fr-en', 'Translates invoices from French to English.'))).status, 201);
  let found = false;
  while (!found && Date.now() - t0 < 3000) {
    const r = await call(b, 'POST', '/agents/search', { query: 'translate my French invoices into English' });
    found = r.body.results.some((x) => x.id === 'invoice-fr-en');
    if (!found) await sleep(50);
  }
  const ms = Date.now() - t0;
  assert.ok(found && ms < 1000, `found on B after ${ms} ms`);
  // A removal travels the same way.
  assert.equal((await call(b, 'DELETE', '/agents/invoice-fr-en')).status, 204);
  await sleep(600);
  assert.equal((await call(a, 'GET', '/agents/invoice-fr-en')).status, 404);
});

test('a key created on one replica works on the other, and a revoked one stops within a second', { skip }, async () => {
  const key = (await call(a, 'POST', '/keys', { client_id: 'carol', role: 'publisher' })).body.key;
  const r = await call(b, 'POST', '/agents', card('carols-agent', 'Carol registers this from replica B.'), { Authorization: `Bearer ${key}` });
  assert.equal(r.status, 201);
  assert.equal((await call(a, 'DELETE', '/keys/carol')).status, 204);
  const t0 = Date.now();
  let status = 200;
  while (status !== 401 && Date.now() - t0 < 3000) {
    status = (await call(b, 'PUT', '/agents/carols-agent/credentials', { headers: {} }, { Authorization: `Bearer ${key}` })).status;
    if (status !== 401) await sleep(20);
  }
  const ms = Date.now() - t0;
  assert.ok(status === 401 && ms < 1000, `the revoked key still worked on B after ${ms} ms (status ${status})`);
  assert.equal((await call(a, 'DELETE', '/keys/carol')).status, 404);
});

test('an idempotency key is honoured whichever replica receives the repeat', { skip }, async () => {
  const port = agent.address().port;
  assert.equal((await call(a, 'POST', '/agents', { ...card('echo', 'Echoes text.'), endpoint: `http://127.0.0.1:${port}/` })).status, 201);
  await sleep(400);
  const callsBefore = agentCalls;
  const first = await call(a, 'POST', '/agents/echo/invoke', { text: 'once' }, { 'Idempotency-Key': 'pay-42' });
  assert.equal(first.status, 200, JSON.stringify(first.body));
  const repeat = await call(b, 'POST', '/agents/echo/invoke', { text: 'once' }, { 'Idempotency-Key': 'pay-42' });
  assert.equal(repeat.status, 200, JSON.stringify(repeat.body));
  assert.equal(repeat.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(repeat.body, first.body);
  assert.equal(agentCalls - callsBefore, 1, 'the agent was called once');
});

test('a daily quota holds for a client across replicas', { skip }, async () => {
  const port = agent.address().port;
  assert.equal((await call(a, 'POST', '/agents', { ...card('quota-echo', 'Echoes text.'), endpoint: `http://127.0.0.1:${port}/` })).status, 201);
  await sleep(400);
  const key = (await call(a, 'POST', '/keys', { client_id: 'dave', role: 'client', rate_limit: { requests_per_day: 5 } })).body.key;
  const statuses = [];
  for (let i = 0; i < 8; i++) {
    const r = await call(i % 2 ? b : a, 'POST', '/agents/quota-echo/invoke', { text: 'q' }, { Authorization: `Bearer ${key}` });
    statuses.push(r.status);
  }
  assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
});

test('a rate limit holds within 10% across two replicas', { skip }, async () => {
  const key = (await call(a, 'POST', '/keys', { client_id: 'erin', role: 'client', rate_limit: { requests_per_second: 10, burst: 10 } })).body.key;
  await sleep(1500);  // both replicas have counted each other (heartbeats every second)
  let ok = 0, limited = 0;
  for (let i = 0; i < 30; i++) {
    const r = await call(i % 2 ? b : a, 'POST', '/agents/quota-echo/invoke', { text: 'r' }, { Authorization: `Bearer ${key}` });
    if (r.status === 200) ok++;
    if (r.status === 429) limited++;
  }
  // A burst of 10 across the cluster (5 per replica), plus what refills while the loop runs.
  assert.ok(ok >= 9 && ok <= 12, `${ok} calls passed, ${limited} were limited`);
});

test('a template endpoint and a patch set on replica A change what replica B does with payloads within a second', { skip }, async () => {
  const template = {
    schema_id: 'notes_v1', scenario: 'notes',
    keys: [
      { key_name: 'text', key_type: 'string', required: true, semantic_description: 'The note.' },
      { key_name: 'other', key_type: 'string', required: false, default_value: null, semantic_description: 'Anything else.' },
    ],
  };
  assert.equal((await call(a, 'PUT', '/scenarios/notes/versions/1.0.0', template)).status, 201);
  const submit = () => call(b, 'POST', '/scenarios/notes/payloads', { schema_id: 'notes_v1', payload: { text: 'hello' } });
  // B answers within a second of each change on A (its cached view of the scenario follows).
  const until = async (what, done) => {
    const t0 = Date.now();
    let r;
    do {
      r = await submit();
      if (!done(r)) await sleep(20);
    } while (!done(r) && Date.now() - t0 < 3000);
    assert.ok(done(r) && Date.now() - t0 < 1000, `${what}: B still answered ${JSON.stringify(r.body)} after ${Date.now() - t0} ms`);
  };
  await until('published on A', (r) => r.status === 200 && r.body.status === 'accepted');
  const port = agent.address().port;
  assert.equal((await call(a, 'PUT', '/scenarios/notes/endpoint', { endpoint: `http://127.0.0.1:${port}/` })).status, 200);
  await until('bound to an agent on A', (r) => r.status === 200 && r.body.echo === 'hello');
  const patch = await call(a, 'POST', '/scenarios/notes/patches', {
    parent_schema_id: 'notes_v1',
    new_keys: [{ key_name: 'mood', key_type: 'string', required: false, semantic_description: 'How the writer feels.' }],
  });
  assert.equal(patch.status, 201, JSON.stringify(patch.body));
  await until('patched on A', (r) => r.status === 200 && r.body.schema_update_suggestion?.new_keys?.[0]?.key_name === 'mood');
});

test('kill -9 of a replica mid-write loses no acknowledged write', { skip }, async () => {
  const acknowledged = [];
  let stop = false;
  const writers = [0, 1, 2, 3].map(async (w) => {
    for (let i = 0; !stop; i++) {
      const id = `burst-${w}-${i}`;
      try {
        const r = await call(a, 'POST', '/agents', card(id, `Burst agent ${w} ${i}.`));
        if (r.status === 201) acknowledged.push(id);
      } catch { return; }  // the replica is gone
    }
  });
  while (acknowledged.length < 60) await sleep(10);
  a.stop('SIGKILL');
  stop = true;
  await Promise.all(writers);
  await sleep(600);
  for (const id of acknowledged) {
    assert.equal((await call(b, 'GET', `/agents/${id}`)).status, 200, `${id} was acknowledged by A but B does not have it`);
  }
  a = await startSchemagate('serve', ['--db', db], { SCHEMAGATE_ADMIN_KEY: admin });
  assert.equal((await call(a, 'GET', `/agents/${acknowledged[0]}`)).status, 200);
});

test('both replicas survive a restart of PostgreSQL', { skip: skip || (!process.env.PG_TEST_DIR && 'PG_TEST_DIR is not set') }, async () => {
  execFileSync('bash', [join(here, '../../scripts/pg-test-cluster.sh'), 'restart', process.env.PG_TEST_DIR]);
  for (const [replica, id] of [[a, 'after-restart-a'], [b, 'after-restart-b']]) {
    let status = 0;
    for (let i = 0; i < 50 && status !== 201; i++) {
      status = (await call(replica, 'POST', '/agents', card(id, 'Registered after the database restarted.'))).status;
      if (status !== 201) { assert.equal(status, 503); await sleep(100); }
    }
    assert.equal(status, 201);
  }
  await sleep(600);
  assert.equal((await call(a, 'GET', '/agents/after-restart-b')).status, 200);
  assert.equal((await call(b, 'GET', '/agents/after-restart-a')).status, 200);
});
