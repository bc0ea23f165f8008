// Security guarantees (issue 7, part 5) end to end, on raw pipes with lib/raw-server.mjs
// (docs/security.md lists each guarantee with the test that proves it):
//   - the cursor secret is not passed on to the server's environment;
//   - a cursor is bound to the process that issued it: through another ctxguard it is refused as
//     altered (reason `forged`); with the same CTXGUARD_CURSOR_SECRET it passes the signature but
//     finds nothing (reason `evicted`), never a page of the other process's results;
//   - every single-bit change of a real cursor's bytes, and a changed character at every position
//     of its text, is refused with the documented one-line error; ctxguard does not crash, and the
//     real cursor and the server still work afterwards;
//   - decoded, a cursor of each kind holds exactly the documented fields: the version, kind, a
//     salted entry id, part, the JSON Pointer, offset, limit, the fields and query the client gave,
//     the issue time and a 32-byte MAC; no payload value, no path or command of ctxguard's, not
//     the secret;
//   - the metrics endpoint listens on 127.0.0.1 only (checked in the kernel's socket table: tests
//     send nothing to other addresses) and answers nothing but /metrics and /health: other paths,
//     traversal, absolute-form targets, other methods and HTTP/1.0 get 404 or 405, a Host header
//     that is not a loopback address (DNS rebinding) 403, each with a fixed body that echoes
//     nothing;
//   - at the default log level, payload markers (in arguments, results, errors, queries, cursors,
//     lines that are not JSON-RPC) reach neither ctxguard's stderr nor --telemetry-file; at
//     --log-level debug only method names and ids are added, and the first 200 bytes of each line
//     from the server that is not JSON-RPC (dropped, never forwarded: protocol-only.test.mjs).
// Found by these tests and fixed, each test kept: the server inherited CTXGUARD_CURSOR_SECRET;
// the endpoint served an index page at /; it answered any Host (readable by DNS rebinding).

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { ctxguardBin, killAllRaw, makeTempDir, pidAlive, rawProxy, rawServerCommand, removeDir, runCtxguard, skipWithoutCtxguard, waitFor, within } from './lib/harness.mjs';
import { ctxguardOf, generated, metricsBase, rawClient } from './lib/raw-client.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 60_000 };

// The refusals of docs/protocol.md section 6, word for word.
const MALFORMED = 'This is not a valid cursor. Pass _ctxguard.nextCursor exactly as given, or call the original tool again.';
const FORGED = 'This cursor was altered or comes from another ctxguard session. Use the _ctxguard.nextCursor exactly as given, or call the original tool again.';
const EVICTED = 'The result this cursor belongs to is no longer cached (it expired or was evicted to free memory). Call the original tool again.';

const SECRET = 'shared-secret-0123456789-abcdef';

/** The one-line text of an isError tool result (fails on anything else). */
function refusal(message) {
  assert.equal(message.result?.isError, true, `an isError result: ${JSON.stringify(message).slice(0, 300)}`);
  assert.equal(message.result.content.length, 1);
  return message.result.content[0].text;
}

/** A page from a fetch: not an error. */
function page(message) {
  assert.notEqual(message.result?.isError, true, `a page: ${JSON.stringify(message).slice(0, 300)}`);
  return JSON.parse(message.result.content[0].text);
}

const withSecret = () => ({ env: { ...process.env, CTXGUARD_CURSOR_SECRET: SECRET } });

/** A paginated answer of ~256 KiB of generated records; its nextCursor. */
async function issuedCursor(client, tag) {
  const message = await client.call('list_records', {}, generated('records', 256 * 1024, tag));
  const meta = ctxguardOf(message.result);
  assert.ok(meta?.nextCursor, JSON.stringify(message).slice(0, 300));
  return meta.nextCursor;
}

/** The reason logged for the fetch with this id (`error=<reason>` of its call line). */
function loggedReason(g, id) {
  const line = g.stderrText().split('\n').find((l) => / call tool=ctxguard_fetch/.test(l) && l.includes(` id=${id} `));
  return /error=([a-z-]+)/.exec(line ?? '')?.[1] ?? null;
}

// ---------------------------------------------------------------- cursor format (docs/protocol.md 6)

// Letter hex: two letters a-q a byte, the high nibble first, each nibble v after the letter of
// index p (a = 0, and q before the first) spelled as the letter (p + 1 + v) mod 17.
const fromLetterHex = (text) => {
  let previous = 16;
  const nibbles = [...text].map((c) => {
    const index = c.charCodeAt(0) - 97;
    const nibble = (index + 17 - previous - 1) % 17;
    previous = index;
    return nibble.toString(16);
  });
  return Buffer.from(nibbles.join(''), 'hex');
};
const toLetterHex = (bytes) => {
  let previous = 16;
  return [...bytes.toString('hex')].map((c) => {
    previous = (previous + 1 + parseInt(c, 16)) % 17;
    return String.fromCharCode(97 + previous);
  }).join('');
};
const TAG_BYTES = 16;

/**
 * Decodes a cursor by the documented layout and fails unless every byte is accounted for:
 * version || kind entry(8 bytes) part len(path) path offset limit count(fields) (len field)*
 * len(query) query issued_at || 16-byte tag (HMAC-SHA256 truncated).
 */
function decodeCursor(cursor) {
  assert.match(cursor, /^(?:[a-q]{2})+$/, 'letter hex');
  assert.doesNotMatch(cursor, /(.)\1/, 'no letter twice in a row');
  const bytes = fromLetterHex(cursor);
  assert.equal(toLetterHex(bytes), cursor, 'canonical letter hex');
  let at = 0;
  const byte = () => { assert.ok(at < bytes.length - TAG_BYTES, 'within the payload'); return bytes[at++]; };
  const u64 = () => { let value = 0n; for (let i = 0; i < 8; i++) value = (value << 8n) | BigInt(byte()); return value; };
  const varint = () => {
    let value = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = byte();
      value |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return value;
    }
  };
  const string = () => {
    const length = Number(varint());
    assert.ok(at + length <= bytes.length - TAG_BYTES, 'a string within the payload');
    const text = bytes.subarray(at, at + length).toString('utf8');
    at += length;
    return text;
  };
  const cursorFields = { version: byte(), kind: byte(), entry: u64(), part: varint(), path: string(), offset: varint(), limit: varint() };
  const count = Number(varint());
  cursorFields.fields = Array.from({ length: count }, string);
  cursorFields.query = string();
  const zigzag = varint();
  cursorFields.issuedAt = Number((zigzag >> 1n) ^ -(zigzag & 1n));
  assert.equal(bytes.length - at, TAG_BYTES, 'exactly a 16-byte tag after the payload');
  cursorFields.macLength = bytes.length - at;
  return { bytes, ...cursorFields };
}

// ---------------------------------------------------------------- HTTP on a raw socket

/** Sends `request` as is to 127.0.0.1:port and reads until the server closes: {status, headers, body}. */
function rawHttp(port, request) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    socket.setTimeout(5000, () => socket.destroy(new Error(`no answer to ${JSON.stringify(request.slice(0, 60))}`)));
    socket.on('data', (c) => chunks.push(c));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const head = text.slice(0, split < 0 ? text.length : split).split('\r\n');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '')?.[1] ?? NaN);
      const headers = Object.fromEntries(head.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      resolve({ status, headers, body: split < 0 ? '' : text.slice(split + 4), raw: text });
    });
    socket.write(request);
  });
}

/** The listening sockets of the kernel's table (/proc/net/tcp or tcp6) on `port`: local addresses in hex. */
function listeners(table, port) {
  const portHex = port.toString(16).toUpperCase().padStart(4, '0');
  return fs.readFileSync(table, 'utf8').split('\n').slice(1)
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f.length > 3 && f[1].endsWith(`:${portHex}`) && f[3] === '0A')
    .map((f) => f[1].slice(0, f[1].lastIndexOf(':')));
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---------------------------------------------------------------- tests

describe('cursors are bound to the process that issued them', { skip: SKIP, timeout: 90_000 }, () => {
  after(() => killAllRaw());

  test('a cursor through another ctxguard (random keys) is refused as altered; reason forged', T, async () => {
    const a = rawProxy(rawServerCommand());
    const b = rawProxy(rawServerCommand());
    const [ca, cb] = [rawClient(a), rawClient(b)];
    const cursor = await issuedCursor(ca, 'issued-by-a');
    await issuedCursor(cb, 'issued-by-b'); // b has a result of its own, with the same entry id
    assert.equal(refusal(await cb.fetch(cursor, {}, 'cross')), FORGED);
    await waitFor(() => loggedReason(b, '"cross"'), 5000, 'the refusal logged');
    assert.equal(loggedReason(b, '"cross"'), 'forged');
    // The issuing process still serves it.
    assert.equal(page(await ca.fetch(cursor)).items[0].id, 51);
    a.end();
    b.end();
    assert.equal((await within(a.exited, 10_000, 'exit')).code, 0);
    assert.equal((await within(b.exited, 10_000, 'exit')).code, 0);
  });

  test('with the same CTXGUARD_CURSOR_SECRET it passes the signature and finds nothing (reason evicted), never the other process\'s result', T, async () => {
    const c = rawProxy(rawServerCommand(), [], withSecret());
    const d = rawProxy(rawServerCommand(), [], withSecret());
    const e = rawProxy(rawServerCommand()); // a random key
    const [cc, cd, ce] = [rawClient(c), rawClient(d), rawClient(e)];
    const cursor = await issuedCursor(cc, 'issued-by-c');
    // d holds results under entry ids 1..3, c's cursor names entry 1 of c.
    for (const tag of ['d-1', 'd-2', 'd-3']) await issuedCursor(cd, tag);
    assert.equal(refusal(await cd.fetch(cursor, {}, 'same-secret')), EVICTED);
    await waitFor(() => loggedReason(d, '"same-secret"'), 5000, 'the refusal logged');
    assert.equal(loggedReason(d, '"same-secret"'), 'evicted');
    // A process without the secret refuses it as altered; c itself serves it.
    assert.equal(refusal(await ce.fetch(cursor)), FORGED);
    assert.equal(page(await cc.fetch(cursor)).items[0].id, 51);
    // And d's own cursors work: the refusal was about the cursor, not the cache.
    assert.equal(page(await cd.fetch(await issuedCursor(cd, 'd-4'))).items[0].id, 51);
    for (const g of [c, d, e]) g.end();
    for (const g of [c, d, e]) assert.equal((await within(g.exited, 10_000, 'exit')).code, 0);
  });
});

describe('the cursor secret stays in ctxguard', { skip: SKIP, timeout: 30_000 }, () => {
  test('the server does not inherit CTXGUARD_CURSOR_SECRET; other variables pass', T, async () => {
    const script = 'echo "secret=${CTXGUARD_CURSOR_SECRET:-unset} other=${OTHER_VARIABLE:-unset}" >&2';
    const r = await runCtxguard(['--', '/bin/sh', '-c', script], { env: { ...process.env, CTXGUARD_CURSOR_SECRET: SECRET, OTHER_VARIABLE: 'passed' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /secret=unset other=passed/);
    assert.ok(!r.stderr.includes(SECRET), 'the secret is in the output');
  });
});

describe('tampered cursors', { skip: SKIP, timeout: 90_000 }, () => {
  after(() => killAllRaw());

  test('every bit of every byte flipped, and every character replaced, is refused; ctxguard lives on and the real cursor still works', T, async (t) => {
    const g = rawProxy(rawServerCommand(), ['--metrics-listen', '0']);
    const client = rawClient(g);
    const base = await metricsBase(g);
    const cursor = await issuedCursor(client, 'tamper');
    const bytes = fromLetterHex(cursor);
    const macStart = bytes.length - TAG_BYTES;
    const variants = [];
    for (let i = 0; i < bytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const changed = Buffer.from(bytes);
        changed[i] ^= 1 << bit;
        variants.push({ what: `byte ${i} bit ${bit}${i >= macStart ? ' (MAC)' : ''}`, cursor: toLetterHex(changed), expected: i === 0 ? MALFORMED : FORGED });
      }
    }
    const alphabet = 'abcdefghijklmnopq';
    for (let i = 0; i < cursor.length; i++) {
      const next = alphabet[(alphabet.indexOf(cursor[i]) + 1) % 17];
      variants.push({ what: `character ${i}`, cursor: cursor.slice(0, i) + next + cursor.slice(i + 1), expected: null });
    }
    const answers = await Promise.all(variants.map((v) => client.fetch(v.cursor)));
    let forged = 0;
    answers.forEach((answer, k) => {
      const text = refusal(answer);
      const { what, expected } = variants[k];
      if (expected) assert.equal(text, expected, what);
      else assert.ok(text === FORGED || text === MALFORMED, `${what}: ${text}`);
      if (text === FORGED) forged += 1;
    });
    t.diagnostic(`${variants.length} altered cursors (${bytes.length} bytes x 8 bits, ${cursor.length} characters): all refused, ${forged} as altered`);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, new RegExp(`^ctxguard_cursor_errors_total\\{reason="forged"\\} ${forged}$`, 'm'));
    assert.ok(pidAlive(g.pid));
    assert.equal(page(await client.fetch(cursor)).items[0].id, 51);
    assert.ok(ctxguardOf((await client.call('list_records', {}, generated('records', 256 * 1024, 'after'))).result).nextCursor);
    g.end();
    assert.equal((await within(g.exited, 10_000, 'exit')).code, 0);
  });
});

describe('what a cursor carries', { skip: SKIP, timeout: 90_000 }, () => {
  after(() => killAllRaw());

  test('each kind decodes to exactly the documented fields: no payload value, no path of ctxguard\'s, no secret', T, async (t) => {
    const canary = 'PAYLOADcanary42';
    const queryCanary = 'QUERYcanary77';
    // One JSON part (a long string, a long array of records) and one plain text part.
    const records = Array.from({ length: 400 }, (_, i) => ({ id: i, owner: `${canary}-${i}`, status: ['open', 'closed'][i % 2], note: `${canary} `.repeat(20) }));
    const document = { description: `${canary} `.repeat(6000), records };
    const text = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${canary} entry ${i} of the log, ${queryCanary}`).join('\n');
    const result = JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(document) }, { type: 'text', text }] });
    const g = rawProxy(rawServerCommand(), [], withSecret());
    const client = rawClient(g);
    const first = await client.call('read_everything', { owner: canary }, { 'raw-server/result': result });
    const json = JSON.parse(first.result.content[0].text)._ctxguard;
    const chunk = JSON.parse(first.result.content[2].text)._ctxguard;
    const cursors = { page: json.nextCursor, result: json.resultCursor, chunk: chunk.nextCursor };
    const search = page(await client.fetch(json.nextCursor, { query: `status!=${queryCanary}`, fields: ['id', 'status'] }));
    cursors.search = search._ctxguard.nextCursor;
    const pieces = JSON.parse((await client.fetch(json.resultCursor, { path: '/description' })).result.content.at(-1).text)._ctxguard;
    cursors.pieces = pieces.nextCursor;
    const lines = await client.fetch(chunk.nextCursor, { query: queryCanary });
    cursors.lineSearch = JSON.parse(lines.result.content.at(-1).text)._ctxguard.nextCursor;
    const lineRange = await client.fetch(chunk.nextCursor, { startLine: 1, endLine: 3000 });
    cursors.lineRange = JSON.parse(lineRange.result.content.at(-1).text)._ctxguard.nextCursor;

    const forbidden = [canary, SECRET, ctxguardBin(), process.execPath, rawServerCommand().args[0], process.cwd(), os.tmpdir(), 'read_everything'];
    const now = Date.now() / 1000;
    const kinds = new Set();
    for (const [name, cursor] of Object.entries(cursors)) {
      assert.equal(typeof cursor, 'string', `${name}: a cursor`);
      const c = decodeCursor(cursor);
      kinds.add(c.kind);
      t.diagnostic(`${name}: kind ${c.kind}, part ${c.part}, path ${JSON.stringify(c.path)}, offset ${c.offset}, limit ${c.limit}, fields ${JSON.stringify(c.fields)}, query ${JSON.stringify(c.query)}, ${c.bytes.length} bytes`);
      assert.equal(c.version, 3, name);
      assert.ok(c.kind >= 1 && c.kind <= 5, name);
      assert.ok(['', '/records', '/description'].includes(c.path), `${name}: path ${c.path}`);
      assert.ok(c.fields.every((f) => ['id', 'status'].includes(f)), `${name}: fields ${c.fields}`);
      assert.ok(['', `status!=${queryCanary}`, queryCanary].includes(c.query), `${name}: query ${c.query}`);
      assert.ok(Math.abs(c.issuedAt - now) < 120, `${name}: issued at ${c.issuedAt}`);
      assert.ok(c.part <= 1n, name);
      const raw = c.bytes.toString('latin1');
      for (const word of forbidden) assert.ok(!raw.includes(word), `${name} holds ${word}`);
      // The entry id is salted: not the small count it is inside the process.
      assert.ok(c.entry > 1n << 20n, `${name}: entry ${c.entry} looks unsalted`);
    }
    assert.deepEqual([...kinds].sort(), [1, 2, 3, 4, 5], 'every kind of cursor was checked');
    g.end();
    assert.equal((await within(g.exited, 10_000, 'exit')).code, 0);
  });
});

describe('the metrics endpoint', { skip: SKIP, timeout: 90_000 }, () => {
  after(() => killAllRaw());

  test('--metrics-listen PORT listens on 127.0.0.1 only: the kernel\'s table has no other listener on that port', T, async (t) => {
    const port = await freePort();
    const g = rawProxy(rawServerCommand(), ['--metrics-listen', String(port)]);
    assert.equal(await metricsBase(g), `http://127.0.0.1:${port}`);
    assert.deepEqual(listeners('/proc/net/tcp', port), ['0100007F']);
    assert.deepEqual(listeners('/proc/net/tcp6', port), []);
    const others = Object.values(os.networkInterfaces()).flat().filter((i) => !i.internal).map((i) => i.address);
    t.diagnostic(`listening on 127.0.0.1:${port} only; this machine's other addresses (${others.join(', ') || 'none'}) are not bound (not connected to: tests send only to loopback)`);
    assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
    g.end();
    assert.equal((await within(g.exited, 10_000, 'exit')).code, 0);
  });

  test('nothing but /metrics and /health: other paths, traversal, absolute-form, other methods get 404/405, a Host that is not loopback 403, with a fixed body', T, async () => {
    const marker = 'ENDPOINTcanary31';
    const g = rawProxy(rawServerCommand(), ['--metrics-listen', '0']);
    const client = rawClient(g);
    const base = await metricsBase(g);
    const port = Number(new URL(base).port);
    // Payload with the marker went through: in arguments, and in a result that was rewritten.
    await client.call('list_records', { q: marker }, generated('records', 256 * 1024, marker));
    const NOT_FOUND = 'not found: try /metrics or /health\n';
    const NOT_ALLOWED = 'method not allowed\n';
    const FORBIDDEN = 'forbidden: the Host header must name 127.0.0.1, [::1] or localhost\n';
    const get = (target, version = '1.1') => `GET ${target} HTTP/${version}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
    const cases = [
      [get('/'), 404, NOT_FOUND],
      [get('/debug'), 404, NOT_FOUND],
      [get('/debug/pprof/heap'), 404, NOT_FOUND],
      [get('/.env'), 404, NOT_FOUND],
      [get('/metrics/../etc/passwd'), 404, NOT_FOUND],
      [get('/%2e%2e/%2e%2e/etc/passwd'), 404, NOT_FOUND],
      [get('/metrics/'), 404, NOT_FOUND],
      [get('//metrics'), 404, NOT_FOUND],
      [get('/METRICS'), 404, NOT_FOUND],
      [get('/%6detrics'), 404, NOT_FOUND],
      [get(`/${marker}`), 404, NOT_FOUND],
      [get('*'), 404, NOT_FOUND],
      [get(`http://127.0.0.1:${port}/metrics`), 404, NOT_FOUND],
      [get('http://example.invalid/health'), 404, NOT_FOUND],
      [get('/debug', '1.0'), 404, NOT_FOUND],
      // DNS rebinding: a page whose name now points at 127.0.0.1 sends its own name as Host.
      [`GET /metrics HTTP/1.1\r\nHost: rebound.example:${port}\r\nConnection: close\r\n\r\n`, 403, FORBIDDEN],
      [`GET /health HTTP/1.1\r\nHost: 0.0.0.0:${port}\r\nConnection: close\r\n\r\n`, 403, FORBIDDEN],
      [`HEAD /debug HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 404, ''],
      [`POST /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 7\r\nConnection: close\r\n\r\n{"a":1}`, 405, NOT_ALLOWED],
      [`PUT /health HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`, 405, NOT_ALLOWED],
      [`DELETE /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 405, NOT_ALLOWED],
      [`OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 405, NOT_ALLOWED],
      [`TRACE /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 405, NOT_ALLOWED],
      [`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`, 405, NOT_ALLOWED],
    ];
    for (const [request, status, body] of cases) {
      const answer = await rawHttp(port, request);
      const what = JSON.stringify(request.split('\r\n')[0]);
      assert.equal(answer.status, status, `${what}: ${answer.raw.slice(0, 200)}`);
      assert.equal(answer.body, body, what);
      assert.ok(!answer.raw.includes(marker), `${what}: echoes the marker`);
      assert.equal(answer.headers['access-control-allow-origin'], undefined, what);
      if (status === 405) assert.equal(answer.headers.allow, 'GET, HEAD', what);
    }
    // The two pages: a query string is ignored, HTTP/1.0 is served; neither carries payload.
    for (const [target, version, type, host] of [
      ['/metrics?x=1', '1.1', /^text\/plain; version=0\.0\.4/, '127.0.0.1'], ['/health?x', '1.1', /^application\/json/, `localhost:${port}`],
      ['/metrics', '1.0', /^text\/plain/, null],
    ]) {
      const answer = await rawHttp(port, `GET ${target} HTTP/${version}\r\n${host ? `Host: ${host}\r\n` : ''}Connection: close\r\n\r\n`);
      assert.equal(answer.status, 200, target);
      assert.match(answer.headers['content-type'], type, target);
      assert.ok(!answer.body.includes(marker), `${target} carries payload`);
    }
    g.end();
    assert.equal((await within(g.exited, 10_000, 'exit')).code, 0);
  });
});

describe('logs and records hold no payload', { skip: SKIP, timeout: 90_000 }, () => {
  let tmp;
  after(() => { killAllRaw(); removeDir(tmp); });

  // One session of every kind of traffic, each carrying a marker of its own.
  async function session(logLevel) {
    tmp ??= makeTempDir('ctxguard-security-');
    const records = path.join(tmp, `records-${logLevel}.jsonl`);
    const m = (what) => `${what.toUpperCase()}marker${logLevel}`;
    const g = rawProxy(rawServerCommand(), ['--log-level', logLevel, '--telemetry-file', records]);
    const client = rawClient(g);
    // Arguments, echoed back by the server in an answer that is not a tool result.
    await client.call('echo', { text: m('argument') });
    // A tool result under the budget (passes) and one over it (rewritten, cached).
    await client.call('small', {}, { 'raw-server/result': JSON.stringify({ content: [{ type: 'text', text: m('smallresult') }] }) });
    const big = Array.from({ length: 300 }, (_, i) => ({ id: i, value: `${m('bigresult')} ${i}`, status: ['open', 'closed'][i % 2] }));
    const answer = await client.call('big', { filter: m('argument') }, { 'raw-server/result': JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(big) }] }) });
    const cursor = ctxguardOf(answer.result).nextCursor;
    // Errors: a tool error, a JSON-RPC error, an error over the hard cap.
    await client.call('fails', {}, { 'raw-server/result': JSON.stringify({ content: [{ type: 'text', text: m('toolerror') }], isError: true }) });
    await client.call('breaks', {}, { 'raw-server/error': { code: -32000, message: m('rpcerror'), data: { detail: m('rpcerror') } } });
    await client.call('fails-big', {}, { 'raw-server/result': JSON.stringify({ content: [{ type: 'text', text: `${m('bigerror')} `.repeat(20_000) }], isError: true }) });
    // Fetches: a search with a marker in its query (and its next page), a malformed query, a
    // bad cursor, a path that names nothing.
    const search = await client.fetch(cursor, { query: `status!=${m('query')}`, limit: 10 });
    await client.fetch(ctxguardOf(search.result).nextCursor);
    await client.fetch(cursor, { query: `"${m('badquery')}` });
    await client.fetch(`${m('cursor')}AAAA`);
    await client.fetch(cursor, { path: `/${m('path')}` });
    // Lines that are not JSON-RPC, from the server; a notification with a marker in its method.
    await client.request('test/emit', { lines: [`not json ${m('notjson')}`, JSON.stringify({ note: m('notrpc') })] });
    await g.send(`${JSON.stringify({ jsonrpc: '2.0', method: `notifications/${m('method')}`, params: { p: m('argument') } })}\n`);
    await client.request('ping', {});
    g.end();
    await within(g.exited, 10_000, 'exit');
    const markers = ['argument', 'smallresult', 'bigresult', 'toolerror', 'rpcerror', 'bigerror', 'query', 'badquery', 'cursor', 'path', 'notjson', 'notrpc', 'method'].map(m);
    return { stderr: g.stderrText(), records: fs.readFileSync(records, 'utf8'), markers, m };
  }

  test('at the default level: no marker in stderr nor in --telemetry-file', T, async () => {
    const { stderr, records, markers } = await session('info');
    assert.match(stderr, / call tool=big /, 'the session was logged');
    assert.ok(records.split('\n').filter(Boolean).length >= 8, 'records were written');
    for (const marker of markers) {
      assert.ok(!stderr.includes(marker), `stderr holds ${marker}:\n${stderr.split('\n').filter((l) => l.includes(marker)).join('\n')}`);
      assert.ok(!records.includes(marker), `the records hold ${marker}`);
    }
  });

  test('at --log-level debug: method names and ids are added, and the head of each dropped line that is not JSON-RPC; no other payload', T, async (t) => {
    const { stderr, records, markers, m } = await session('debug');
    const seen = markers.filter((marker) => stderr.includes(marker));
    t.diagnostic(`markers in the debug log: ${seen.join(', ') || 'none'}`);
    // The method name, and the beginning of the two dropped lines that are not JSON-RPC (the
    // debug log shows the first 200 bytes of such a line, for finding what wrote it).
    assert.deepEqual(seen, [m('notjson'), m('notrpc'), m('method')], 'only the method name and the dropped lines');
    for (const marker of markers) assert.ok(!records.includes(marker), `the records hold ${marker}`);
  });
});
