// The tasks extension (io.modelcontextprotocol/tasks) of MCP 2026-07-28 through ctxguard, on raw
// pipes with lib/raw-server.mjs scripting each answer byte for byte (params._meta
// ["raw-server/result"]); every request carries _meta["io.modelcontextprotocol/protocolVersion"].
//
// A tools/call the server answers with `resultType: "task"` and a top-level `taskId` passes
// unchanged, and ctxguard remembers the tool. `tasks/get` answers pass unchanged, except one with
// `status: "completed"` and a `result`: that `result` (the CallToolResult) is rewritten exactly
// like a tools/call result of the tool (cursors for ctxguard_fetch; a telemetry record of kind
// `task`), the members around it kept. `tasks/update` and `tasks/cancel` pass unchanged both
// ways. (The 2025-11-25 `{"task": {...}}` + `tasks/result` flow: tasks.test.mjs.)

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { killAllRaw, makeTempDir, rawProxy, rawServerCommand, readJsonLines, removeDir, skipWithoutCtxguard, waitFor, within } from './lib/harness.mjs';
import { ctxguardOf, modernMeta, protocolViolations, rawClient } from './lib/raw-client.mjs';
import { checkWayOn } from './lib/client-cuts.mjs';
import { META_KEY, reconstructJson, textOf } from './lib/reconstruct.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 60_000 };
const FETCH = 'ctxguard_fetch';

const scripted = (resultText, extra = {}) => modernMeta({ 'raw-server/result': resultText, ...extra });

const CREATED = '2026-07-28T10:00:00Z';
const UPDATED = '2026-07-28T10:00:05Z';
/** The server's answer to the tools/call: a task (spaced oddly: it must pass byte for byte). */
const taskCreated = (taskId) => `{ "resultType" : "task", "taskId":"${taskId}", "status":"working", "createdAt":"${CREATED}",`
  + `"lastUpdatedAt":"${CREATED}", "ttlMs":60000, "pollIntervalMs":100 }`;
const taskWorking = (taskId) => `{"resultType":"complete","taskId":"${taskId}","status":"working", "statusMessage":"step 2 of 3 \\u2026",`
  + `"createdAt":"${CREATED}","lastUpdatedAt":"${UPDATED}","ttlMs":60000,"pollIntervalMs":100}`;

// 3,000 records as one JSON text: far over the default budget of 4,000 tokens.
const STATUSES = ['open', 'closed', 'pending'];
const VALUE = {
  records: Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `record-${String(i).padStart(4, '0')}`, status: STATUSES[i % 3], score: (i * 37) % 1000 / 10, note: 'café ✓ alpha beta gamma' })),
  total: 3000,
};
const TOOL_RESULT = { content: [{ type: 'text', text: JSON.stringify(VALUE) }], _meta: { 'example.com/trace': 'kept as it was' } };
const COMPLETED = {
  resultType: 'complete', taskId: 't1', status: 'completed', statusMessage: 'done',
  createdAt: CREATED, lastUpdatedAt: UPDATED, ttlMs: 60000, result: TOOL_RESULT,
};

/** The lines raw-server --echo-stderr says it read. */
const serverReceived = (stderr) => [...stderr.matchAll(/^raw-server got: (.*)$/gm)].map((m) => m[1]);

/** Send `text` (one request line, as is) and resolve to the answer line with that id. */
async function exchange(g, c, text) {
  const { id } = JSON.parse(text);
  const before = g.lines().length;
  await g.send(`${text}\n`);
  return waitFor(() => g.lines().slice(before).find((l) => l.startsWith(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},`)), 10_000, `the answer to ${id}`);
}

/** A client for lib/reconstruct.mjs whose ctxguard_fetch calls are modern; every answer must say resultType "complete". */
function modernFetcher(c) {
  return {
    fetches: 0,
    async callTool({ name, arguments: args }) {
      this.fetches += 1;
      const m = await c.call(name, args, modernMeta(), 1000 + this.fetches); // ids apart from the test's own
      assert.ok(m.result, JSON.stringify(m).slice(0, 300));
      assert.equal(m.result.resultType, 'complete', `a modern ${name} answer says resultType "complete": ${JSON.stringify(m.result).slice(0, 300)}`);
      return m.result;
    },
  };
}

const readRecords = readJsonLines;

describe('tasks extension (2026-07-28) on raw pipes', { skip: SKIP, timeout: 120_000 }, () => {
  const tmp = SKIP ? null : makeTempDir('ctxguard-tasks-ext-');
  after(() => { killAllRaw(); removeDir(tmp); });

  test('resultType "task" and a working tasks/get pass byte for byte; the completed tasks/get has its result rewritten (members kept), its cursors fetch modern answers that rebuild the value; tasks/update and tasks/cancel pass unchanged', { timeout: 90_000 }, async () => {
    const tfile = path.join(tmp, 'task.jsonl');
    const g = rawProxy(rawServerCommand('--echo-stderr'), ['--telemetry-file', tfile]);
    const c = rawClient(g);
    const req = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });

    // The call: answered with a task, byte for byte.
    const call = req(1, 'tools/call', { name: 'report', arguments: { q: 'all' }, _meta: scripted(taskCreated('t1')) });
    assert.equal(await exchange(g, c, call), `{"jsonrpc":"2.0","id":1,"result":${taskCreated('t1')}}`);
    // Polling: working, byte for byte.
    const get1 = req(2, 'tasks/get', { taskId: 't1', _meta: scripted(taskWorking('t1')) });
    assert.equal(await exchange(g, c, get1), `{"jsonrpc":"2.0","id":2,"result":${taskWorking('t1')}}`);
    // tasks/update: the request reaches the server as sent, the answer the client as sent.
    const update = ' {"jsonrpc":"2.0", "id":3, "method":"tasks/update", "params":{"taskId":"t1","inputResponses":{"confirm":{"action":"accept","content":{"ok":true}}},'
      + `"_meta":${JSON.stringify(scripted(' { "resultType" : "complete" } '))}}} `;
    assert.equal(await exchange(g, c, update), '{"jsonrpc":"2.0","id":3,"result": { "resultType" : "complete" } }');
    // The server's stderr comes through ctxguard's, a pipe of its own that may trail stdout.
    const read = (lines) => lines.every((l) => serverReceived(g.stderrText()).includes(l));
    await waitFor(() => read([call, get1, update]), 5000, 'the server to say it read the requests').catch(() => {});
    for (const sent of [call, get1, update]) assert.ok(serverReceived(g.stderrText()).includes(sent), `the server read ${sent.slice(0, 120)} as sent`);

    // Completed, with the large result: rewritten.
    const completedText = JSON.stringify(COMPLETED);
    const done = await c.request('tasks/get', { taskId: 't1', _meta: scripted(completedText) }, 4);
    assert.ok(done.result, JSON.stringify(done).slice(0, 300));
    const { result: withWayOn, ...outer } = done.result;
    const inner = checkWayOn(withWayOn);  // the way on checked, then the data (client-cuts.mjs)
    const { result: serverInner, ...serverOuter } = COMPLETED;
    assert.deepEqual(outer, serverOuter, 'the members around the result are the server\'s (resultType, taskId, status, times, ttlMs)');
    assert.ok(inner && typeof inner === 'object', 'the completed answer still has its result');
    assert.deepEqual(inner._meta, serverInner._meta, 'the CallToolResult keeps its _meta');
    const meta = ctxguardOf(inner);
    assert.ok(meta, `the result was rewritten: ${textOf(inner).slice(0, 300)}`);
    assert.equal(meta.path, '/records');
    assert.equal(meta.totalCount, 3000);
    assert.equal(meta.hasMore, true);
    assert.equal(typeof meta.nextCursor, 'string');
    assert.ok(meta.estimatedTokens <= 4000 * 1.01, `${meta.estimatedTokens} estimated tokens`);
    assert.ok(Buffer.byteLength(JSON.stringify(done)) < completedText.length / 5, 'far smaller than the server\'s answer');

    // Its cursors: modern ctxguard_fetch answers (resultType "complete") that rebuild the value.
    const fetcher = modernFetcher(c);
    const rebuilt = await reconstructJson(fetcher, inner);
    assert.deepEqual(rebuilt.value, VALUE, 'the pages rebuild the server\'s value');
    assert.ok(rebuilt.fetches >= 2);

    // tasks/cancel of another task: unchanged.
    const cancelled = '{"resultType":"complete","taskId":"t2","status":"cancelled","createdAt":"2026-07-28T10:00:00Z","lastUpdatedAt":"2026-07-28T10:00:09Z","ttlMs":60000}';
    const cancel = req(5, 'tasks/cancel', { taskId: 't2', _meta: scripted(cancelled) });
    assert.equal(await exchange(g, c, cancel), `{"jsonrpc":"2.0","id":5,"result":${cancelled}}`);
    await waitFor(() => read([cancel]), 5000, 'the server to say it read tasks/cancel').catch(() => {});
    assert.ok(serverReceived(g.stderrText()).includes(cancel));

    assert.deepEqual(protocolViolations(g.stdoutBuffer()), []);
    g.end();
    assert.deepEqual(await within(g.exited, 10_000, 'ctxguard exit'), { code: 0, signal: null }, g.stderrText());
    // The record of the completed result: kind task, under the tool's name; one per fetched page.
    const records = readRecords(tfile);
    const show = records.map((r) => JSON.stringify([r.id, r.kind, r.tool, r.outcome])).join('\n');
    assert.deepEqual(records.filter((r) => r.id === 4).map((r) => [r.kind, r.tool, r.outcome]), [['task', 'report', 'paginated']], show);
    const fetched = records.filter((r) => r.kind === 'fetch');
    assert.equal(fetched.length, fetcher.fetches, show);
    assert.ok(fetched.every((r) => r.tool === `${FETCH}:report` && r.outcome === 'fetched'), show);
  });

  test('other tasks/get answers pass byte for byte: a small completed result, a failed task, an input_required status with large input requests; a completed one whose result is not a tool result', T, async () => {
    const tfile = path.join(tmp, 'others.jsonl');
    const g = rawProxy(rawServerCommand(), ['--telemetry-file', tfile]);
    const c = rawClient(g);
    const req = (id, method, params) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
    assert.equal(await exchange(g, c, req(1, 'tools/call', { name: 'small', arguments: {}, _meta: scripted(taskCreated('s1')) })),
      `{"jsonrpc":"2.0","id":1,"result":${taskCreated('s1')}}`);
    const answers = [
      // Small, spelled as a rewrite would not (1.50, 1E3, an escape, spacing): under the budget, untouched.
      `{"resultType":"complete","taskId":"s1","status":"completed","createdAt":"${CREATED}","lastUpdatedAt":"${UPDATED}","ttlMs":60000,`
        + '"result":{ "content":[{"type":"text","text":"{\\"a\\": 1.50, \\"b\\": 1E3, \\"c\\": \\"caf\\\\u00e9\\"}"}], "isError":false }}',
      `{"resultType":"complete","taskId":"s1","status":"failed","statusMessage":"the tool crashed","createdAt":"${CREATED}","lastUpdatedAt":"${UPDATED}","ttlMs":60000,`
        + '"error":{"code":-32603,"message":"boom"}}',
      `{"resultType":"complete","taskId":"s1","status":"input_required","createdAt":"${CREATED}","lastUpdatedAt":"${UPDATED}","ttlMs":60000,`
        + `"inputRequests":{"pick":{"method":"elicitation/create","params":{"mode":"form","message":${JSON.stringify('Pick one of: '.concat(VALUE.records.map((r) => r.name).join(', ')))},`
        + '"requestedSchema":{"type":"object","properties":{"choice":{"type":"string"}}}}}}}',
      // Completed, but its result has no content array: not a tool result, never touched however large.
      `{"resultType":"complete","taskId":"s1","status":"completed","createdAt":"${CREATED}","lastUpdatedAt":"${UPDATED}","ttlMs":60000,`
        + `"result":{"rows":${JSON.stringify(VALUE.records)}}}`,
    ];
    for (const [i, answer] of answers.entries()) {
      const id = 10 + i;
      assert.equal(await exchange(g, c, req(id, 'tasks/get', { taskId: 's1', _meta: scripted(answer) })), `{"jsonrpc":"2.0","id":${id},"result":${answer}}`, `answer ${i}`);
    }
    assert.deepEqual(protocolViolations(g.stdoutBuffer()), []);
    g.end();
    assert.deepEqual(await within(g.exited, 10_000, 'ctxguard exit'), { code: 0, signal: null }, g.stderrText());
    const rewritten = readRecords(tfile).filter((r) => r.outcome !== 'passthrough');
    assert.deepEqual(rewritten, [], 'nothing was rewritten');
  });
});
