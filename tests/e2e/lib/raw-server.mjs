#!/usr/bin/env node
// A scriptable stand-in for an MCP server, for raw-protocol and lifecycle
// tests of ctxguard (run as `node raw-server.mjs [options]`).
//
// For every line read on stdin:
//  - a request {"method": m, "id": i} is answered, unless m is "test/hold", with
//    {"jsonrpc":"2.0","id":i,"result":{"line":<the exact line received>}};
//  - "test/emit" (request or notification) writes params.lines to stdout
//    verbatim, one per line, before any answer;
//  - "test/exit" exits at once with params.code, or kills itself with
//    params.signal; "test/hold" is never answered (stays in flight);
//  - a request whose params._meta["raw-server/result"] is a string is answered
//    with {"jsonrpc":"2.0","id":i,"result":<that string, verbatim>} instead:
//    the string is the exact JSON text of the result, so a test can script
//    any answer (a tool result, a task, a tasks/result payload) byte for byte;
//  - a request whose params._meta["raw-server/error"] is an object is answered
//    with {"jsonrpc":"2.0","id":i,"error":<that object>};
//  - a request whose params._meta["raw-server/generate"] is
//    {"kind": "records"|"numbers"|"text", "bytes": N, "tag": S} is answered
//    with a tool result of one text item: for "records" the JSON text
//    {"tag":S,"records":[{"id":..,"name":..,"status":..,"score":..,"note":..},...]},
//    for "numbers" {"tag":S,"numbers":[0,1,...,9,0,...]} (one-digit numbers),
//    for "text" a log-like text whose first line is S; each sized so that
//    the whole answer line is about N bytes. The bytes after the tag are
//    generated once per (kind, N) and reused, so a flood of large answers
//    costs the server almost nothing; S (any string) varies them.
// Options:
//   --ignore-sigterm        ignore SIGTERM (and stdin EOF): only SIGKILL stops it
//   --grandchild            spawn `sleep 600` in the same process group and
//                           write its pid to stderr as "grandchild pid=N"
//   --exit-after-ms N       exit with --exit-code after N ms
//   --exit-code N           (default 0)
//   --echo-stderr           copy every received line to stderr

import { spawn } from 'node:child_process';

const argv = process.argv.slice(2);
const has = (f) => argv.includes(f);
const val = (f, d) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : d);

if (has('--ignore-sigterm')) {
  process.on('SIGTERM', () => { process.stderr.write('raw-server: ignoring SIGTERM\n'); });
  // Keep the event loop alive even after stdin closes.
  setInterval(() => {}, 1 << 30);
}
if (has('--grandchild')) {
  const g = spawn('sleep', ['600'], { stdio: 'ignore' });
  process.stderr.write(`grandchild pid=${g.pid}\n`);
}
if (has('--exit-after-ms')) {
  setTimeout(() => process.exit(Number(val('--exit-code', '0'))), Number(val('--exit-after-ms', '0')));
}

const write = (s) => process.stdout.write(s);
let buf = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
    const line = buf.subarray(0, nl).toString('utf8');
    buf = buf.subarray(nl + 1);
    handle(line);
  }
});
process.stdin.on('end', () => {
  if (!has('--ignore-sigterm') && !has('--exit-after-ms')) process.exit(0);
});

function handle(line) {
  if (has('--echo-stderr')) process.stderr.write(`raw-server got: ${line}\n`);
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return;
  if (msg.method === 'test/emit') for (const l of msg.params?.lines ?? []) write(`${l}\n`);
  if (msg.method === 'test/exit') {
    if (msg.params?.signal) process.kill(process.pid, msg.params.signal);
    else process.exit(msg.params?.code ?? 0);
    return;
  }
  if (msg.method === 'test/hold') return;
  const generate = msg.params?._meta?.['raw-server/generate'];
  if (msg.method !== undefined && msg.id !== undefined && generate && typeof generate === 'object') {
    answerGenerated(msg.id, generate);
    return;
  }
  const error = msg.params?._meta?.['raw-server/error'];
  if (msg.method !== undefined && msg.id !== undefined && error && typeof error === 'object') {
    write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, error })}\n`);
    return;
  }
  const scripted = msg.params?._meta?.['raw-server/result'];
  if (msg.method !== undefined && msg.id !== undefined && typeof scripted === 'string') {
    write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${scripted}}\n`);
    return;
  }
  if (msg.method !== undefined && msg.id !== undefined) {
    write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { line } })}\n`);
  }
}

// ------------------------------------------------ generated answers

const NOTE_WORDS = 'alpha beta gamma delta cache token context proxy server client request stream buffer socket'.split(' ');
const STATUSES = ['active', 'pending', 'closed', 'archived'];
const generated = new Map(); // `${kind}:${bytes}` -> Buffer: the answer line after the tag

// A JSON string's content as it appears inside another JSON string literal.
const inString = (text) => JSON.stringify(text).slice(1, -1);

function generatedTail(kind, bytes) {
  const key = `${kind}:${bytes}`;
  let tail = generated.get(key);
  if (tail) return tail;
  const parts = [];
  let size = 0;
  const push = (s) => { parts.push(s); size += s.length; }; // ASCII only: length is bytes
  if (kind === 'numbers') {
    // The costliest JSON to parse per byte: one array of one-digit numbers.
    push(inString(',"numbers":['));
    const run = Array.from({ length: 4096 }, (_, i) => i % 10).join(',');
    while (size < bytes) push(`${run},`);
    push(`0${inString(']}')}"}]}}\n`);
  } else if (kind === 'text') {
    push(inString('\n'));
    for (let i = 0; size < bytes; i++) {
      const note = Array.from({ length: 8 }, (_, k) => NOTE_WORDS[(i * 7 + k * 3) % NOTE_WORDS.length]).join(' ');
      const ts = `2024-01-02T${String(Math.floor(i / 3600) % 24).padStart(2, '0')}:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z`;
      push(inString(`${ts} ${i % 11 === 0 ? 'WARN ' : 'INFO '} [worker-${i % 8}] request ${String(i).padStart(7, '0')} handled: ${note}\n`));
    }
    push('"}]}}\n');
  } else {
    push(inString(',"records":['));
    for (let i = 0; size < bytes; i++) {
      const note = Array.from({ length: 40 }, (_, k) => NOTE_WORDS[(i * 5 + k * 3) % NOTE_WORDS.length]).join(' ');
      const record = { id: i + 1, name: `record-${String(i + 1).padStart(7, '0')}`, status: STATUSES[i % 4], score: (i * 37) % 1000 / 10, note };
      push((i === 0 ? '' : ',') + inString(JSON.stringify(record)));
    }
    push(`${inString(']}')}"}]}}\n`);
  }
  tail = Buffer.from(parts.join(''), 'latin1');
  generated.set(key, tail);
  return tail;
}

function answerGenerated(id, { kind = 'records', bytes = 1 << 20, tag = '' }) {
  const text = kind === 'text' ? inString(String(tag)) : inString(`{"tag":${JSON.stringify(String(tag))}`);
  write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"${text}`);
  write(generatedTail(kind, Number(bytes)));
}
