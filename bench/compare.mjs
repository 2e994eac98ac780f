// Side-by-side: schemagate's validator against ajv on every schema of
// ../shared/bench/jsonschema-benchmark that has instances, plus the seed-000 flight-booking
// template. Prints per-schema ns/instance for both (parsed instances, and raw text including
// parsing), the speed-up (ajv time / schemagate time; > 1 means schemagate is faster), compile
// times, and whether both agree on how many instances are valid.
// When Blaze's CLI is installed (npm ci in bench/: @sourcemeta/jsonschema), its validation time
// per parsed instance (`validate --fast --benchmark`) is a third column.
// A second table times what a user runs from bytes: `schemagate validate --instances FILE.jsonl
// --output flag` over the instances repeated to at least --cli-lines lines, start-up and compile
// subtracted (a one-line run), against ajv's JSON.parse + validate in-process and Blaze's
// `validate --fast` over the same file.
// Usage: node bench/compare.mjs [--min-time SECONDS] [--bench PATH] [--cli PATH]
//                               [--cli-lines N] [--json OUT]
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, copyFileSync, writeFileSync } from 'node:fs';
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
const cliBin = resolve(opt('--cli', join(here, '../build/release/apps/schemagate/schemagate')));
const cliLines = Number(opt('--cli-lines', '100000'));
const blazeBin = join(here, 'node_modules/@sourcemeta/jsonschema/build/github-releases/jsonschema-linux-x86_64');
const haveBlaze = existsSync(blazeBin);
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

// Blaze: the mean of its per-instance means, in ns (it prints "PASS 0.026 +- 0.135 us").
const blaze = new Map();
if (haveBlaze) {
  console.error(`Blaze on ${dirs.length} schemas...`);
  for (const d of dirs) {
    const r = spawnSync(blazeBin, ['validate', '--fast', '--benchmark', '--loop', '200',
      join(d, 'schema.json'), join(d, 'instances.jsonl')], { maxBuffer: 1 << 28 });
    const means = [...(r.stdout.toString() + r.stderr.toString()).matchAll(/: (?:PASS|FAIL) ([0-9.]+) \+- [0-9.]+ us/g)]
      .map((m) => Number(m[1]) * 1000);
    if (means.length) blaze.set(d.split('/').pop(), means.reduce((a, b) => a + b, 0) / means.length);
  }
}

const rows = [];
for (const d of dirs) {
  const name = d.split('/').pop();
  const a = ajv.get(name), s = sg.get(name);
  if (!a || a.error || !s) { console.log(`skipped ${name}: ${a?.error ?? 'schemagate refused the schema (see above)'}`); continue; }
  rows.push({ name, instances: a.instances, agree: a.valid === s.valid, ajv_valid: a.valid, sg_valid: s.valid,
              ajv_ns: a.ns_preparsed, sg_ns: s.ns_preparsed, speedup: a.ns_preparsed / s.ns_preparsed,
              ajv_raw_ns: a.ns_raw, sg_raw_ns: s.ns_raw, raw_speedup: a.ns_raw / s.ns_raw,
              ajv_compile_ms: a.compile_ms, sg_compile_ms: s.compile_ms,
              blaze_ns: blaze.get(name), blaze_ratio: blaze.has(name) ? blaze.get(name) / s.ns_preparsed : undefined });
}
const geo = (xs) => Math.exp(xs.reduce((t, x) => t + Math.log(x), 0) / xs.length);
const f = (x, w = 9, p = 1) => x.toFixed(p).padStart(w);
const opt_ = (x, w, p, suffix = '') => (x === undefined ? '-'.padStart(w + suffix.length) : f(x, w, p) + suffix);
console.log('in-process, ns per instance; speed-up = other time / schemagate time (> 1: schemagate is faster)');
console.log('schema                     inst  valid(ajv/sg)   ajv ns    sg ns  speedup | ajv raw   sg raw  speedup |  blaze ns  vs blaze | compile ms ajv / sg');
for (const r of rows) {
  console.log(`${r.name.padEnd(25)} ${String(r.instances).padStart(5)}  ${`${r.ajv_valid}/${r.sg_valid}${r.agree ? '' : ' !'}`.padStart(13)} ${f(r.ajv_ns)} ${f(r.sg_ns)} ${f(r.speedup, 7, 2)}x | ${f(r.ajv_raw_ns, 8)} ${f(r.sg_raw_ns, 8)} ${f(r.raw_speedup, 7, 2)}x | ${opt_(r.blaze_ns, 9)} ${opt_(r.blaze_ratio, 8, 2, 'x')} | ${f(r.ajv_compile_ms, 8, 2)} / ${f(r.sg_compile_ms, 6, 3)}`);
}
const slower = rows.filter((r) => r.speedup < 1).map((r) => r.name);
const slowerRaw = rows.filter((r) => r.raw_speedup < 1).map((r) => r.name);
const withBlaze = rows.filter((r) => r.blaze_ratio !== undefined);
console.log(`\ngeometric mean speed-up over ajv: parsed ${geo(rows.map((r) => r.speedup)).toFixed(2)}x, from bytes ${geo(rows.map((r) => r.raw_speedup)).toFixed(2)}x` +
            (withBlaze.length ? `; over Blaze (parsed): ${geo(withBlaze.map((r) => r.blaze_ratio)).toFixed(2)}x on ${withBlaze.length} schemas` : '; Blaze not installed (npm ci in bench/)'));
console.log(`schemas where schemagate is slower than ajv: parsed ${slower.length ? slower.join(', ') : 'none'}; from bytes ${slowerRaw.length ? slowerRaw.join(', ') : 'none'}; ` +
            `validity disagreements: ${rows.filter((r) => !r.agree).map((r) => r.name).join(', ') || 'none'}`);

// The CLI from bytes: wall time of a run over N lines less a one-line run, per line.
if (existsSync(cliBin)) {
  console.error(`CLI runs on ${rows.length} schemas...`);
  const wall = (cmd, args) => {
    let best = Infinity;
    for (let k = 0; k < 3; ++k) {
      const t = process.hrtime.bigint();
      const r = spawnSync(cmd, args, { stdio: ['ignore', 'ignore', 'ignore'] });
      if (r.status !== 0 && r.status !== 1) return NaN;
      best = Math.min(best, Number(process.hrtime.bigint() - t));
    }
    return best;
  };
  const cliRows = [];
  for (const r of rows) {
    const d = dirs.find((x) => x.split('/').pop() === r.name);
    const lines = readFileSync(join(d, 'instances.jsonl'), 'utf8').split('\n').filter((l) => l.trim());
    const many = [];
    while (many.length < cliLines) many.push(...lines);
    const big = join(template, `${r.name}.jsonl`), one = join(template, `${r.name}.one.jsonl`);
    writeFileSync(big, many.join('\n') + '\n');
    writeFileSync(one, lines[0] + '\n');
    const per = (cmd, args) => (wall(cmd, [...args, big]) - wall(cmd, [...args, one])) / (many.length - 1);
    const sgArgs = ['validate', '--schema', join(d, 'schema.json'), '--output', 'flag', '--instances'];
    const row = { name: r.name, lines: many.length, sg_cli_ns: per(cliBin, sgArgs), ajv_raw_ns: r.ajv_raw_ns };
    if (haveBlaze) {
      const b = per(blazeBin, ['validate', '--fast', join(d, 'schema.json')]);
      if (Number.isFinite(b)) row.blaze_cli_ns = b;  // NaN: Blaze refused the schema
    }
    row.vs_ajv = row.ajv_raw_ns / row.sg_cli_ns;
    if (row.blaze_cli_ns !== undefined) row.vs_blaze = row.blaze_cli_ns / row.sg_cli_ns;
    cliRows.push(row);
  }
  console.log('\nfrom bytes through the CLI, ns per line (start-up and compile subtracted)');
  console.log('schema                      lines  sg validate  ajv parse+validate  vs ajv | blaze validate  vs blaze');
  for (const c of cliRows) {
    console.log(`${c.name.padEnd(25)} ${String(c.lines).padStart(7)} ${f(c.sg_cli_ns, 12)} ${f(c.ajv_raw_ns, 19)} ${f(c.vs_ajv, 6, 2)}x | ${opt_(c.blaze_cli_ns, 14)} ${opt_(c.vs_blaze, 8, 2, 'x')}`);
  }
  const slowerCli = cliRows.filter((c) => c.vs_ajv < 1).map((c) => c.name);
  const cliBlaze = cliRows.filter((c) => c.vs_blaze !== undefined);
  console.log(`\nCLI geometric mean speed-up: over ajv ${geo(cliRows.map((c) => c.vs_ajv)).toFixed(2)}x` +
              (cliBlaze.length ? `, over Blaze's CLI ${geo(cliBlaze.map((c) => c.vs_blaze)).toFixed(2)}x` : '') +
              `; slower than ajv on: ${slowerCli.length ? slowerCli.join(', ') : 'none'}`);
  for (const c of cliRows) rows.find((r) => r.name === c.name).cli = c;
}
if (jsonOut) writeFileSync(jsonOut, JSON.stringify(rows, null, 1));
