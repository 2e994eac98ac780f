// The MCP face against the official TypeScript SDK client (@modelcontextprotocol/sdk, pinned by
// package-lock.json) over Streamable HTTP, with `schemagate demo` as the server.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startSchemagate } from './schemagate_process.mjs';

const admin = 'mcp-test-admin-key-0123456789abcdef';
let base, server, aliceKey, bobKey;
const clients = [];

async function call(method, path, body, key = admin) {
  const r = await fetch(base + path, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, body: await r.json().catch(() => null) };
}

async function connect(key) {
  const client = new Client({ name: 'schemagate-interop', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: key ? { Authorization: `Bearer ${key}` } : {} },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function allTools(client) {
  const names = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    names.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return names;
}

before(async () => {
  server = await startSchemagate('demo', [], { SCHEMAGATE_ADMIN_KEY: admin });
  base = server.base;
  aliceKey = (await call('POST', '/keys', { client_id: 'alice', role: 'client' })).body.key;
  bobKey = (await call('POST', '/keys', { client_id: 'bob', role: 'client' })).body.key;
  const secret = await call('POST', '/agents', { id: 'secret-agent', name: 'Secret agent',
    description: 'Only bob may see this one.', endpoint: 'http://127.0.0.1:9/x',
    operations: [{ name: 'run', input_schema: { type: 'object', properties: { text: { type: 'string' } } } }],
    visibility: { clients: ['bob'] } });
  assert.equal(secret.status, 201, JSON.stringify(secret.body));
});

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  server?.stop();
});

test('without an API key the MCP face refuses the connection', async () => {
  await assert.rejects(connect(undefined), /401|Unauthorized/);
});

test('tools: search_agents, get_agent, each visible operation and scenario, with their schemas', async () => {
  const alice = await connect(aliceKey);
  assert.equal(alice.getServerVersion().name, 'schemagate');
  assert.ok(alice.getServerCapabilities().tools.listChanged);
  const tools = await allTools(alice);
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  for (const name of ['search_agents', 'get_agent', 'flight-booking.execute', 'fight-comparison.fight-comparison',
    'photo-retouch.execute', 'scenario.flight_booking']) {
    assert.ok(byName[name], `${name} in ${Object.keys(byName).join(', ')}`);
  }
  assert.ok(!Object.keys(byName).some((n) => n.startsWith('secret-agent')), 'alice does not see bob\'s agent');
  // The operation's JSON Schemas are the tool's: the template's for a scenario operation.
  const flight = byName['flight-booking.execute'].inputSchema;
  assert.equal(flight.type, 'object');
  assert.equal(flight.properties.passenger_count.maximum, 9);
  assert.deepEqual(byName['fight-comparison.fight-comparison'].outputSchema.required, ['winner', 'probability', 'explanation']);

  const bob = await connect(bobKey);
  assert.ok((await allTools(bob)).some((t) => t.name === 'secret-agent.run'), 'bob sees his agent');
});

test('search, then call: replies as structuredContent, violations as a tool error the model can read', async () => {
  const alice = await connect(aliceKey);
  const found = await alice.callTool({ name: 'search_agents', arguments: { query: 'fly to Shanghai' } });
  assert.equal(found.isError, false);
  assert.equal(found.structuredContent.results[0].id, 'flight-booking');
  assert.deepEqual(found.structuredContent.results[0].tools, ['flight-booking.execute']);

  const card = await alice.callTool({ name: 'get_agent', arguments: { id: 'fight-comparison' } });
  assert.equal(card.structuredContent.name, 'Fight comparison agent');
  const hidden = await alice.callTool({ name: 'get_agent', arguments: { id: 'secret-agent' } });
  assert.equal(hidden.isError, true);

  const booked = await alice.callTool({ name: 'flight-booking.execute', arguments: { origin: 'PEK', destination: 'SHA',
    departure_date: '2026-05-04', cabin_class: 'business', passenger_count: 1, other: 'window seat' } });
  assert.equal(booked.isError, false, JSON.stringify(booked));
  assert.equal(booked.structuredContent.status, 'confirmed');
  assert.match(booked.structuredContent.seat, /A$/);

  const refused = await alice.callTool({ name: 'flight-booking.execute', arguments: { origin: 'PEK', destination: 'SHA',
    departure_date: '2026-05-04', passenger_count: 12 } });
  assert.equal(refused.isError, true);
  assert.match(refused.content[0].text, /- \/passenger_count: must be <= 9, got 12/);

  // The SDK checks structuredContent against the tool's outputSchema.
  const fight = await alice.callTool({ name: 'fight-comparison.fight-comparison', arguments: { a: 'a bear', b: 'a shark' } });
  assert.ok(['a bear', 'a shark'].includes(fight.structuredContent.winner));

  await assert.rejects(alice.callTool({ name: 'no-such.tool', arguments: {} }), /unknown tool/);
  await assert.rejects(alice.callTool({ name: 'secret-agent.run', arguments: {} }), /unknown tool/);

  // Audited like any invocation.
  const audit = (await call('GET', '/audit?limit=100')).body.entries
    .filter((e) => e.client_id === 'alice' && e.target === 'flight-booking/execute');
  assert.deepEqual(audit.map((e) => e.status).sort(), [200, 400]);
});

test('registering an agent sends notifications/tools/list_changed', async () => {
  const alice = await connect(aliceKey);
  const changed = new Promise((resolve) => alice.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve(true)));
  // The SDK opens the GET stream after initialization; give it a moment to be listening.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const r = await call('POST', '/agents', { id: 'weather-now', name: 'Weather now', description: 'Current weather for a city.',
    endpoint: 'http://127.0.0.1:9/w', inputs: { city: 'string' } });
  assert.equal(r.status, 201);
  const got = await Promise.race([changed, new Promise((resolve) => setTimeout(() => resolve(false), 10000))]);
  assert.ok(got, 'no list_changed notification');
  assert.ok((await allTools(alice)).some((t) => t.name === 'weather-now.default'));
});
