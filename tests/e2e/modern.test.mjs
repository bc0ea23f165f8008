// MCP protocol revision 2026-07-28 through ctxguard, on raw pipes with lib/raw-server.mjs scripting
// the server's answers byte for byte. A request is MODERN when its params._meta
// ["io.modelcontextprotocol/protocolVersion"] is "2026-07-28" or later, or, without that key, when
// `initialize` negotiated such a version; otherwise LEGACY.
//   - input_required (multi round-trip requests): a tools/call answered with
//     `resultType: "input_required"` passes byte for byte however large, with no call record; the
//     retry with `inputResponses` is an ordinary call, rewritten when large;
//   - listen streams: a reload of --config that changes tools/list sends
//     notifications/tools/list_changed in a modern session only on each open, acknowledged
//     `subscriptions/listen` stream that asked for toolsListChanged, tagged with its
//     subscriptionId, and nothing without one; a legacy session gets the unsolicited one; the
//     stream's own messages pass unchanged;
//   - a server's JSON-RPC error in ctxguard's reserved-looking range (-32022) passes untouched;
//     traceparent, tracestate, baggage and logLevel in `_meta` reach the server byte for byte;
//     ctxguard never writes notifications/message;
//   - ctxguard_fetch answers: in a modern request `resultType: "complete"` and `_meta` with the
//     server's identity as learned from `server/discover` (or `initialize`), refusals included,
//     `_meta` left out while the server is unknown; a legacy request gets neither;
//   - a rewritten result keeps resultType, _meta, ttlMs and cacheScope; tools/list edits keep them
//     and the server's order, with ctxguard_fetch last.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { alterCursor, killAllRaw, makeTempDir, rawProxy, rawServerCommand, readJsonLines, removeDir, skipWithoutCtxguard, waitFor, within } from './lib/harness.mjs';
import {
  SERVER_INFO_KEY,
  SUBSCRIPTION_ID_KEY,
  ctxguardOf,
  generated,
  modernMeta,
  protocolViolations,
  rawClient,
} from './lib/raw-client.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 60_000 };
const FETCH = 'ctxguard_fetch';
/** How long to wait to see that something did NOT arrive, after a later answer proved the order. */
const QUIET_MS = 400;

const scripted = (resultText, extra = {}) => modernMeta({ 'raw-server/result': resultText, ...extra });
const readRecords = readJsonLines;
const emitLines = (lines, meta = modernMeta()) => `${JSON.stringify({ jsonrpc: '2.0', method: 'test/emit', params: { lines, _meta: meta } })}\n`;
const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

// A JSON text of 3,000 records: far over the default budget.
const RECORDS = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `item-${i}`, state: ['new', 'done'][i % 2], weight: i / 4 }));
const BIG_TEXT = JSON.stringify({ records: RECORDS });

/** Asserts `g`'s stdout is only JSON-RPC lines. */
const assertOnlyProtocol = (g) => assert.deepEqual(protocolViolations(g.stdoutBuffer()), [], 'only JSON-RPC on stdout');

describe('MCP 2026-07-28 on raw pipes', { skip: SKIP, timeout: 180_000 }, () => {
  const tmp = SKIP ? null : makeTempDir('ctxguard-modern-');
  after(() => { killAllRaw(); removeDir(tmp); });

  // ------------------------------------------------------------ input_required

  test('input_required far over the budget passes byte for byte and gives no call record; the retry with inputResponses is rewritten', T, async () => {
    const tfile = path.join(tmp, 'mrtr.jsonl');
    const g = rawProxy(rawServerCommand(), ['--telemetry-file', tfile]);
    const c = rawClient(g);
    const requestState = Buffer.alloc(30_000, 7).toString('base64');
    // Input requests as a server would send them: a form with a long message, a sampling request
    // carrying the records as context. About 300 KB.
    const inputRequired = '{"resultType":"input_required","inputRequests":{'
      + `"confirm":{"method":"elicitation/create","params":{"mode":"form","message":${JSON.stringify(`Deploy these? ${RECORDS.map((r) => r.name).join(', ')}`)},`
      + '"requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}},'
      + `"summary":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":${JSON.stringify(BIG_TEXT)}}}],"maxTokens":500}}},`
      + `"requestState":"${requestState}"}`;
    // The same kind of answer with a content array (what the server has so far): a tool result
    // shape over the budget, still never rewritten.
    const withContent = `{"resultType":"input_required","content":[{"type":"text","text":${JSON.stringify(BIG_TEXT)}}],`
      + '"inputRequests":{"confirm":{"method":"elicitation/create","params":{"mode":"form","message":"Go on?","requestedSchema":{"type":"object","properties":{}}}}},'
      + '"requestState":"s2"}';
    const first = await c.send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'deploy', arguments: { env: 'prod' }, _meta: scripted(inputRequired) } });
    assert.ok(first.bytes > 250_000, `${first.bytes} bytes`);
    assert.equal(first.line, `{"jsonrpc":"2.0","id":1,"result":${inputRequired}}`, 'input_required passes byte for byte');
    const second = await c.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'deploy', arguments: { env: 'prod' }, _meta: scripted(withContent) } });
    assert.equal(second.line, `{"jsonrpc":"2.0","id":2,"result":${withContent}}`, 'input_required with content passes byte for byte');

    // The retry: the same call with the answers, answered with the complete result.
    const complete = JSON.stringify({ resultType: 'complete', content: [{ type: 'text', text: BIG_TEXT }] });
    const retry = await c.send({
      jsonrpc: '2.0', id: 3, method: 'tools/call',
      params: { name: 'deploy', arguments: { env: 'prod' }, inputResponses: { confirm: { action: 'accept', content: { ok: true } }, summary: { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' } }, requestState, _meta: scripted(complete) },
    });
    const meta = ctxguardOf(retry.message.result);
    assert.ok(meta?.nextCursor, `the retry's result is rewritten: ${retry.line.slice(0, 300)}`);
    assert.equal(meta.path, '/records');
    assert.equal(retry.message.result.resultType, 'complete', 'its resultType is kept');

    assertOnlyProtocol(g);
    g.end();
    assert.deepEqual(await within(g.exited, 10_000, 'ctxguard exit'), { code: 0, signal: null }, g.stderrText());
    const records = readRecords(tfile).map((r) => [r.id, r.kind, r.tool, r.outcome]);
    assert.deepEqual(records, [[3, 'call', 'deploy', 'paginated']], 'one record, for the retry only');
  });

  // ------------------------------------------------------------ listen streams and tools/list_changed

  describe('tools/list_changed after a reload that changes tools/list', () => {
    const TOOLS = '{"tools":[{"name":"alpha","inputSchema":{"type":"object"}}]}';
    const LEGACY_CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
    const changedLines = (g, from = 0) => g.lines().slice(from).filter((l) => l.includes('"notifications/tools/list_changed"'));

    /** A session on a config file with maxPageSize 150 (ctxguard_fetch lists it as `limit`'s maximum); waits until ctxguard watches the file. */
    async function start(name) {
      const file = path.join(tmp, `${name}.yaml`);
      fs.writeFileSync(file, 'maxPageSize: 150\n');
      const g = rawProxy(rawServerCommand(), ['--config', file]);
      await waitFor(() => /watching /.test(g.stderrText()), 5000, 'the "watching" log line');
      return { g, c: rawClient(g), file };
    }

    /** Rewrites the file with `maxPageSize` and sends SIGHUP; resolves once the change is logged as reloaded. */
    async function reload(g, file, maxPageSize) {
      const count = () => (g.stderrText().match(/configuration \S+ reloaded \([^)]*\): 1 change\(s\)/g) ?? []).length;
      const before = count();
      fs.writeFileSync(file, `maxPageSize: ${maxPageSize}\n`);
      process.kill(g.pid, 'SIGHUP');
      await waitFor(() => count() > before, 5000, `the reload to maxPageSize ${maxPageSize}`);
    }

    /** The ctxguard_fetch entry of a tools/list answer (checked last). */
    const fetchToolOf = (answer) => {
      const tools = answer.result?.tools ?? [];
      assert.equal(tools.at(-1)?.name, FETCH, JSON.stringify(answer).slice(0, 300));
      return tools.at(-1);
    };

    test('legacy session: the reload sends the unsolicited notification, once', T, async () => {
      const { g, c, file } = await start('legacy');
      const before = fetchToolOf(await c.request('tools/list', { _meta: { 'raw-server/result': TOOLS } }));
      await reload(g, file, 100);
      await c.request('ping', {}); // answered after anything the reload made ctxguard send
      await sleep(QUIET_MS);
      assert.deepEqual(changedLines(g), [LEGACY_CHANGED]);
      const after = fetchToolOf(await c.request('tools/list', { _meta: { 'raw-server/result': TOOLS } }));
      assert.notDeepEqual(after.inputSchema, before.inputSchema, 'the reload changed ctxguard_fetch\'s schema');
      assertOnlyProtocol(g);
      g.end();
      await within(g.exited, 10_000, 'ctxguard exit');
    });

    test('modern session without a listen stream: no notification at all', T, async () => {
      const { g, c, file } = await start('modern-none');
      const before = fetchToolOf(await c.request('tools/list', { _meta: scripted(TOOLS) }));
      await reload(g, file, 100);
      await c.request('ping', { _meta: modernMeta() });
      await sleep(QUIET_MS);
      assert.deepEqual(changedLines(g), [], 'nothing unsolicited in a modern session');
      const after = fetchToolOf(await c.request('tools/list', { _meta: scripted(TOOLS) }));
      assert.notDeepEqual(after.inputSchema, before.inputSchema, 'the reload did change tools/list');
      assertOnlyProtocol(g);
      g.end();
      await within(g.exited, 10_000, 'ctxguard exit');
    });

    test('modern session with an acknowledged listen stream: exactly one notification, on that stream; the stream\'s own messages pass unchanged; none once the stream has ended', T, async () => {
      const { g, c, file } = await start('modern-listen');
      fetchToolOf(await c.request('tools/list', { _meta: scripted(TOOLS) }));
      // The listen request, held by the server (the stream stays open), then the server's acknowledgement.
      const listen = JSON.stringify({ jsonrpc: '2.0', id: 'listen-1', method: 'subscriptions/listen', params: { notifications: { toolsListChanged: true }, _meta: modernMeta({ 'raw-server/hold': true }) } });
      const ack = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications: { toolsListChanged: true }, _meta: { [SUBSCRIPTION_ID_KEY]: 'listen-1' } } });
      await g.send(`${listen}\n${emitLines([ack])}`);
      await g.waitForLine((l) => l === ack, 5000);
      // A notification of the server's on the stream: unchanged.
      const onStream = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/resources/list_changed', params: { _meta: { [SUBSCRIPTION_ID_KEY]: 'listen-1' } } });
      await g.send(emitLines([onStream]));
      await g.waitForLine((l) => l === onStream, 5000);

      await reload(g, file, 100);
      await c.request('ping', { _meta: modernMeta() });
      await sleep(QUIET_MS);
      const changed = changedLines(g);
      assert.equal(changed.length, 1, changed.join('\n'));
      assert.deepEqual(JSON.parse(changed[0]), { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION_ID_KEY]: 'listen-1' } } });

      // The server ends the stream (its response to the listen request): relayed; the next reload sends nothing.
      await g.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'test/release', params: { _meta: modernMeta() } })}\n`);
      const ended = JSON.parse(await g.waitForLine((l) => l.startsWith('{"jsonrpc":"2.0","id":"listen-1",'), 5000));
      assert.equal(ended.result.line, listen, 'the listen request reached the server as sent');
      const from = g.lines().length;
      await reload(g, file, 120);
      await c.request('ping', { _meta: modernMeta() });
      await sleep(QUIET_MS);
      assert.deepEqual(changedLines(g, from), [], 'no stream is open any more');
      assertOnlyProtocol(g);
      g.end();
      await within(g.exited, 10_000, 'ctxguard exit');
    });

    test('several streams: only the acknowledged ones that asked for toolsListChanged and are still open get it, each with its own subscriptionId', T, async () => {
      const { g, c, file } = await start('modern-streams');
      fetchToolOf(await c.request('tools/list', { _meta: scripted(TOOLS) }));
      const listen = (id, notifications) => JSON.stringify({ jsonrpc: '2.0', id, method: 'subscriptions/listen', params: { notifications, _meta: modernMeta({ 'raw-server/hold': true }) } });
      const ack = (id, notifications) => JSON.stringify({ jsonrpc: '2.0', method: 'notifications/subscriptions/acknowledged', params: { notifications, _meta: { [SUBSCRIPTION_ID_KEY]: id } } });
      const tools = { toolsListChanged: true };
      const streams = [
        [7, tools, true], // numeric id, acknowledged: gets it
        ['s-b', tools, false], // never acknowledged: nothing
        ['s-c', { resourcesListChanged: true }, true], // did not ask for tools: nothing
        ['s-d', tools, true], // cancelled by the client below: nothing
        ['s-e', { toolsListChanged: true, promptsListChanged: true }, true], // gets it
      ];
      for (const [id, notifications, acked] of streams) {
        const acks = acked ? [ack(id, notifications)] : [];
        await g.send(`${listen(id, notifications)}\n${emitLines(acks)}`);
        for (const a of acks) await g.waitForLine((l) => l === a, 5000);
      }
      await g.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 's-d', reason: 'done', _meta: modernMeta() } })}\n`);
      await c.request('ping', { _meta: modernMeta() }); // the cancellation has been read

      await reload(g, file, 100);
      await c.request('ping', { _meta: modernMeta() });
      await sleep(QUIET_MS);
      const ids = changedLines(g).map((l) => {
        const m = JSON.parse(l);
        assert.deepEqual(Object.keys(m.params ?? {}), ['_meta'], l);
        assert.deepEqual(Object.keys(m.params._meta), [SUBSCRIPTION_ID_KEY], l);
        return m.params._meta[SUBSCRIPTION_ID_KEY];
      });
      assert.deepEqual(ids.map(String).sort(), ['7', 's-e'], 'one notification on each of the two streams');
      assert.ok(ids.includes(7), 'the numeric id stays a number');
      assertOnlyProtocol(g);
      g.end();
      await within(g.exited, 10_000, 'ctxguard exit');
    });
  });

  // ------------------------------------------------------------ errors and _meta pass untouched

  test('a -32022 error from the server passes byte for byte; traceparent, tracestate, baggage and logLevel reach the server as sent; ctxguard writes no notifications/message', T, async () => {
    const g = rawProxy(rawServerCommand('--echo-stderr'), ['--log-level', 'debug']);
    const c = rawClient(g);
    const unsupported = { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2025-11-25'], requested: '2026-07-28' } };
    for (const [id, method] of [[1, 'tools/call'], [2, 'server/discover'], [3, 'tools/list']]) {
      const r = await c.send({ jsonrpc: '2.0', id, method, params: { ...(method === 'tools/call' ? { name: 'x', arguments: {} } : {}), _meta: modernMeta({ 'raw-server/error': unsupported }) } });
      assert.equal(r.line, JSON.stringify({ jsonrpc: '2.0', id, error: unsupported }), `${method}: the error passes untouched`);
    }
    // Spaced and ordered oddly, with every pass-through _meta key: the server reads the same bytes
    // (its default answer echoes the line it read).
    const traced = {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
      baggage: 'userId=alice,serverNode=DF%2028,isProduction=false',
      'io.modelcontextprotocol/logLevel': 'debug',
    };
    const metaText = JSON.stringify(modernMeta(traced)).replace(/,/g, ' , ');
    const sent = [
      `{ "jsonrpc":"2.0", "id":10, "method":"tools/call", "params":{"name":"echo","arguments":{"a":1.50},"_meta":${metaText}} }`,
      `{"method":"ping","params":{"_meta":${metaText}},"id":"p-11","jsonrpc":"2.0"}`,
      `{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"file:///x","_meta":${metaText}}}`,
    ];
    for (const line of sent) {
      const { id } = JSON.parse(line);
      const before = g.lines().length;
      await g.send(`${line}\n`);
      const answer = await waitFor(() => g.lines().slice(before).find((l) => l.startsWith(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},`)), 5000, `the answer to ${id}`);
      assert.equal(answer, JSON.stringify({ jsonrpc: '2.0', id, result: { line } }), 'the server read the request byte for byte, and its answer came back so');
    }
    // A notification with the same _meta: forwarded as sent.
    const note = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"_meta":${metaText}}}`;
    await g.send(`${note}\n`);
    await c.request('ping', {});
    // The server's stderr comes through ctxguard's, a pipe of its own that may trail stdout.
    const gotNote = () => [...g.stderrText().matchAll(/^raw-server got: (.*)$/gm)].some((m) => m[1] === note);
    await waitFor(gotNote, 5000, 'the server to say it read the notification').catch(() => {});
    assert.ok(gotNote(), 'the notification reached the server as sent');
    assertOnlyProtocol(g);
    assert.ok(!g.lines().some((l) => JSON.parse(l).method === 'notifications/message'), 'ctxguard wrote no notifications/message');
    g.end();
    await within(g.exited, 10_000, 'ctxguard exit');
  });

  // ------------------------------------------------------------ ctxguard_fetch answers

  describe('ctxguard_fetch answers carry resultType and the server\'s identity in modern requests only', () => {
    const SERVER_INFO = { name: 'raw-discover', title: 'Raw Discover', version: '2.3.4' };
    const DISCOVER = JSON.stringify({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: { listChanged: true } },
      instructions: 'Use the tools wisely.',
      _meta: { [SERVER_INFO_KEY]: SERVER_INFO },
    });

    /** Changes one letter in the middle of a cursor. */
    const tamper = (cursor) => alterCursor(cursor);

    /** A large tool answer (plain, legacy request) and its cursor. */
    async function bigCall(c, meta = {}) {
      const answer = await c.call('big', {}, { ...meta, ...generated('records', 300_000, 'fetch-era') });
      const cursor = ctxguardOf(answer.result)?.nextCursor;
      assert.ok(cursor, `a cursor: ${JSON.stringify(answer).slice(0, 300)}`);
      return cursor;
    }

    const assertModern = (answer, serverInfo, what) => {
      assert.ok(answer.result, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.equal(answer.result.resultType, 'complete', `${what}: resultType`);
      if (serverInfo === undefined) assert.equal(answer.result._meta, undefined, `${what}: no _meta while the server is unknown`);
      else assert.deepEqual(answer.result._meta, { [SERVER_INFO_KEY]: serverInfo }, `${what}: _meta`);
    };
    const assertLegacy = (answer, what) => {
      assert.ok(answer.result, `${what}: ${JSON.stringify(answer).slice(0, 300)}`);
      assert.equal(answer.result.resultType, undefined, `${what}: no resultType`);
      assert.equal(answer.result._meta, undefined, `${what}: no _meta`);
    };

    test('after server/discover: the server\'s identity from its _meta, on pages and refusals alike; before it, no _meta; legacy requests get neither', T, async () => {
      const g = rawProxy(rawServerCommand());
      const c = rawClient(g);
      const cursor = await bigCall(c, modernMeta());

      const unknown = await c.call(FETCH, { cursor }, modernMeta());
      assertModern(unknown, undefined, 'a page before server/discover');
      assert.ok(!unknown.result.isError && ctxguardOf(unknown.result), 'a page');

      const discover = await c.request('server/discover', { _meta: scripted(DISCOVER) });
      assert.deepEqual(discover.result._meta, { [SERVER_INFO_KEY]: SERVER_INFO }, 'the discover answer keeps its _meta');
      assert.equal(discover.result.resultType, 'complete');
      assert.ok(discover.result.instructions.includes(FETCH) && discover.result.instructions.endsWith('\n\nUse the tools wisely.'),
        `ctxguard's paragraph, then the server's instructions: ${JSON.stringify(discover.result.instructions)}`);

      const page = await c.call(FETCH, { cursor }, modernMeta());
      assertModern(page, SERVER_INFO, 'a page');
      assert.ok(!page.result.isError && ctxguardOf(page.result), 'a page');
      const refused = await c.call(FETCH, { cursor: tamper(cursor) }, modernMeta());
      assertModern(refused, SERVER_INFO, 'a refusal');
      assert.equal(refused.result.isError, true);
      const badArgs = await c.call(FETCH, { cursor, limit: 0 }, modernMeta());
      assertModern(badArgs, SERVER_INFO, 'an argument refusal');
      assert.equal(badArgs.result.isError, true);

      // The era is the request's: a legacy fetch in the same session gets neither, the next modern one both.
      const legacyPage = await c.fetch(cursor);
      assertLegacy(legacyPage, 'a legacy page');
      assert.ok(!legacyPage.result.isError);
      const legacyRefused = await c.fetch(tamper(cursor));
      assertLegacy(legacyRefused, 'a legacy refusal');
      assert.equal(legacyRefused.result.isError, true);
      assertModern(await c.call(FETCH, { cursor }, modernMeta()), SERVER_INFO, 'a modern page after legacy ones');
      assertOnlyProtocol(g);
      g.end();
      await within(g.exited, 10_000, 'ctxguard exit');
    });

    test('era and identity from initialize: negotiated 2026-07-28, a fetch without _meta is modern; negotiated 2025-11-25, it is legacy unless its _meta says otherwise', T, async () => {
      for (const version of ['2026-07-28', '2025-11-25']) {
        const g = rawProxy(rawServerCommand('--mcp'));
        const c = rawClient(g);
        const init = await c.request('initialize', { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
        assert.equal(init.result?.protocolVersion, version);
        await g.send('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
        const cursor = await bigCall(c);
        const plain = await c.fetch(cursor);
        const serverInfo = { name: 'raw-server', version: '1.0.0' }; // raw-server --mcp's initialize serverInfo
        if (version === '2026-07-28') {
          assertModern(plain, serverInfo, `${version}: a fetch without _meta`);
        } else {
          assertLegacy(plain, `${version}: a fetch without _meta`);
          assertModern(await c.call(FETCH, { cursor }, modernMeta()), serverInfo, `${version}: a fetch with the modern _meta`);
        }
        assertOnlyProtocol(g);
        g.end();
        await within(g.exited, 10_000, 'ctxguard exit');
      }
    });
  });

  // ------------------------------------------------------------ members kept

  test('a rewritten result keeps resultType, _meta, ttlMs and cacheScope; tools/list keeps them, the server\'s order, ctxguard_fetch last', T, async () => {
    const g = rawProxy(rawServerCommand());
    const c = rawClient(g);
    const kept = { resultType: 'complete', _meta: { 'example.com/request': 'r-1', [SERVER_INFO_KEY]: { name: 'raw', version: '9' } }, ttlMs: 30000, cacheScope: 'session' };
    const big = await c.call('big', {}, scripted(JSON.stringify({ ...kept, content: [{ type: 'text', text: BIG_TEXT }] })));
    assert.ok(ctxguardOf(big.result), 'rewritten');
    for (const [k, v] of Object.entries(kept)) assert.deepEqual(big.result[k], v, k);

    const list = { ...kept, tools: [{ name: 'zeta', inputSchema: { type: 'object' } }, { name: 'alpha', inputSchema: { type: 'object' } }] };
    const tools = await c.request('tools/list', { _meta: scripted(JSON.stringify(list)) });
    assert.deepEqual(tools.result.tools.map((t) => t.name), ['zeta', 'alpha', FETCH]);
    for (const [k, v] of Object.entries(kept)) assert.deepEqual(tools.result[k], v, `tools/list ${k}`);
    assertOnlyProtocol(g);
    g.end();
    await within(g.exited, 10_000, 'ctxguard exit');
  });
});
