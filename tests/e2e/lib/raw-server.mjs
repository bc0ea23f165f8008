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
//    any answer (a tool result, a task, a tasks/result payload) byte for byte.
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
  const scripted = msg.params?._meta?.['raw-server/result'];
  if (msg.method !== undefined && msg.id !== undefined && typeof scripted === 'string') {
    write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${scripted}}\n`);
    return;
  }
  if (msg.method !== undefined && msg.id !== undefined) {
    write(`${JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { line } })}\n`);
  }
}
