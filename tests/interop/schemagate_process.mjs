// Starts the schemagate binary (SCHEMAGATE_BINARY) for an interop test on a free port with a
// fresh database, and stops it again. One way for every test file to do it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// `command`: "serve" or "demo"; `args` are added after the listen and database flags (a
// `--db` among them replaces the fresh SQLite file).
// Resolves to {base, dir, child, stop()} once the server logs where it listens.
export async function startSchemagate(command, args = [], env = {}) {
  const binary = process.env.SCHEMAGATE_BINARY;
  if (!binary) throw new Error('SCHEMAGATE_BINARY must name the schemagate binary');
  const dir = mkdtempSync(join(tmpdir(), `schemagate-${command}-`));
  const db = args.includes('--db') ? [] : ['--db', join(dir, 'db.sqlite')];
  const child = spawn(binary, [command, '--listen', '127.0.0.1:0', ...db, '--no-access-log', ...args],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let err = '';
  const base = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`schemagate ${command} did not start:\n${err}`)), 30000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/[^\s]+)/.exec(err);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`schemagate ${command} exited ${code}:\n${err}`)); });
  });
  return {
    base, dir, child,
    stop(signal = 'SIGTERM') {
      child.kill(signal);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
