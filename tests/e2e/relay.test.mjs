// Raw relay: ctxguard between raw pipes and lib/raw-server.mjs (no SDK), to
// check what the SDK would hide: byte-identical relay both ways, order, ids of
// every JSON type, very large lines, bursts, and the -32000 error responses
// for requests still in flight when the server exits.
//
// ctxguard rewrites only the messages the wire contract names (docs/protocol.md):
// tool results over the token budget, tools/list, initialize. raw-server's
// default answers ({"result": {"line": ...}}) have no `content` array, so even
// the answer to a tools/call is not a tool result and must pass byte for byte,
// whatever its size; scripted tool results at or under the budget must too.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { killAllRaw, rawProxy, rawServerCommand, skipWithoutCtxguard, waitFor, within } from './lib/harness.mjs';

const T = { timeout: 30_000 };

const SKIP = skipWithoutCtxguard();

const responseLine = (id, line) => JSON.stringify({ jsonrpc: '2.0', id, result: { line } });

describe('raw relay through ctxguard', { skip: SKIP, timeout: 60_000 }, () => {
  after(() => killAllRaw());

  test('client-to-server and server-to-client lines are relayed byte for byte', T, async () => {
    const g = rawProxy(rawServerCommand());
    const requests = [
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1.50,"b":1e3,"c":-0.0}}}',
      ' { "jsonrpc" : "2.0" , "id" : 2 , "method" : "ping" } ',
      '{"method":"ping","id":3,"jsonrpc":"2.0"}',
      '{"jsonrpc":"2.0","id":4,"method":"echo","params":{"s":"caf\\u00e9 \\ud83d\\ude00 \\"quoted\\" back\\\\slash tab\\t nul\\u0000"}}',
      '{"jsonrpc":"2.0","id":5,"method":"echo","params":{"s":"literal UTF-8: café 😀 中文 — ✓"}}',
      '{"jsonrpc":"2.0","id":6,"method":"echo","params":{"deep":[[[[[[[[[[{"k":[null,true,false,{}]}]]]]]]]]]]}}',
    ];
    const emitted = [
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"caf\\u00e9 \\"q\\" \\\\ tab\\t"}}',
      '{"method":"notifications/progress","params":{"progressToken":1,"progress":0.5,"total":1},"jsonrpc":"2.0"}',
      '{ "jsonrpc": "2.0", "id": "srv-1", "method": "roots/list" }',
      '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"literal UTF-8: café 😀 中文"}}',
    ];
    const emit = `{"jsonrpc":"2.0","method":"test/emit","params":{"lines":${JSON.stringify(emitted)}}}`;
    await g.send(`${requests.join('\n')}\n${emit}\n`);
    // The answer to a server-to-client request travels client-to-server.
    await g.send('{"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}}\n');
    await g.waitForLine((l) => l.includes('"id":6,'));
    await g.waitForLine((l) => l.includes('literal UTF-8: café 😀 中文"}}'));
    const lines = g.lines();
    const ids = [1, 2, 3, 4, 5, 6];
    // Every request reached the server unchanged (the server echoes the exact line it read) ...
    ids.forEach((id, i) => assert.ok(lines.includes(responseLine(id, requests[i])), `answer to request ${id} relayed unchanged`));
    // ... and every server line reached the client unchanged, in order.
    const seen = lines.filter((l) => emitted.includes(l));
    assert.deepEqual(seen, emitted);
    // Nothing else on stdout: only protocol lines.
    assert.equal(lines.length, requests.length + emitted.length, lines.join('\n'));
    g.end();
    const { code } = await within(g.exited, 8000, 'ctxguard exit');
    assert.equal(code, 0);
  });

  test('tool results at or under the token budget pass byte for byte, whatever their spelling', T, async () => {
    const g = rawProxy(rawServerCommand());
    // Spellings a rewrite would change: spacing, 0.0, 1.50, 2e720, -0, \u escapes, key order, pretty JSON text.
    const results = [
      '{ "content" : [ {"type":"text","text":"plain text, caf\\u00e9 \\ud83d\\ude00"} ] , "isError" : false }',
      '{"content":[{"type":"text","text":"{\\n  \\"a\\": 1.50,\\n  \\"b\\": [0.0, 2e720, -0]\\n}"}],"structuredContent":{"a":1.50,"b":[0.0,2e720,-0]}}',
      '{"structuredContent":{"rows":[1,2,3,4,5,6,7,8,9,10,11,12]},"content":[{"type":"text","text":"[1,2,3,4,5,6,7,8,9,10,11,12]"}]}',
      '{"content":[{"type":"text","text":"boom"}],"isError":true}',
    ];
    for (const [i, r] of results.entries()) {
      JSON.parse(r); // a valid result
      const request = { jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'x', arguments: {}, _meta: { 'raw-server/result': r } } };
      await g.send(`${JSON.stringify(request)}\n`);
    }
    await waitFor(() => g.lines().length === results.length, 5000, 'all answers');
    assert.deepEqual(g.lines(), results.map((r, i) => `{"jsonrpc":"2.0","id":${i + 1},"result":${r}}`));
    g.end();
    assert.equal((await within(g.exited, 8000, 'ctxguard exit')).code, 0);
  });

  test('ids of every kind come back as they were sent', T, async () => {
    const g = rawProxy(rawServerCommand());
    const ids = [0, 7, -1, 2 ** 53 - 1, 'abc', '', 'ünïcødé', '1'];
    for (const id of ids) await g.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' })}\n`);
    await waitFor(() => g.lines().length === ids.length, 5000, 'all answers');
    assert.deepEqual(g.messages().map((m) => m.id), ids);
    g.end();
    await within(g.exited, 8000, 'ctxguard exit');
  });

  test('very large lines both ways (4 MB)', T, async () => {
    const g = rawProxy(rawServerCommand());
    const big = 'x'.repeat(4 * 1024 * 1024);
    const request = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'echo', params: { big } });
    await g.send(`${request}\n`);
    const answer = await g.waitForLine((l) => l.startsWith('{"jsonrpc":"2.0","id":1,'), 20_000);
    assert.equal(answer, responseLine(1, request));
    const notification = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { data: big } });
    await g.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'test/emit', params: { lines: [notification] } })}\n`);
    const relayed = await g.waitForLine((l) => l.startsWith('{"jsonrpc":"2.0","method":"notifications/message"'), 20_000);
    assert.equal(relayed.length, notification.length);
    assert.equal(relayed, notification);
    g.end();
    assert.equal((await within(g.exited, 8000, 'ctxguard exit')).code, 0);
  });

  test('a burst of 3000 requests written at once: every answer, in order', T, async () => {
    const g = rawProxy(rawServerCommand());
    const n = 3000;
    let text = '';
    for (let i = 1; i <= n; i++) text += `${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'ping', params: { pad: 'p'.repeat(i % 200) } })}\n`;
    await g.send(text);
    await waitFor(() => g.lines().length >= n, 20_000, `${n} answers`);
    assert.deepEqual(g.messages().map((m) => m.id), Array.from({ length: n }, (_, i) => i + 1));
    g.end();
    assert.equal((await within(g.exited, 8000, 'ctxguard exit')).code, 0);
  });

  test('server exits with requests in flight: one -32000 error per request, exit status relayed', T, async () => {
    const g = rawProxy(rawServerCommand());
    await g.send('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await g.waitForLine((l) => l.includes('"id":1,'));
    // Three requests the server never answers, then a notification that makes it exit with status 5.
    await g.send('{"jsonrpc":"2.0","id":7,"method":"test/hold"}\n{"jsonrpc":"2.0","id":"abc","method":"test/hold"}\n{"jsonrpc":"2.0","id":0,"method":"test/hold"}\n');
    await new Promise((r) => setTimeout(r, 200));
    await g.send('{"jsonrpc":"2.0","method":"test/exit","params":{"code":5}}\n');
    const { code } = await within(g.exited, 8000, 'ctxguard exit');
    assert.equal(code, 5, `ctxguard exit status; stderr:\n${g.stderrText()}`);
    const msgs = g.messages();
    const errors = msgs.filter((m) => m.error);
    assert.deepEqual(errors.map((m) => m.id).sort((a, b) => String(a).localeCompare(String(b))), [0, 7, 'abc']);
    for (const e of errors) {
      assert.equal(e.jsonrpc, '2.0');
      assert.equal(e.error.code, -32000);
      assert.equal(typeof e.error.message, 'string');
      assert.ok(e.error.message.length > 0);
      assert.deepEqual(Object.keys(e).sort(), ['error', 'id', 'jsonrpc']);
    }
    // The request that was answered gets no error.
    assert.equal(msgs.filter((m) => m.id === 1).length, 1);
  });

  test('server killed by a signal: exit status 128+signal (SIGTERM -> 143)', T, async () => {
    const g = rawProxy(rawServerCommand());
    await g.send('{"jsonrpc":"2.0","id":9,"method":"test/hold"}\n');
    await new Promise((r) => setTimeout(r, 100));
    await g.send('{"jsonrpc":"2.0","method":"test/exit","params":{"signal":"SIGTERM"}}\n');
    const { code } = await within(g.exited, 8000, 'ctxguard exit');
    assert.equal(code, 143);
    const err = g.messages().find((m) => m.id === 9);
    assert.equal(err?.error?.code, -32000);
  });
});
