// Search quality of POST /agents/search against a plain BM25 baseline, in one run.
// For each corpus in ../shared/eval/retrieval (BEIR layout: corpus.jsonl, queries.jsonl,
// qrels[.tsv|/test.tsv]) it starts a fresh `schemagate serve`, registers every tool as an agent
// through the API (name = title or id, description = text: nothing corpus-specific), runs the
// judged queries through the API, and prints nDCG@10, Recall@10 and MRR@10 for both.
// Usage: node bench/retrieval_eval.mjs [--bin PATH] [--limit N]
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, def) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : def; };
const bin = resolve(opt('--bin', join(here, '../build/release/apps/schemagate/schemagate')));
const limit = Number(opt('--limit', '0'));
const root = resolve(here, '../../shared/eval/retrieval');

const jsonl = (p) => readFileSync(p, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

function loadCorpus(dir) {
  const docs = jsonl(join(dir, 'corpus.jsonl'));
  const queries = new Map(jsonl(join(dir, 'queries.jsonl')).map((q) => [String(q._id), q.text]));
  const qrelsPath = existsSync(join(dir, 'qrels.tsv')) ? join(dir, 'qrels.tsv') : join(dir, 'qrels', 'test.tsv');
  const qrels = new Map();
  for (const line of readFileSync(qrelsPath, 'utf8').split('\n').slice(1)) {
    const [q, d, s] = line.split('\t');
    if (!q || !d) continue;
    if (!qrels.has(q)) qrels.set(q, new Map());
    qrels.get(q).set(String(d), Number(s));
  }
  let judged = [...qrels.keys()].filter((q) => queries.has(q));
  if (limit > 0) judged = judged.slice(0, limit);
  return { docs, queries, qrels, judged };
}

// Okapi BM25 over title + text, lower-cased words, no stemming, no stop words: the baseline.
function plainBm25(docs) {
  const tok = (s) => (s.toLowerCase().match(/[a-z0-9]+/g) || []);
  const k1 = 1.2, b = 0.75;
  const tfs = docs.map((d) => { const m = new Map(); for (const t of tok(`${d.title || ''} ${d.text}`)) m.set(t, (m.get(t) || 0) + 1); return m; });
  const lens = tfs.map((m) => [...m.values()].reduce((a, c) => a + c, 0));
  const avg = lens.reduce((a, c) => a + c, 0) / docs.length;
  const df = new Map();
  for (const m of tfs) for (const t of m.keys()) df.set(t, (df.get(t) || 0) + 1);
  return (query) => {
    const terms = [...new Set(tok(query))];
    const scores = docs.map((d, i) => {
      let s = 0;
      for (const t of terms) {
        const tf = tfs[i].get(t);
        if (!tf) continue;
        const idf = Math.log(1 + (docs.length - df.get(t) + 0.5) / (df.get(t) + 0.5));
        s += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lens[i] / avg));
      }
      return [String(d._id), s];
    });
    return scores.filter(([, s]) => s > 0).sort((x, y) => y[1] - x[1]).slice(0, 10).map(([id]) => id);
  };
}

function metrics(ranked, rel) {
  const dcg = ranked.slice(0, 10).reduce((a, id, i) => a + ((2 ** (rel.get(id) || 0)) - 1) / Math.log2(i + 2), 0);
  const ideal = [...rel.values()].sort((x, y) => y - x).slice(0, 10).reduce((a, r, i) => a + ((2 ** r) - 1) / Math.log2(i + 2), 0);
  const relevant = [...rel.entries()].filter(([, r]) => r > 0).map(([id]) => id);
  const found = ranked.slice(0, 10).filter((id) => rel.get(id) > 0).length;
  const first = ranked.slice(0, 10).findIndex((id) => rel.get(id) > 0);
  return { ndcg: ideal ? dcg / ideal : 0, recall: relevant.length ? found / relevant.length : 0, mrr: first >= 0 ? 1 / (first + 1) : 0 };
}

function startServer(dbDir) {
  return new Promise((ok, fail) => {
    const p = spawn(bin, ['serve', '--listen', '127.0.0.1:0', '--db', join(dbDir, 'eval.db'), '--no-access-log'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    // The listening line is logged at info: ask for it by polling /healthz on the port we get.
    const timer = setTimeout(() => fail(new Error(`server did not start: ${err}`)), 20000);
    const check = setInterval(() => {
      const m = err.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) { clearInterval(check); clearTimeout(timer); ok({ p, base: `http://127.0.0.1:${m[1]}` }); }
    }, 20);
  });
}

async function post(base, path, body) {
  const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(`${path}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

const slug = (id) => String(id).replace(/[^A-Za-z0-9._~-]/g, '_');

const rows = [];
for (const name of ['metatool', 'toollens']) {
  const dir = join(root, name);
  if (!existsSync(dir)) continue;
  const { docs, queries, qrels, judged } = loadCorpus(dir);
  const baseline = plainBm25(docs);
  const { p, base } = await startServer(mkdtempSync(join(tmpdir(), 'schemagate-eval-')));
  try {
    const t0 = Date.now();
    for (const d of docs) {
      await post(base, '/agents', { id: slug(d._id), name: d.title || String(d._id), description: d.text });
    }
    const registerMs = Date.now() - t0;
    const ids = new Map(docs.map((d) => [slug(d._id), String(d._id)]));
    const sum = { bm25: { ndcg: 0, recall: 0, mrr: 0 }, sg: { ndcg: 0, recall: 0, mrr: 0 } };
    const t1 = Date.now();
    for (const q of judged) {
      const rel = qrels.get(q);
      const b = metrics(baseline(queries.get(q)), rel);
      const res = await post(base, '/agents/search', { query: queries.get(q), top: 10 });
      const s = metrics(res.results.map((r) => ids.get(r.id)), rel);
      for (const k of ['ndcg', 'recall', 'mrr']) { sum.bm25[k] += b[k]; sum.sg[k] += s[k]; }
    }
    const searchMs = Date.now() - t1;
    const n = judged.length;
    const pct = (x) => (100 * x / n).toFixed(1);
    rows.push({ name, docs: docs.length, queries: n,
                bm25: [pct(sum.bm25.ndcg), pct(sum.bm25.recall), pct(sum.bm25.mrr)],
                sg: [pct(sum.sg.ndcg), pct(sum.sg.recall), pct(sum.sg.mrr)],
                delta: (100 * (sum.sg.ndcg - sum.bm25.ndcg) / n).toFixed(1),
                registerMs, searchMs });
  } finally {
    p.kill('SIGTERM');
  }
}
console.log('corpus     tools  queries | plain BM25 nDCG@10 R@10 MRR@10 | schemagate nDCG@10 R@10 MRR@10 | delta nDCG@10');
for (const r of rows) {
  console.log(`${r.name.padEnd(10)} ${String(r.docs).padStart(5)} ${String(r.queries).padStart(8)} | ${r.bm25.map((x) => x.padStart(6)).join(' ')}          | ${r.sg.map((x) => x.padStart(6)).join(' ')}          | ${r.delta.padStart(6)}   (register ${r.registerMs} ms, ${r.queries} searches ${r.searchMs} ms)`);
}
