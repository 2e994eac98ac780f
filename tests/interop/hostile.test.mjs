// The bad-input corpus (issue 16): hostile requests kept as data in tests/interop/data/hostile/,
// each with the status (and error code) it must get from a real server. Raw cases go over a
// socket as the bytes given (malformed HTTP, smuggling); the others as HTTP requests with a body
// given as text, as JSON, or as base64 bytes. After each group the server must still answer
// /healthz at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSchemagate } from './schemagate_process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const dir = join(here, 'data/hostile');
const groups = readdirSync(dir).filter((f) => f.endsWith('.json')).sort()
  .map((f) => ({ file: f, ...JSON.parse(readFileSync(join(dir, f), 'utf8')) }));
const admin = 'hostile-admin-key-0123456789abcdef';
const keys = { admin };
let server, agent, port;

// Sends raw bytes; resolves to {status, body} of the first response, or {status: 0} when the
// server closes without one.
function raw(bytes) {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const finish = () => {
      socket.destroy();
      const text = data.toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (!m) return resolve({ status: 0, body: '' });
      const head = text.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
      const body = head < 0 ? '' : text.slice(head + 4, len ? head + 4 + Number(len[1]) : undefined);
      resolve({ status: Number(m[1]), body });
    };
    const timer = setTimeout(finish, 3000);
    socket.on('data', (d) => {
      data = Buffer.concat([data, d]);
      const text = data.toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      const len = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
      if (head >= 0 && len && data.length >= head + 4 + Number(len[1])) { clearTimeout(timer); finish(); }
    });
    socket.on('end', () => { clearTimeout(timer); finish(); });
    socket.on('error', (e) => { clearTimeout(timer); e.code === 'ECONNRESET' ? finish() : reject(e); });
    socket.write(bytes);
  });
}

async function send(c) {
  if (c.raw !== undefined || c.raw_base64 !== undefined) {
    return raw(c.raw_base64 !== undefined ? Buffer.from(c.raw_base64, 'base64') : Buffer.from(c.raw, 'latin1'));
  }
  const headers = { ...(c.headers ?? {}) };
  if (c.key) headers.Authorization = `Bearer ${keys[c.key] ?? c.key}`;
  let body;
  if (c.body_text !== undefined) body = c.body_text;
  else if (c.body_base64 !== undefined) body = Buffer.from(c.body_base64, 'base64');
  else if (c.body_repeat !== undefined) body = c.body_repeat.prefix + c.body_repeat.unit.repeat(c.body_repeat.times) + c.body_repeat.suffix;
  else if (c.body !== undefined) body = JSON.stringify(c.body);
  if (body !== undefined && !headers['Content-Type']) headers['Content-Type'] = 'application/json';
  const path = c.path_repeat ? c.path_repeat.prefix + c.path_repeat.unit.repeat(c.path_repeat.times) : c.path;
  const r = await fetch(server.base + path, { method: c.method ?? (body === undefined ? 'GET' : 'POST'), headers, body, redirect: 'manual' });
  return { status: r.status, body: await r.text() };
}

function codeOf(body) {
  try {
    const j = JSON.parse(body);
    return j?.error?.code;
  } catch {
    return undefined;
  }
}

before(async () => {
  server = await startSchemagate('serve', ['--max-body-bytes', '65536'], { SCHEMAGATE_ADMIN_KEY: admin });
  port = Number(new URL(server.base).port);
  agent = createServer((req, res) => {
    req.resume();
    req.on('end', () => { res.setHeader('Content-Type', 'application/json'); res.end('{"ok":true}'); });
  });
  await new Promise((resolve) => agent.listen(0, '127.0.0.1', resolve));
  const post = (path, body, method = 'POST') => fetch(server.base + path, {
    method, headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  const k = await post('/keys', { client_id: 'hostile-client', role: 'client' });
  assert.equal(k.status, 201);
  keys.client = (await k.json()).key;
  assert.equal((await post('/agents', {
    id: 'victim', name: 'Victim', description: 'Takes hostile input.',
    operations: [{ name: 'take', description: 'Takes a name.', endpoint: `http://127.0.0.1:${agent.address().port}/`,
      input_schema: { type: 'object', properties: { name: { type: 'string', maxLength: 64, pattern: '^[a-z]+$' } }, required: ['name'], additionalProperties: false } }],
  })).status, 201);
  assert.equal((await post('/scenarios/notes/versions/1.0.0', {
    schema_id: 'notes_v1', scenario: 'notes',
    keys: [
      { key_name: 'text', key_type: 'string', required: true, semantic_description: 'The note.' },
      { key_name: 'other', key_type: 'string', required: false, default_value: null, semantic_description: 'Anything else.' },
    ],
  }, 'PUT')).status, 201);
});

after(() => {
  server?.stop();
  agent?.close();
});

test('the corpus holds at least 200 hostile requests', () => {
  const n = groups.reduce((sum, g) => sum + g.cases.length, 0);
  assert.ok(n >= 200, `${n} cases`);
});

for (const g of groups) {
  describe(`${g.file}: ${g.about}`, () => {
    test('each request gets its status and error code, and the server stays healthy', async () => {
      const wrong = [];
      for (const c of g.cases) {
        const r = await send(c);
        const code = c.code !== undefined ? codeOf(r.body) : undefined;
        if (r.status !== c.status || (c.code !== undefined && code !== c.code)) {
          wrong.push(`${c.name}: expected ${c.status} ${c.code ?? ''}, got ${r.status} ${code ?? ''} ${r.body.slice(0, 160)}`);
        }
      }
      const health = await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(1000) });
      assert.equal(health.status, 200, 'the server answers /healthz after the group');
      assert.deepEqual(wrong, []);
    });
  });
}
