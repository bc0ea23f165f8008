// Only protocol on stdout (docs/protocol.md; MCP 2026-07-28 contract item 8), on raw pipes with
// lib/raw-server.mjs: a line from the SERVER that is not a JSON-RPC message (not JSON, JSON that
// is not a JSON-RPC message, a last line cut off by a crash) never reaches the client. Each such
// line is logged at info with its size and why (`the server wrote a line of N bytes that is not
// JSON-RPC (<reason>); not forwarded`), its first 200 bytes only at --log-level debug, and
// counted on /metrics as ctxguard_non_protocol_lines_dropped_total. The session goes on; a crash
// mid-line still gives every request in flight its -32000.
//   - a server that greets on stdout before its first answer (--banner);
//   - garbage between answers: text, binary bytes, half JSON, JSON values that are not JSON-RPC
//     (`[1,2]`, `{"hello":1}`, null, a string, a number, `[]`), 1 MiB of noise;
//   - the first 200 bytes of a dropped line at debug, nothing of it at info;
//   - a server SIGKILLed half-way through an answer with several requests in flight.
// In each: every byte of ctxguard's stdout is a complete line holding one JSON-RPC message, every
// request gets exactly one answer. (Lines from the client that are not JSON-RPC are still
// forwarded to the server: relay.test.mjs.)

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { killAllRaw, prng, rawProxy, rawServerCommand, skipWithoutCtxguard, waitFor, within } from './lib/harness.mjs';
import { ctxguardOf, generated, metricSum, metricsBase, protocolViolations, rawClient } from './lib/raw-client.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 60_000 };
const MiB = 1 << 20;
const METRICS = ['--metrics-listen', '127.0.0.1:0'];
const DROPPED = 'ctxguard_non_protocol_lines_dropped_total';

/** The sizes (in order) and reasons of the `... not JSON-RPC (...); not forwarded` info lines in `stderr`. */
function dropLines(stderr) {
  return [...stderr.matchAll(/ info ctxguard: the server wrote a line of (\d+) bytes that is not JSON-RPC \((.*)\); not forwarded/g)]
    .map((m) => ({ bytes: Number(m[1]), reason: m[2], line: m[0] }));
}

/** ctxguard_non_protocol_lines_dropped_total on /metrics, once it equals `expected` (or the last value seen after 5 s). */
async function droppedOnMetrics(base, expected) {
  let last = NaN;
  try {
    await waitFor(async () => {
      last = metricSum(await (await fetch(`${base}/metrics`)).text(), DROPPED);
      return last === expected;
    }, 5000, `${DROPPED} to reach ${expected}`);
  } catch { /* reported by the caller's assertion */ }
  return last;
}

/** Asserts every byte of `g`'s stdout is a JSON-RPC line; returns the messages. */
function assertOnlyProtocol(g) {
  assert.deepEqual(protocolViolations(g.stdoutBuffer()), [], 'ctxguard\'s stdout holds only JSON-RPC lines');
  return g.messages();
}

/** Asserts the responses among `messages` answer exactly `ids`, each once; returns Map id -> response. */
function assertOneAnswerEach(messages, ids) {
  const byId = new Map();
  for (const m of messages.filter((x) => x.method === undefined)) {
    assert.ok(!byId.has(m.id), `two answers for id ${JSON.stringify(m.id)}`);
    byId.set(m.id, m);
  }
  assert.deepEqual([...byId.keys()].sort(), [...ids].sort(), 'one answer per request, none for ids never sent');
  return byId;
}

const emitRaw = (...buffers) => `${JSON.stringify({ jsonrpc: '2.0', method: 'test/emit', params: { raw: buffers.map((b) => b.toString('base64')) } })}\n`;

describe('only JSON-RPC on stdout: the server\'s other lines are dropped and counted', { skip: SKIP, timeout: 120_000 }, () => {
  after(() => killAllRaw());

  test('a server that greets on stdout before its first answer: the banner lines are dropped, counted and logged without their text', T, async () => {
    const banner = [
      'BANNERMARKER-1 raw-server 1.0.0 listening on stdio (press Ctrl-C to stop)',
      '{"server":"BANNERMARKER-2","ready":true}', // JSON, not JSON-RPC
      '==== BANNERMARKER-3 ====',
    ];
    const g = rawProxy(rawServerCommand(...banner.flatMap((b) => ['--banner', b])), METRICS);
    const base = await metricsBase(g);
    const c = rawClient(g);
    const ping = await c.request('ping', {});
    assert.equal(ping.id, 1);
    assert.ok(ping.result, JSON.stringify(ping));
    // The session works as usual: a tool answer over the budget is still rewritten.
    const big = await c.call('big', {}, generated('records', 400_000, 'after-banner'));
    assert.ok(ctxguardOf(big.result)?.nextCursor, 'the big answer was paginated');
    assert.equal(await droppedOnMetrics(base, banner.length), banner.length, `${DROPPED} counts the banner lines`);
    g.end();
    assert.deepEqual(await within(g.exited, 10_000, 'ctxguard exit'), { code: 0, signal: null }, g.stderrText());

    assertOneAnswerEach(assertOnlyProtocol(g), [1, 2]);
    const stderr = g.stderrText();
    assert.deepEqual(dropLines(stderr).map((d) => d.bytes), banner.map((b) => Buffer.byteLength(b)), stderr);
    assert.ok(!stderr.includes('BANNERMARKER'), `the banner's text is in the log:\n${stderr}`);
  });

  test('garbage between answers (text, binary, half JSON, JSON that is not JSON-RPC, 1 MiB of noise): dropped, counted, the session goes on', T, async () => {
    const g = rawProxy(rawServerCommand(), METRICS);
    const base = await metricsBase(g);
    const c = rawClient(g);
    const random = prng(11);
    const everyByte = Buffer.from(Array.from({ length: 256 }, (_, i) => i).filter((b) => b !== 0x0a));
    const garbage = [
      Buffer.from('GARBAGEMARKER-text this is not JSON at all'),
      Buffer.from('[1,2]'),
      Buffer.from('{"hello":"GARBAGEMARKER-object"}'),
      Buffer.from('{"jsonrpc":"2.0","id":'), // half a message
      Buffer.from('{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"GARBAGEMARKER-cut'),
      Buffer.from('null'),
      Buffer.from('"GARBAGEMARKER-string"'),
      Buffer.from('42'),
      Buffer.from('[]'),
      Buffer.from('{"jsonrpc":"2.0"}'), // neither a method nor an id
      everyByte, // binary, a CR and a NUL among them
      Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x00, 0x7b]), // invalid UTF-8
      Buffer.from(Array.from({ length: MiB }, () => 0x20 + Math.floor(random() * 0x5f))), // 1 MiB of printable noise
    ];
    const pings = [];
    for (const [i, junk] of garbage.entries()) {
      await g.send(emitRaw(Buffer.concat([junk, Buffer.from('\n')])));
      const answer = await c.request('ping', { n: i });
      assert.equal(answer.result?.line, JSON.stringify({ jsonrpc: '2.0', id: answer.id, method: 'ping', params: { n: i } }), 'the answer after the garbage is the server\'s');
      pings.push(answer.id);
    }
    // Several garbage lines in one write, between two halves of nothing: each counted once.
    await g.send(emitRaw(Buffer.from('one GARBAGEMARKER\ntwo GARBAGEMARKER\n[1,2]\n')));
    garbage.push(Buffer.from('one GARBAGEMARKER'), Buffer.from('two GARBAGEMARKER'), Buffer.from('[1,2]'));
    // After all that, a tool answer over the budget is still rewritten and its cursor works.
    const big = await c.call('big', {}, generated('records', 400_000, 'after-garbage'));
    const cursor = ctxguardOf(big.result)?.nextCursor;
    assert.ok(cursor, `the big answer was paginated: ${JSON.stringify(big).slice(0, 300)}`);
    const page = await c.fetch(cursor);
    assert.ok(!page.result.isError && ctxguardOf(page.result), `the cursor fetches a page: ${JSON.stringify(page).slice(0, 300)}`);

    assert.equal(await droppedOnMetrics(base, garbage.length), garbage.length, `${DROPPED} counts every garbage line`);
    g.end();
    assert.deepEqual(await within(g.exited, 10_000, 'ctxguard exit'), { code: 0, signal: null }, g.stderrText());

    const messages = assertOnlyProtocol(g);
    assertOneAnswerEach(messages, [...pings, big.id, page.id]);
    assert.equal(messages.length, pings.length + 2, 'nothing but the answers');
    const stderr = g.stderrText();
    assert.deepEqual(dropLines(stderr).map((d) => d.bytes), garbage.map((b) => b.length), 'one info line per dropped line, with its size');
    assert.ok(!stderr.includes('GARBAGEMARKER'), `garbage in the log at the default level:\n${stderr.split('\n').filter((l) => l.includes('GARBAGEMARKER')).join('\n')}`);
  });

  test('--log-level debug: the first 200 bytes of a dropped line are logged, never more', T, async () => {
    const g = rawProxy(rawServerCommand(), ['--log-level', 'debug', ...METRICS]);
    const base = await metricsBase(g);
    const c = rawClient(g);
    // Printable ASCII (one byte a character): what the first 200 bytes are is unambiguous.
    const text = `HEADMARKER ${'x'.repeat(200 - 'HEADMARKER '.length - 'ENDOF200'.length)}ENDOF200TAILMARKER ${'y'.repeat(100)}`;
    const json = `{"hello":"JSONHEAD ${'z'.repeat(200 - '{"hello":"JSONHEAD '.length - 'JSONEND200'.length)}JSONEND200","tail":"JSONTAILMARKER"}`;
    assert.equal(text.indexOf('ENDOF200') + 'ENDOF200'.length, 200);
    assert.equal(json.indexOf('JSONEND200') + 'JSONEND200'.length, 200);
    await g.send(emitRaw(Buffer.from(`${text}\n${json}\n`)));
    await c.request('ping', {});
    assert.equal(await droppedOnMetrics(base, 2), 2);
    g.end();
    await within(g.exited, 10_000, 'ctxguard exit');
    assertOneAnswerEach(assertOnlyProtocol(g), [1]);
    const stderr = g.stderrText();
    assert.deepEqual(dropLines(stderr).map((d) => d.bytes), [text.length, json.length], stderr);
    // As they are or escaped (the log quotes them as a JSON string).
    const logged = (s) => stderr.includes(s) || stderr.includes(JSON.stringify(s).slice(1, -1));
    assert.ok(logged(text.slice(0, 200)), `the first 200 bytes of the text line are in the debug log:\n${stderr}`);
    assert.ok(logged(json.slice(0, 200)), `the first 200 bytes of the JSON line are in the debug log:\n${stderr}`);
    assert.ok(!stderr.includes('TAILMARKER'), 'nothing past the 200th byte');
  });

  test('the server SIGKILLed half-way through an answer with requests in flight: the cut line is dropped and counted, each request gets one -32000', T, async () => {
    const g = rawProxy(rawServerCommand(), [...METRICS, '--metrics-linger', '10']);
    const base = await metricsBase(g);
    let stdoutEnded = false;
    g.proc.stdout.once('end', () => { stdoutEnded = true; });
    const held = ['held-a', 2, 0];
    for (const id of held) await g.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow', arguments: {}, _meta: { 'raw-server/hold': true } } })}\n`);
    const cutAt = 64 * 1024;
    await g.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'crash', method: 'tools/call', params: { name: 'crash', arguments: {}, _meta: { 'raw-server/crash': { lines: 20_000, after: cutAt } } } })}\n`);
    await waitFor(() => stdoutEnded, 10_000, 'ctxguard to close its stdout after the crash');

    const byId = assertOneAnswerEach(assertOnlyProtocol(g), [...held, 'crash']);
    for (const [id, m] of byId) {
      assert.deepEqual(Object.keys(m).sort(), ['error', 'id', 'jsonrpc'], `${id}: ${JSON.stringify(m)}`);
      assert.equal(m.error.code, -32000);
      assert.match(m.error.message, /MCP server killed by signal 9 \(Killed\) before answering tools\/call/);
    }
    // /metrics lingers: the cut line is counted there.
    assert.equal(await droppedOnMetrics(base, 1), 1, `${DROPPED} counts the cut line`);
    // stderr is a pipe of its own: on a loaded machine it may trail stdout and /metrics.
    await waitFor(() => dropLines(g.stderrText()).length > 0, 5000, 'the drop line in the log').catch(() => {});
    assert.deepEqual(dropLines(g.stderrText()).map((d) => d.bytes), [cutAt], g.stderrText());
    process.kill(g.pid, 'SIGTERM');
    assert.deepEqual(await within(g.exited, 5000, 'ctxguard exit after SIGTERM'), { code: 137, signal: null }, g.stderrText());
  });
});
