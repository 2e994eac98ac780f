// A2A interop (seeds 001, 002) against the official @a2a-js/sdk, both directions:
//  - the SDK's client talks to schemagate's A2A face of a registered agent (v1.0 and 0.3);
//  - an agent built with the SDK's own server classes is registered by crawling its card and
//    invoked through schemagate, which validates what goes in and what comes out.
// Run by ctest: node --test tests/interop/a2a_interop.test.mjs (SCHEMAGATE_BINARY set).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';

import express from 'express';
import { Role, TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { startSchemagate } from './schemagate_process.mjs';

const SCHEMA_EXTENSION =
  'https://raw.githubusercontent.com/facultyai/a2a-extension-object-schemas/refs/heads/main/v1';

// Seed 001's example schemas, verbatim.
const fightComparison = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    a: { description: 'The name of the first contestant', type: 'string' },
    b: { description: 'The name of the second contestant', type: 'string' },
  },
  required: ['a', 'b'],
  additionalProperties: false,
};
const fightResponse = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    winner: { title: 'Winner', description: 'The name of the winner of the fight', type: 'string' },
    probability: { title: 'Probability', type: 'number', minimum: 0, maximum: 1 },
    explanation: { title: 'Explanation', type: 'string' },
  },
  required: ['winner', 'probability', 'explanation'],
  additionalProperties: false,
};

function judge({ a, b }) {
  const winner = a.length >= b.length ? a : b;
  return { winner, probability: 0.65, explanation: `${winner} has the longer name` };
}

// --- processes -----------------------------------------------------------------------------

let server; // schemagate
let base; // http://127.0.0.1:PORT
let plainAgent; // a plain JSON agent behind the gateway
let plainCalls = 0;
let sdkAgent; // an agent built with the SDK's server classes
const sdkReceived = [];

function listen(srv) {
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv.address().port)));
}

async function post(path, body, headers = {}) {
  const r = await fetch(base + path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  return { status: r.status, headers: r.headers, body: text ? JSON.parse(text) : null };
}

// The SDK-built agent: declares the seed 001 schemas in its card, answers every data part with
// a fightResponse artifact (the "broken" skill answers with one that breaks the schema).
async function startSdkAgent() {
  const app = express();
  const srv = createServer(app);
  const port = await listen(srv);
  const url = `http://127.0.0.1:${port}/`;
  const card = {
    name: 'SDK fight judge',
    description: 'Determines who would win in a hypothetical fight, built with @a2a-js/sdk.',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: { organization: 'Interop tests', url: 'https://example.com' },
    version: '1.0.0',
    capabilities: {
      streaming: true,
      pushNotifications: false,
      extensions: [{ uri: SCHEMA_EXTENSION, description: 'schemas', required: false,
        params: { schemas: { fightComparison, fightResponse } } }],
      extendedAgentCard: false,
    },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      { id: 'fight-comparison', name: 'Fight Comparison', description: 'Who wins a fight.',
        tags: ['fight'], examples: ['{"a": "Lion", "b": "Tiger"}'],
        inputModes: ['text/plain', 'application/json;schema=fightComparison'],
        outputModes: ['application/json;schema=fightResponse'], securityRequirements: [] },
    ],
    documentationUrl: '',
    signatures: [],
    schemas: { fightComparison, fightResponse },
  };
  const executor = {
    cancelTask: async () => {},
    async execute(ctx, bus) {
      const message = ctx.userMessage;
      sdkReceived.push(message);
      const dataPart = message.parts.find((p) => p.content?.$case === 'data');
      const input = dataPart?.content.value ?? {};
      const output = input.a === 'Broken' ? { winner: 42 } : judge(input);
      // The task, then its result as an artifact update, then the final status: what a
      // streaming client sees one event at a time.
      const status = (state) => ({ state, timestamp: new Date().toISOString() });
      bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId,
        status: status(TaskState.TASK_STATE_SUBMITTED), artifacts: [], history: [message], metadata: undefined }));
      bus.publish(AgentEvent.artifactUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, append: false,
        lastChunk: true, metadata: undefined,
        artifact: { artifactId: randomUUID(), name: 'fight-result', description: '',
          parts: [{ content: { $case: 'data', value: output }, filename: '',
            mediaType: 'application/json;schema=fightResponse',
            metadata: { mimeType: 'application/json;schema=fightResponse' } }],
          metadata: undefined, extensions: [] } }));
      bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId,
        status: status(TaskState.TASK_STATE_COMPLETED), metadata: undefined }));
      bus.finished();
    },
  };
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use(jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  return { srv, url };
}

before(async () => {
  server = await startSchemagate('serve', ['--embedder', 'none', '--threads', '2']);
  base = server.base;
  plainAgent = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      plainCalls++;
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(judge(JSON.parse(body))));
    });
  });
  const plainPort = await listen(plainAgent);
  const reg = await post('/agents', {
    id: 'fight-judge',
    name: 'Fight judge',
    description: 'Determines who would win in a hypothetical fight between two contestants.',
    tags: ['comparison', 'fight'],
    operations: [{
      name: 'fight-comparison',
      description: 'Who would win in a fight between a and b.',
      endpoint: `http://127.0.0.1:${plainPort}/fight`,
      input_schema: fightComparison,
      output_schema: fightResponse,
      input_schema_name: 'fightComparison',
      output_schema_name: 'fightResponse',
    }],
  });
  assert.equal(reg.status, 201, JSON.stringify(reg.body));
  sdkAgent = await startSdkAgent();
});

after(() => {
  server?.stop();
  plainAgent?.close();
  sdkAgent?.srv.close();
});

function dataPart(value, schema) {
  return { content: { $case: 'data', value }, mediaType: `application/json;schema=${schema}`,
    filename: '', metadata: undefined };
}

function userMessage(parts) {
  return { messageId: randomUUID(), role: Role.ROLE_USER, parts, contextId: '', taskId: '',
    extensions: [], metadata: undefined, referenceTaskIds: [] };
}

function sendRequest(parts) {
  return { tenant: '', message: userMessage(parts), configuration: undefined, metadata: undefined };
}

// --- the SDK client against schemagate --------------------------------------------------------

describe('the @a2a-js/sdk client against schemagate', () => {
  let client;

  test('resolves the agent card: extension, named schemas, schema modes', async () => {
    client = await new ClientFactory().createFromUrl(`${base}/a2a/fight-judge/`);
    const card = await client.getAgentCard();
    assert.equal(card.name, 'Fight judge');
    assert.ok(card.capabilities.extensions.some((e) => e.uri === SCHEMA_EXTENSION));
    const skill = card.skills.find((s) => s.id === 'fight-comparison');
    assert.ok(skill.inputModes.includes('application/json;schema=fightComparison'));
    assert.ok(skill.outputModes.includes('application/json;schema=fightResponse'));
    assert.equal(client.protocolVersion, '1.0');
    // The raw card also carries seed 001's root map and seed 002's fields.
    const raw = await (await fetch(`${base}/a2a/fight-judge/.well-known/agent-card.json`,
      { headers: { 'A2A-Version': '1.0' } })).json();
    assert.deepEqual(raw.schemas.fightComparison, fightComparison);
    assert.deepEqual(raw.skills[0].inputFields.map((f) => f.name).sort(), ['a', 'b']);
  });

  let firstTask;
  test('a valid data part: a COMPLETED task with a schema-tagged data artifact', async () => {
    const before = plainCalls;
    const task = await client.sendMessage(sendRequest([dataPart({ a: 'Lion', b: 'Tiger' }, 'fightComparison')]));
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    const art = task.artifacts.find((a) => a.parts[0].mediaType === 'application/json;schema=fightResponse');
    assert.ok(art, JSON.stringify(task.artifacts));
    assert.deepEqual(art.parts[0].content.value, judge({ a: 'Lion', b: 'Tiger' }));
    // Seed 002: one artifact per named output.
    assert.deepEqual(task.artifacts.map((a) => a.name).slice(1).sort(), ['explanation', 'probability', 'winner']);
    assert.equal(plainCalls, before + 1);
    firstTask = task;
  });

  test('an invalid data part: InvalidParams listing every violation, the agent never called', async () => {
    const before = plainCalls;
    await assert.rejects(
      client.sendMessage(sendRequest([dataPart({ a: 7, c: 'x' }, 'fightComparison')])),
      (err) => {
        assert.equal(err.envelopeCode, -32602);
        const bad = err.data.find((d) => d['@type'] === 'type.googleapis.com/google.rpc.BadRequest');
        const fields = bad.fieldViolations.map((v) => v.field);
        assert.ok(fields.includes('message.parts[0].data/a'), fields.join());
        assert.ok(fields.some((f) => f.startsWith('message.parts[0].data')) && fields.length >= 3, fields.join());
        return true;
      });
    assert.equal(plainCalls, before);
  });

  test('an undeclared schema name is a structured input error naming the accepted schemas', async () => {
    await assert.rejects(client.sendMessage(sendRequest([dataPart({ a: 'x', b: 'y' }, 'nope')])), (err) => {
      assert.equal(err.name, 'ContentTypeNotSupportedError');
      assert.match(err.message, /fightComparison/);
      return true;
    });
  });

  test('GetTask returns the stored task', async () => {
    const task = await client.getTask({ tenant: '', id: firstTask.id, historyLength: undefined });
    assert.equal(task.id, firstTask.id);
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(task.artifacts[0].parts[0].content.value, firstTask.artifacts[0].parts[0].content.value);
  });

  test('ListTasks shows the caller its tasks', async () => {
    const list = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 10, pageToken: '',
      historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false });
    assert.ok(list.tasks.some((t) => t.id === firstTask.id));
  });

  test('an unknown task: TaskNotFoundError', async () => {
    await assert.rejects(client.getTask({ tenant: '', id: 'no-such-task' }), (err) => {
      assert.equal(err.name, 'TaskNotFoundError');
      return true;
    });
  });

  test('streaming: the task, working, an artifact update per output, completed', async () => {
    const events = [];
    for await (const ev of client.sendMessageStream(sendRequest([dataPart({ a: 'Godzilla', b: 'King Kong' }, 'fightComparison')]))) {
      events.push(ev);
    }
    const kinds = events.map((e) => e.payload?.$case);
    assert.equal(kinds[0], 'task');
    assert.equal(kinds.at(-1), 'statusUpdate');
    assert.equal(events.at(-1).payload.value.status.state, TaskState.TASK_STATE_COMPLETED);
    const artifacts = events.filter((e) => e.payload.$case === 'artifactUpdate');
    assert.ok(artifacts.length >= 4, kinds.join());
    assert.deepEqual(artifacts[0].payload.value.artifact.parts[0].content.value, judge({ a: 'Godzilla', b: 'King Kong' }));
  });

  test('the 0.3 legacyCompat client repeats the first exchange', async () => {
    const card = await (await fetch(`${base}/a2a/fight-judge/.well-known/agent-card.json`,
      { headers: { 'A2A-Version': '0.3' } })).json();
    assert.equal(card.protocolVersion, '0.3.0');
    assert.equal(card.url, `${base}/a2a/fight-judge`);
    const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } }),
        new RestTransportFactory({ legacyCompat: { enabled: true } })],
    }));
    const legacy = await factory.createFromAgentCard(card);
    assert.equal(legacy.protocolVersion, '0.3');
    const part = { content: { $case: 'data', value: { a: 'Lion', b: 'Tiger' } }, filename: '', mediaType: '',
      metadata: { mimeType: 'application/json;schema=fightComparison' } };
    const task = await legacy.sendMessage(sendRequest([part]));
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    const data = task.artifacts.map((a) => a.parts[0].content).find((c) => c.$case === 'data');
    assert.deepEqual(data.value, judge({ a: 'Lion', b: 'Tiger' }));
  });
});

// --- schemagate in front of an SDK-built agent ------------------------------------------------

describe('schemagate in front of an agent built with the SDK server classes', () => {
  let id;
  let client;

  test('registered by crawling its card: the seed 001 schemas become its operation', async () => {
    const r = await post('/agents:crawl', { url: sdkAgent.url });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    id = r.body.id;
    assert.deepEqual(r.body.protocols, ['a2a']);
    assert.equal(r.body.operations[0].input_schema_name, 'fightComparison');
  });

  test('POST /agents/{id}/invoke: the JSON body becomes the data part, the artifact the reply', async () => {
    const r = await post(`/agents/${encodeURIComponent(id)}/invoke`, { a: 'Lion', b: 'Tiger' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, judge({ a: 'Lion', b: 'Tiger' }));
    const sent = sdkReceived.at(-1).parts[0];
    assert.equal(sent.mediaType, 'application/json;schema=fightComparison');
    const bad = await post(`/agents/${encodeURIComponent(id)}/invoke`, { a: 'Lion' });
    assert.equal(bad.status, 400);
  });

  test('an SDK client through schemagate: valid data reaches the agent, invalid never does', async () => {
    client = await new ClientFactory().createFromUrl(`${base}/a2a/${encodeURIComponent(id)}/`);
    const before = sdkReceived.length;
    const task = await client.sendMessage(sendRequest([dataPart({ a: 'Lion', b: 'Tiger' }, 'fightComparison')]));
    assert.equal(task.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.deepEqual(task.artifacts[0].parts[0].content.value, judge({ a: 'Lion', b: 'Tiger' }));
    assert.equal(sdkReceived.length, before + 1);
    await assert.rejects(client.sendMessage(sendRequest([dataPart({ a: 'Lion' }, 'fightComparison')])),
      (err) => err.envelopeCode === -32602);
    assert.equal(sdkReceived.length, before + 1, 'the invalid message must not reach the agent');
  });

  test('streaming through schemagate relays the agent\'s events, re-addressed to its task', async () => {
    const before = sdkReceived.length;
    const events = [];
    for await (const ev of client.sendMessageStream(sendRequest([dataPart({ a: 'Lion', b: 'Tiger' }, 'fightComparison')]))) {
      events.push(ev);
    }
    assert.equal(sdkReceived.length, before + 1);
    const kinds = events.map((e) => e.payload.$case);
    assert.equal(kinds[0], 'task');
    const ours = events[0].payload.value.id;
    const artifact = events.find((e) => e.payload.$case === 'artifactUpdate');
    assert.ok(artifact, kinds.join());
    assert.equal(artifact.payload.value.taskId, ours);
    assert.deepEqual(artifact.payload.value.artifact.parts[0].content.value, judge({ a: 'Lion', b: 'Tiger' }));
    const last = events.at(-1).payload.value;
    assert.equal(last.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(last.taskId, ours);
    // The stored task holds what was relayed.
    const task = await client.getTask({ tenant: '', id: ours });
    assert.equal(task.artifacts.length, 1);
  });

  test("the agent's artifacts are checked against its output schema", async () => {
    // A valid input that makes the agent answer with a broken fightResponse.
    const r = await post(`/agents/${encodeURIComponent(id)}/invoke`, { a: 'Broken', b: 'y' });
    assert.equal(r.status, 502, JSON.stringify(r.body));
    assert.equal(r.body.error.code, 'InvalidAgentResponse');
    await assert.rejects(client.sendMessage(sendRequest([dataPart({ a: 'Broken', b: 'y' }, 'fightComparison')])),
      (err) => {
        assert.equal(err.name, 'InvalidAgentResponseError');
        return true;
      });
    // Streamed, the broken artifact is not relayed: the task fails.
    const events = [];
    for await (const ev of client.sendMessageStream(sendRequest([dataPart({ a: 'Broken', b: 'y' }, 'fightComparison')]))) {
      events.push(ev);
    }
    assert.ok(!events.some((e) => e.payload.$case === 'artifactUpdate'));
    assert.equal(events.at(-1).payload.value.status.state, TaskState.TASK_STATE_FAILED);
  });
});
