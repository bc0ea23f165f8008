#!/usr/bin/env node
// Peak memory of ctxguard for one large tools/call answer (issue 7: "peak RSS for a 100 MiB
// answer measured and stated"), as a ratio to the answer's size. For each kind and size, a fresh
// ctxguard (default settings, --metrics-listen 0) in front of tests/e2e/lib/raw-server.mjs, which
// answers one tools/call with a generated result of one text item: JSON records
// ({"tag":..,"records":[{"id","name","status","score","note"},...]}, paginated), JSON numbers
// ({"tag":..,"numbers":[0,1,...]}: one-digit numbers, the worst case, since every two bytes of
// text become a 16-byte value when parsed) or a log-like plain text (chunked). Measured: VmHWM of ctxguard from /proc/<pid>/status once the answer has arrived,
// and the bytes the cache charges for the result (ctxguard_cache_bytes on /metrics).
//
//   node scripts/bench-memory.mjs [--ctxguard PATH] [--sizes 10,100] [--kinds records,text,numbers]
//
// Prints ratios, asserts nothing (tests/e2e/bounds.test.mjs asserts the bound). Linux only.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
const ctxguard = path.resolve(option('--ctxguard', path.join(repo, 'build', 'ctxguard')));
const sizes = option('--sizes', '10,100').split(',').map(Number);
const kinds = option('--kinds', 'records,text,numbers').split(',');
const rawServer = path.join(repo, 'tests', 'e2e', 'lib', 'raw-server.mjs');
const MiB = 1024 * 1024;

function memory(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1]) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

// Resolves when `test` holds for the text read so far, or rejects after `ms`.
function readUntil(stream, test, ms, what) {
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    const onData = (chunk) => {
      text += chunk.toString('latin1');
      const found = test(text);
      if (found) {
        clearTimeout(timer);
        stream.off('data', onData);
        resolve(found);
      }
    };
    stream.on('data', onData);
  });
}

async function measure(kind, mib) {
  const proc = spawn(ctxguard, ['--metrics-listen', '0', '--', process.execPath, rawServer], { stdio: ['pipe', 'pipe', 'pipe'] });
  const exited = new Promise((resolve) => proc.on('close', resolve));
  try {
    const base = await readUntil(proc.stderr, (t) => /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(t)?.[1], 10_000, 'metrics endpoint');
    const start = memory(proc.pid);
    const request = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bench', arguments: {}, _meta: { 'raw-server/generate': { kind, bytes: mib * MiB, tag: 'bench' } } } };
    const answered = readUntil(proc.stdout, (t) => t.includes('\n') && t, 600_000, 'answer');
    const started = process.hrtime.bigint();
    proc.stdin.write(`${JSON.stringify(request)}\n`);
    const line = (await answered).split('\n')[0];
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const { hwm } = memory(proc.pid);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const sample = (re) => Number(re.exec(metrics)?.[1] ?? NaN);
    const answerBytes = sample(/^ctxguard_original_bytes_total\{[^}]*\} (\d+)/m);
    const charged = sample(/^ctxguard_cache_bytes (\d+)/m);
    const outcome = /^ctxguard_calls_total\{[^}]*outcome="([a-z-]+)"[^}]*\} 1$/m.exec(metrics)?.[1] ?? '?';
    return { kind, answerBytes, outcome, sentBytes: Buffer.byteLength(line, 'latin1'), start: start.rss, hwm, charged, seconds };
  } finally {
    proc.stdin.end();
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

const m = (bytes) => (bytes / MiB).toFixed(1).padStart(7);
const x = (ratio) => `${ratio.toFixed(2)}x`.padStart(7);
console.log(`ctxguard ${ctxguard}: peak RSS (VmHWM) for one answer, default settings (cache ${256} MiB)`);
console.log('kind     answer MiB  outcome     sent KiB  start MiB  peak MiB  peak/answer  (peak-start)/answer  cache MiB  (peak-start-cache)/answer  seconds');
for (const mib of sizes) {
  for (const kind of kinds) {
    const r = await measure(kind, mib);
    console.log([
      r.kind.padEnd(8), m(r.answerBytes).padStart(10), r.outcome.padEnd(10), (r.sentBytes / 1024).toFixed(1).padStart(9),
      m(r.start).padStart(9), m(r.hwm).padStart(9), x(r.hwm / r.answerBytes).padStart(12),
      x((r.hwm - r.start) / r.answerBytes).padStart(20), m(r.charged).padStart(10),
      x((r.hwm - r.start - r.charged) / r.answerBytes).padStart(26), r.seconds.toFixed(1).padStart(8),
    ].join(' '));
  }
}
