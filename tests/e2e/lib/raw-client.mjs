// A JSON-RPC client over a rawProxy()'s pipes, for suites that send many or large messages:
// responses are matched to requests by id as they arrive (no rescanning of the whole stdout),
// writes wait for 'drain', and ctxguard's memory and /metrics can be sampled while it runs.

import fs from 'node:fs';

import { checkWayOn } from './client-cuts.mjs';
import { waitFor } from './harness.mjs';

/**
 * Wraps a rawProxy() session. `request(method, params)` sends one request and resolves to the
 * parsed response with the same id; `call(name, args, meta)` is a tools/call (its way on checked
 * and taken off, lib/client-cuts.mjs); `fetch(cursor, extra)` a ctxguard_fetch. Lines that
 * answer no request are kept in `unmatched`.
 */
export function rawClient(g) {
  const pending = new Map();
  const unmatched = [];
  let tail = Buffer.alloc(0);
  let nextId = 1;
  let written = Promise.resolve(); // one write waits for 'drain' at a time, in order
  g.proc.stdout.on('data', (chunk) => {
    let data = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
    for (let nl = data.indexOf(10); nl >= 0; nl = data.indexOf(10)) {
      const line = data.subarray(0, nl).toString('utf8');
      data = data.subarray(nl + 1);
      let message;
      try { message = JSON.parse(line); } catch { unmatched.push(line); continue; }
      const waiter = pending.get(message?.id);
      if (waiter) {
        pending.delete(message.id);
        waiter({ message, bytes: Buffer.byteLength(line), line });
      } else {
        unmatched.push(line);
      }
    }
    tail = Buffer.from(data);
  });
  const client = {
    unmatched,
    /** Resolves to {message, bytes, line} (line: the response line as received, bytes: its length). */
    async send(message) {
      const id = message.id;
      const answered = new Promise((resolve) => pending.set(id, resolve));
      const line = `${JSON.stringify(message)}\n`;
      written = written.then(() => g.send(line));
      await written;
      return answered;
    },
    async request(method, params, id = nextId++) {
      return (await client.send({ jsonrpc: '2.0', id, method, params })).message;
    },
    /** The response, its result checked for its way on and handed over without it (checkWayOn). */
    async call(name, args = {}, meta = undefined, id = nextId++) {
      const message = await client.request('tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) }, id);
      if (message.result?.content) message.result = checkWayOn(message.result);
      return message;
    },
    fetch(cursor, extra = {}, id = nextId++) {
      return client.call('ctxguard_fetch', { cursor, ...extra }, undefined, id);
    },
  };
  return client;
}

/** `_meta` that makes lib/raw-server.mjs answer a generated result of about `bytes` bytes. */
export function generated(kind, bytes, tag) {
  return { 'raw-server/generate': { kind, bytes, tag } };
}

/** The `_ctxguard` object of a rewritten tool result (in its first JSON text item, or trailing item). */
export function ctxguardOf(result) {
  for (const item of result?.content ?? []) {
    if (item.type !== 'text' || !item.text.includes('"_ctxguard"')) continue;
    try {
      const value = JSON.parse(item.text);
      if (value?._ctxguard) return value._ctxguard;
    } catch { /* a text item that is not JSON */ }
  }
  return null;
}

/** VmRSS and VmHWM of a process, in bytes (from /proc/<pid>/status). */
export function memoryOf(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), hwm: kib('VmHWM') };
}

/** The http://host:port of --metrics-listen, from ctxguard's log line. */
export function metricsBase(g, ms = 5000) {
  return waitFor(() => /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(g.stderrText())?.[1], ms, 'the metrics endpoint log line');
}

/** /metrics as {name: value} for the samples without labels. */
export async function scrape(base) {
  const response = await fetch(`${base}/metrics`);
  const text = await response.text();
  const values = {};
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+) (\S+)$/.exec(line);
    if (m) values[m[1]] = Number(m[2]);
  }
  return values;
}

export const MiB = 1024 * 1024;
export const mib = (bytes) => `${(bytes / MiB).toFixed(1)} MiB`;

/** True for one JSON-RPC 2.0 message (a request, a notification or a response). */
export function isJsonRpcMessage(m) {
  if (!m || typeof m !== 'object' || Array.isArray(m) || m.jsonrpc !== '2.0') return false;
  if (typeof m.method === 'string') return true;
  return 'id' in m && ('result' in m || 'error' in m);
}

/**
 * What is wrong with `stdout` as a stream of JSON-RPC lines: [] when every byte of it is valid
 * UTF-8 and belongs to a complete line (ending in a newline) holding one JSON-RPC message;
 * otherwise one string per problem (the first 20), each naming the line.
 */
export function protocolViolations(stdout) {
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(stdout);
  } catch {
    return ['stdout is not valid UTF-8'];
  }
  const problems = [];
  if (text.length > 0 && !text.endsWith('\n')) problems.push(`stdout ends inside a line: ${JSON.stringify(text.slice(text.lastIndexOf('\n') + 1, text.lastIndexOf('\n') + 201))}`);
  const lines = text.split('\n');
  lines.pop();
  lines.forEach((line, i) => {
    if (problems.length >= 20) return;
    let m;
    try { m = JSON.parse(line); } catch { problems.push(`line ${i + 1} is not JSON: ${JSON.stringify(line.slice(0, 200))}`); return; }
    if (!isJsonRpcMessage(m)) problems.push(`line ${i + 1} is not a JSON-RPC message: ${JSON.stringify(line.slice(0, 200))}`);
  });
  return problems;
}

/** The sum of every sample of the metric `name` (with or without labels) in /metrics text; NaN when there is none. */
export function metricSum(text, name) {
  let sum = NaN;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (m && m[1] === name) sum = (Number.isNaN(sum) ? 0 : sum) + Number(m[3]);
  }
  return sum;
}

/** The `_meta` key of the protocol revision a request is made under (MCP 2026-07-28). */
export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

/** `_meta` of a request made under MCP 2026-07-28 (protocol version, client info and capabilities), plus `extra`. */
export function modernMeta(extra = {}) {
  return {
    [PROTOCOL_VERSION_KEY]: '2026-07-28',
    'io.modelcontextprotocol/clientInfo': { name: 'ctxguard-e2e-raw', version: '1.0.0' },
    'io.modelcontextprotocol/clientCapabilities': {},
    ...extra,
  };
}
