// Side-by-side: schemagate's validator against ajv on every schema of
// ../shared/bench/jsonschema-benchmark that has instances, plus the seed-000 flight-booking
// template. Prints per-schema ns/instance for both (parsed instances, and raw text including
// parsing), the speed-up (ajv time / schemagate time; > 1 means schemagate is faster), compile
// times, and whether both agree on how many instances are valid.
// Usage: node bench/compare.mjs [--min-time SECONDS] [--bench PATH] [--json OUT]
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const minTime = Number(opt('--min-time', '0.3'));
const benchBin = resolve(opt('--bench', join(here, '../build/release/bench/validator_bench')));
const jsonOut = opt('--json', null);
const corpus = resolve(here, '../../shared/bench/jsonschema-benchmark/schemas');

const dirs = readdirSync(corpus)
  .map((n) => join(corpus, n))
  .filter((d) => existsSync(join(d, 'instances.jsonl')) && statSync(join(d, 'instances.jsonl')).size > 0);
const template = mkdtempSync(join(tmpdir(), 'schemagate-bench-'));
const fb = join(template, 'flight-booking-template');
execFileSync('mkdir', ['-p', fb]);
copyFileSync(join(here, 'templates/flight-booking/schema.json'), join(fb, 'schema.json'));
execFileSync('node', [join(here, 'make_template_instances.mjs'), join(fb, 'instances.jsonl'), '1000']);
dirs.push(fb);

console.error(`ajv on ${dirs.length} schemas...`);
const ajv = new Map(
  execFileSync('node', [join(here, 'ajv_bench.mjs'), String(minTime), ...dirs], { maxBuffer: 1 << 26 })
    .toString().trim().split('\n').map((l) => JSON.parse(l)).map((r) => [r.name, r]));

console.error(`schemagate on ${dirs.length} schemas...`);
const sgRaw = JSON.parse(execFileSync(benchBin, [
  '--benchmark_format=json', `--benchmark_min_time=${minTime}`, ...dirs], { maxBuffer: 1 << 26 }).toString());
const sg = new Map();
for (const b of sgRaw.benchmarks) {
  const [name, kind] = b.name.split('/');
  const r = sg.get(name) ?? {};
  if (kind === 'compile') r.compile_ms = b.real_time;  // reported in ms
  if (kind === 'preparsed') { r.ns_preparsed = 1e9 / b.items_per_second; r.valid = b.valid; }
  if (kind === 'raw') r.ns_raw = 1e9 / b.items_per_second;
  sg.set(name, r);
}

const rows = [];
for (const d of dirs) {
  const name = d.split('/').pop();
  const a = ajv.get(name), s = sg.get(name);
  if (!a || a.error || !s) { console.log(`skipped ${name}: ${a?.error ?? 'schemagate refused the schema (see above)'}`); continue; }
  rows.push({ name, instances: a.instances, agree: a.valid === s.valid, ajv_valid: a.valid, sg_valid: s.valid,
              ajv_ns: a.ns_preparsed, sg_ns: s.ns_preparsed, speedup: a.ns_preparsed / s.ns_preparsed,
              ajv_raw_ns: a.ns_raw, sg_raw_ns: s.ns_raw, raw_speedup: a.ns_raw / s.ns_raw,
              ajv_compile_ms: a.compile_ms, sg_compile_ms: s.compile_ms });
}
const geo = (xs) => Math.exp(xs.reduce((t, x) => t + Math.log(x), 0) / xs.length);
const f = (x, w = 9, p = 1) => x.toFixed(p).padStart(w);
console.log('schema                     inst  valid(ajv/sg)   ajv ns    sg ns  speedup | ajv raw   sg raw  speedup | compile ms ajv / sg');
for (const r of rows) {
  console.log(`${r.name.padEnd(25)} ${String(r.instances).padStart(5)}  ${`${r.ajv_valid}/${r.sg_valid}${r.agree ? '' : ' !'}`.padStart(13)} ${f(r.ajv_ns)} ${f(r.sg_ns)} ${f(r.speedup, 7, 2)}x | ${f(r.ajv_raw_ns, 8)} ${f(r.sg_raw_ns, 8)} ${f(r.raw_speedup, 7, 2)}x | ${f(r.ajv_compile_ms, 8, 2)} / ${f(r.sg_compile_ms, 6, 3)}`);
}
const slower = rows.filter((r) => r.speedup < 1).map((r) => r.name);
console.log(`\ngeometric mean speed-up: parsed ${geo(rows.map((r) => r.speedup)).toFixed(2)}x, raw ${geo(rows.map((r) => r.raw_speedup)).toFixed(2)}x; ` +
            `schemas where schemagate is slower (parsed): ${slower.length ? slower.join(', ') : 'none'}; ` +
            `validity disagreements: ${rows.filter((r) => !r.agree).map((r) => r.name).join(', ') || 'none'}`);
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(rows, null, 1));
