// ajv side of the comparison. For each schema folder (schema.json + instances.jsonl) prints one
// JSON line: compile time, ns per instance on parsed instances, ns per instance from raw JSON
// text (JSON.parse included), and how many instances ajv finds valid.
// Usage: node ajv_bench.mjs MIN_SECONDS DIR...
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import Ajv from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';

const minNs = BigInt(Math.round(Number(process.argv[2]) * 1e9));
const dirs = process.argv.slice(3);

function ajvFor(schema) {
  const uri = typeof schema === 'object' ? String(schema.$schema ?? '') : '';
  // unicodeRegExp: false, because several SchemaStore schemas use escapes (\&, \%) that are
  // errors in ECMAScript's unicode mode; logger: false silences "unknown format" notices.
  const options = { strict: false, unicodeRegExp: false, logger: false };
  if (uri.includes('2020-12')) return new Ajv2020(options);
  if (uri.includes('2019-09')) return new Ajv2019(options);
  return new Ajv(options);
}

// Runs fn(i) over all instances repeatedly for at least minNs; returns ns per call.
function time(n, fn) {
  for (let i = 0; i < n; ++i) fn(i);  // warm up (JIT)
  let reps = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0n;
  do {
    for (let i = 0; i < n; ++i) fn(i);
    ++reps;
    elapsed = process.hrtime.bigint() - start;
  } while (elapsed < minNs);
  return Number(elapsed) / (reps * n);
}

for (const dir of dirs) {
  const schema = JSON.parse(readFileSync(`${dir}/schema.json`, 'utf8'));
  const lines = readFileSync(`${dir}/instances.jsonl`, 'utf8').split('\n').filter((l) => l.trim());
  const instances = lines.map((l) => JSON.parse(l));
  const t0 = process.hrtime.bigint();
  let validate;
  try {
    validate = ajvFor(schema).compile(schema);
  } catch (e) {
    console.log(JSON.stringify({ name: basename(dir), error: String(e.message ?? e) }));
    continue;
  }
  const compileMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const valid = instances.filter((x) => validate(x)).length;
  let sink = 0;
  const preparsed = time(instances.length, (i) => { sink += validate(instances[i]) ? 1 : 0; });
  const raw = time(lines.length, (i) => { sink += validate(JSON.parse(lines[i])) ? 1 : 0; });
  console.log(JSON.stringify({ name: basename(dir), instances: instances.length, valid,
                               compile_ms: compileMs, ns_preparsed: preparsed, ns_raw: raw,
                               sink: sink > 0 }));
}
