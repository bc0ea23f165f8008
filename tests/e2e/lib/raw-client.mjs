// A JSON-RPC client over a rawProxy()'s pipes, for suites that send many or large messages:
// responses are matched to requests by id as they arrive (no rescanning of the whole stdout),
// writes wait for 'drain', and ctxguard's memory and /metrics can be sampled while it runs.

import fs from 'node:fs';

import { waitFor } from './harness.mjs';

/**
 * Wraps a rawProxy() session. `request(method, params)` sends one request and resolves to the
 * parsed response with the same id; `call(name, args, meta)` is a tools/call; `fetch(cursor,
 * extra)` a ctxguard_fetch. Lines that answer no request are kept in `unmatched`.
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
        waiter({ message, bytes: Buffer.byteLength(line) });
      } else {
        unmatched.push(line);
      }
    }
    tail = Buffer.from(data);
  });
  const client = {
    unmatched,
    /** Resolves to {message, bytes} (bytes: the length of the response line). */
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
    call(name, args = {}, meta = undefined, id = nextId++) {
      return client.request('tools/call', { name, arguments: args, ...(meta ? { _meta: meta } : {}) }, id);
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
