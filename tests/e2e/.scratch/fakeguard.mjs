#!/usr/bin/env node
// DEV ONLY stand-in for ctxguard (not committed).
import { spawn } from 'node:child_process';
import readline from 'node:readline';
const argv = process.argv.slice(2);
const sep = argv.indexOf('--');
if (argv.includes('--help')) { console.log('usage: ctxguard [--log-level L] -- cmd'); process.exit(0); }
if (argv.includes('--version')) { console.log('ctxguard 0.0.0-fake'); process.exit(0); }
if (sep < 0 || sep === argv.length - 1) { console.error('usage error: missing -- <command>'); process.exit(2); }
const opts = argv.slice(0, sep);
const st = Number(opts[opts.indexOf('--shutdown-timeout') + 1] ?? 5) || 5;
const [cmd, ...args] = argv.slice(sep + 1);
const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
child.on('error', (e) => { console.error(`[error] cannot start ${cmd}: ${e.message}`); process.exit(127); });
child.on('spawn', () => console.error(`[info] server started: pid=${child.pid}`));
const inflight = new Map();
readline.createInterface({ input: process.stdin }).on('line', (l) => {
  try { const m = JSON.parse(l); if (m.method && m.id !== undefined) inflight.set(JSON.stringify(m.id), m.id); } catch {}
  child.stdin.write(l + '\n');
}).on('close', () => {
  child.stdin.end();
  setTimeout(() => { try { process.kill(-child.pid, 'SIGTERM'); } catch {} }, st * 1000).unref();
});
readline.createInterface({ input: child.stdout }).on('line', (l) => {
  try { const m = JSON.parse(l); if (!m.method && m.id !== undefined) inflight.delete(JSON.stringify(m.id)); } catch {}
  process.stdout.write(l + '\n');
});
child.stdin.on('error', () => {});
child.on('exit', (code, sig) => {
  for (const id of inflight.values()) process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32000, message: 'server exited' } }) + '\n');
  const signals = { SIGKILL: 9, SIGTERM: 15, SIGINT: 2 };
  process.exitCode = sig ? 128 + signals[sig] : code;
  setTimeout(() => process.exit(), 50);
});
for (const s of ['SIGINT', 'SIGTERM']) process.on(s, () => { try { process.kill(-child.pid, s); } catch {} });
