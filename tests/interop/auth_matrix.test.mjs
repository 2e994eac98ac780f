// The authorization matrix (issue 16): every route the server serves, asked by six callers (no
// key, a wrong key, a client, a publisher, the admin, another tenant's client), must answer the
// status tests/interop/data/auth_matrix.json gives. The route list comes from the server itself
// (schemagate serve --list-routes), so a new route without a row fails here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSchemagate } from './schemagate_process.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const matrix = JSON.parse(readFileSync(join(here, 'data/auth_matrix.json'), 'utf8'));
const admin = 'matrix-admin-key-0123456789abcdef';
const template = {
  schema_id: 'notes_v1', scenario: 'notes',
  keys: [
    { key_name: 'text', key_type: 'string', required: true, semantic_description: 'The note.' },
    { key_name: 'other', key_type: 'string', required: false, default_value: null, semantic_description: 'Anything else.' },
  ],
};
let server, agent;
const keys = { none: null, wrong: 'sg_not-a-key-that-exists-anywhere', admin };

async function send(method, path, { key, body, headers = {} } = {}) {
  const h = { ...headers };
  if (key) h.Authorization = `Bearer ${key}`;
  if (body !== undefined) h['Content-Type'] = 'application/json';
  const r = await fetch(server.base + path, {
    method, headers: h, redirect: 'manual',
    body: body === undefined ? undefined : JSON.stringify(body === '$template' ? template : body),
  });
  await r.arrayBuffer();  // streams end with their first event here: the status is what counts
  return r.status;
}

before(async () => {
  server = await startSchemagate('serve', [], { SCHEMAGATE_ADMIN_KEY: admin });
  agent = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => { text += d; });
    req.on('end', () => { res.setHeader('Content-Type', 'application/json'); res.end(JSON.stringify({ echo: text.length })); });
  });
  await new Promise((resolve) => agent.listen(0, '127.0.0.1', resolve));
  const make = async (client_id, role, groups) => {
    const r = await fetch(`${server.base}/keys`, {
      method: 'POST', headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_id, role, groups }),
    });
    assert.equal(r.status, 201);
    return (await r.json()).key;
  };
  keys.client = await make('acme-client', 'client', ['acme']);
  keys.publisher = await make('acme-publisher', 'publisher', ['acme']);
  keys.other = await make('globex-client', 'client', ['globex']);
  assert.equal(await send('POST', '/agents', {
    key: admin,
    body: {
      id: 'acme-echo', name: 'Acme echo', description: 'Echoes what Acme sends.',
      visibility: { groups: ['acme'] },
      operations: [{ name: 'echo', description: 'Echoes.', input_schema: { type: 'object' },
        endpoint: `http://127.0.0.1:${agent.address().port}/` }],
    },
  }), 201);
  assert.equal(await send('PUT', '/scenarios/notes/versions/1.0.0', { key: admin, body: '$template' }), 201);
});

after(() => {
  server?.stop();
  agent?.close();
});

test('every route served has a row in the matrix, and every row a route', () => {
  const served = execFileSync(process.env.SCHEMAGATE_BINARY, ['serve', '--list-routes'], { encoding: 'utf8' })
    .split('\n').filter(Boolean);
  const rows = Object.keys(matrix.routes);
  assert.deepEqual(served.filter((r) => !rows.includes(r)), [], 'routes without a row in auth_matrix.json');
  assert.deepEqual(rows.filter((r) => !served.includes(r)), [], 'rows for routes the server does not serve');
});

test('each caller gets the status the matrix gives, on every route', async () => {
  const wrong = [];
  let checked = 0;
  for (const [route, row] of Object.entries(matrix.routes)) {
    const method = route.split(' ')[0];
    const got = [];
    for (const role of matrix.roles) {
      got.push(await send(method, row.path, { key: keys[role], body: row.body, headers: row.headers }));
      checked++;
    }
    if (got.join() !== row.expect.join()) wrong.push(`${route}: expected ${row.expect.join(' ')}, got ${got.join(' ')}`);
  }
  assert.deepEqual(wrong, [], `${wrong.length} of ${Object.keys(matrix.routes).length} routes answer otherwise (roles: ${matrix.roles.join(' ')})`);
  assert.equal(checked, matrix.roles.length * Object.keys(matrix.routes).length);
  // The server is still well after every hostile caller.
  assert.equal(await send('GET', '/healthz'), 200);
});
