#!/usr/bin/env node
// A scriptable stand-in for an MCP server, for raw-protocol, lifecycle and fault tests of
// ctxguard (run as `node raw-server.mjs [options]`).
//
// Lines read on stdin are handled one at a time, in order; everything written to stdout goes out
// in that order and respects the pipe's backpressure (a reader that stalls stalls this server,
// which keeps nothing but the line being written). For every line:
//  - a request {"method": m, "id": i} is answered, unless it is held (below), with
//    {"jsonrpc":"2.0","id":i,"result":{"line":<the exact line received>}};
//  - "test/emit" (request or notification) writes params.lines to stdout verbatim, one per
//    line, then params.raw (base64 strings: their bytes exactly, no newline added, so binary
//    garbage and half lines can be sent), before any answer;
//  - "test/stream" (request or notification) writes params.count notifications of exactly
//    params.bytes bytes each (lib/raw-data.mjs streamLine(seq, bytes), seq 0, 1, ...) as fast as
//    the pipe takes them, before any answer;
//  - "test/exit" exits with params.code, or kills itself with params.signal, once what it wrote
//    before has left (a notification or a request: no answer);
//  - "test/hold", and any request with params._meta["raw-server/hold"] true, is never answered
//    (stays in flight); with --hold-all every request is held;
//  - "test/release" (notification) answers every held request, the last held first;
//  - "test/close-output" (notification) closes stdout once what it wrote before has left, and
//    keeps running: everything it would write afterwards is dropped (a server whose output is
//    gone but whose process is not);
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
//    costs the server almost nothing; S (any string) varies them;
//  - a request whose params._meta["raw-server/big-text"] is {lines: N} is answered with the tool
//    result {"content":[{"type":"text","text":T}]}, T the first N lines of lib/raw-data.mjs
//    bigTextLine (100 bytes each), written in 1 MiB pieces;
//  - a request whose params._meta["raw-server/crash"] is {lines: N, after: B} starts that same
//    answer, writes only its first B bytes (no newline) and then kills itself with SIGKILL;
//  - with --mcp, "initialize" is answered with a minimal InitializeResult (the client's protocol
//    version, capabilities {tools: {}}, serverInfo raw-server), so the SDK client can connect.
// Options:
//   --mcp                   answer "initialize" as above
//   --banner TEXT           write TEXT and a newline to stdout at start, before reading anything
//                           (a server that greets on stdout; repeat it for several lines)
//   --hold-all              hold every request until test/release (or end of input)
//   --announce-held N       write "raw-server: holding N requests" to stderr once N are held
//   --eof-answers N         at the end of input, answer the first N held requests (in arrival
//                           order), then exit with --exit-code
//   --ignore-sigterm        ignore SIGTERM (and stdin EOF): only SIGKILL stops it; says
//                           "raw-server: SIGTERM ignored from here" once the handler is in place
//   --grandchild            spawn `sleep 600` in the same process group and
//                           write its pid to stderr as "grandchild pid=N"
//   --exit-after-ms N       exit with --exit-code after N ms
//   --exit-code N           (default 0)
//   --echo-stderr           copy every received line to stderr
//   --stall-input           read nothing from stdin until SIGUSR1 (a server that is busy)

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';

import { bigTextLine, streamLine } from './raw-data.mjs';

const argv = process.argv.slice(2);
const has = (f) => argv.includes(f);
const val = (f, d) => (argv.includes(f) ? argv[argv.indexOf(f) + 1] : d);

if (has('--ignore-sigterm')) {
  process.on('SIGTERM', () => { process.stderr.write('raw-server: ignoring SIGTERM\n'); });
  process.stderr.write('raw-server: SIGTERM ignored from here\n');
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

// --banner: lines that are not JSON-RPC, written before anything is read.
argv.forEach((a, i) => { if (a === '--banner' && i + 1 < argv.length) process.stdout.write(`${argv[i + 1]}\n`); });

const held = []; // requests held, in arrival order: {id, line}
const announceAt = Number(val('--announce-held', '0'));

// Everything goes out through write(), awaited: one writer, in order, with backpressure.
process.stdout.on('error', () => process.exit(Number(val('--exit-code', '0'))));
let outputClosed = false; // test/close-output
async function write(data) {
  if (outputClosed) return;
  if (!process.stdout.write(data)) await once(process.stdout, 'drain');
}
// Resolves once everything written before has been handed to the pipe.
function flushed() {
  if (outputClosed) return Promise.resolve();
  return new Promise((resolve) => process.stdout.write('', () => resolve()));
}

const answerOf = (id, line) => `${JSON.stringify({ jsonrpc: '2.0', id, result: { line } })}\n`;
const bigTextHead = (id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`;
const BIG_TEXT_TAIL = '"}]}}\n';

/** The answer with the big text, in pieces of about 1 MiB. */
function* bigTextAnswer(id, lines) {
  yield bigTextHead(id);
  const perPiece = Math.max(1, Math.floor((1 << 20) / 100));
  for (let i = 0; i < lines; i += perPiece) {
    let piece = '';
    for (let j = i; j < Math.min(lines, i + perPiece); j++) piece += bigTextLine(j).replace('\n', '\\n');
    yield piece;
  }
  yield BIG_TEXT_TAIL;
}

let queue = Promise.resolve();
let buf = Buffer.alloc(0);
// stdin is only read once a listener is attached.
const readInput = () => process.stdin.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
    const line = buf.subarray(0, nl).toString('utf8');
    buf = buf.subarray(nl + 1);
    queue = queue.then(() => handle(line));
  }
});
if (has('--stall-input')) {
  const keepAlive = setInterval(() => {}, 1 << 30); // nothing else is pending until then
  process.once('SIGUSR1', () => { clearInterval(keepAlive); readInput(); });
} else {
  readInput();
}
process.stdin.on('end', () => {
  queue = queue.then(async () => {
    if (has('--ignore-sigterm')) return;
    if (has('--eof-answers')) {
      for (const { id, line } of held.splice(0, Number(val('--eof-answers', '0')))) await write(answerOf(id, line));
      await flushed();
      process.exit(Number(val('--exit-code', '0')));
    }
    if (has('--exit-after-ms')) return;
    await flushed();
    process.exit(0);
  });
});

async function handle(line) {
  if (has('--echo-stderr')) process.stderr.write(`raw-server got: ${line}\n`);
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return;
  const isRequest = msg.method !== undefined && msg.id !== undefined;
  const meta = msg.params?._meta ?? {};
  if (msg.method === 'test/emit') {
    for (const l of msg.params?.lines ?? []) await write(`${l}\n`);
    for (const r of msg.params?.raw ?? []) await write(Buffer.from(r, 'base64'));
  }
  if (msg.method === 'test/stream') {
    const { count = 0, bytes = 1024 } = msg.params ?? {};
    for (let seq = 0; seq < count; seq++) await write(`${streamLine(seq, bytes)}\n`);
  }
  if (msg.method === 'test/exit') {
    await flushed();
    if (msg.params?.signal) process.kill(process.pid, msg.params.signal);
    else process.exit(msg.params?.code ?? 0);
    return;
  }
  if (msg.method === 'test/close-output') {
    await flushed();
    outputClosed = true;
    fs.closeSync(1); // Node's stdout cannot be ended: close the descriptor under it
    return;
  }
  if (msg.method === 'test/release') {
    for (const { id, line: l } of held.splice(0).reverse()) await write(answerOf(id, l));
    return;
  }
  if (!isRequest) return;
  if (msg.method === 'test/hold' || meta['raw-server/hold'] === true || has('--hold-all')) {
    held.push({ id: msg.id, line });
    if (held.length === announceAt) process.stderr.write(`raw-server: holding ${announceAt} requests\n`);
    return;
  }
  if (has('--mcp') && msg.method === 'initialize') {
    const result = {
      protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
      capabilities: { tools: {} },
      serverInfo: { name: 'raw-server', version: '1.0.0' },
    };
    await write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result })}\n`);
    return;
  }
  const generate = meta['raw-server/generate'];
  if (generate && typeof generate === 'object') {
    await answerGenerated(msg.id, generate);
    return;
  }
  const error = meta['raw-server/error'];
  if (error && typeof error === 'object') {
    await write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, error })}\n`);
    return;
  }
  const scripted = meta['raw-server/result'];
  if (typeof scripted === 'string') {
    await write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${scripted}}\n`);
    return;
  }
  const big = meta['raw-server/big-text'];
  if (big) {
    for (const piece of bigTextAnswer(msg.id, big.lines)) await write(piece);
    return;
  }
  const crash = meta['raw-server/crash'];
  if (crash) {
    let left = crash.after;
    for (const piece of bigTextAnswer(msg.id, crash.lines)) {
      if (left <= 0) break;
      const part = piece.slice(0, left); // ASCII: characters are bytes
      left -= part.length;
      await write(part);
    }
    await flushed();
    process.kill(process.pid, 'SIGKILL');
    return;
  }
  await write(answerOf(msg.id, line));
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

async function answerGenerated(id, { kind = 'records', bytes = 1 << 20, tag = '' }) {
  const text = kind === 'text' ? inString(String(tag)) : inString(`{"tag":${JSON.stringify(String(tag))}`);
  await write(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"${text}`);
  await write(generatedTail(kind, Number(bytes)));
}
