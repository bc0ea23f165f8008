// Task-augmented tools/call through ctxguard (docs/protocol.md, section 9).
//
// A tools/call with `params.task` is answered by the server with
// {"task": {"taskId": ...}}: that answer passes unchanged, and ctxguard
// remembers which tool the task runs. The tool's result comes later, as the
// answer to `tasks/result`, and goes through the same budget pipeline as a
// tools/call result: unchanged at or under the budget, rewritten (compacted,
// paginated or cut, with cursors for ctxguard_fetch) above it, and logged
// under the tool's name (`task:<taskId>` when the call was not seen).
//
// Two servers:
//  - server-everything advertises tasks for tools/call and has a task-only
//    tool, simulate-research-query (execution.taskSupport "required"): the real
//    SDK client runs it with callToolStream (tools/call with a task, tasks/get
//    polling, tasks/result). Its result is a short plain-text report, so one
//    ctxguard runs with a tiny budget and hard cap to force the text cut.
//  - lib/raw-server.mjs, scripted through params._meta["raw-server/result"],
//    answers with a task and then with a large JSON tool result: the JSON path
//    (pagination, cursors, structuredContent) and byte-level checks, driven
//    with raw JSON-RPC lines.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  FULL_CLIENT_CAPABILITIES,
  closeAllSessions,
  connectDirect,
  connectProxied,
  killAllRaw,
  normalize,
  rawProxy,
  rawServerCommand,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
  within,
} from './lib/harness.mjs';
import { checkWayOn } from './lib/client-cuts.mjs';
import { META_KEY, reconstructJson, reconstructText, splitTextPiece, textOf } from './lib/reconstruct.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };
const FETCH = 'ctxguard_fetch';
const TASK_TOOL = 'simulate-research-query';
// The research report repeats its topic twice: with this topic it is ~3 KB of
// plain text (~800 estimated tokens), far under the default budget and far
// over TINY's hard cap, so that session cuts it into pieces.
const TOPIC = `ctxguard and context budgets: ${Array.from({ length: 100 }, (_, i) => `cursor ${i}`).join(', ')}`;
const TINY = ['--token-budget', '200', '--hard-cap', '400'];

// What differs between two rewrites of the same result: the cursors (another
// cache entry, another MAC) and so the estimated tokens of the answer.
const VARYING = new Set(['nextCursor', 'estimatedTokens', 'budgetUsed', 'budgetRemaining']);

/** `v` with the VARYING members of every _ctxguard object replaced by '<varies>', in text items too. */
function unvary(v) {
  if (typeof v === 'string' && v.startsWith('{') && v.includes(`"${META_KEY}"`)) return JSON.stringify(unvary(JSON.parse(v)));
  if (Array.isArray(v)) return v.map(unvary);
  if (v && typeof v === 'object') {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, VARYING.has(k) && typeof x !== 'object' ? '<varies>' : unvary(x)]));
  }
  return v;
}

/** The ctxguard log lines of rewritten or fetched calls (`... ctxguard: call tool=<tool> ...`). */
const callRecords = (stderr) => stderr.split('\n').filter((l) => / call tool=/.test(l));

/**
 * Close a raw session's stdin, wait for ctxguard to exit (so that all of its
 * stderr has been read: the log and stdout are separate pipes) and return its
 * call records.
 */
async function endAndLog(g) {
  g.end();
  const { code } = await within(g.exited, 8000, 'ctxguard exit');
  assert.equal(code, 0, g.stderrText());
  return callRecords(g.stderrText());
}

// ---------------------------------------------------------------- server-everything

describe('server-everything: a task-augmented tools/call through ctxguard', { skip: SKIP, timeout: 90_000 }, () => {
  const cmd = serverCommand('everything');
  const opts = { capabilities: FULL_CLIENT_CAPABILITIES };
  let direct;
  let proxied; // defaults: the report is far under the budget
  let tiny; // TINY: the report is over the hard cap
  const runs = {}; // name -> messages of callToolStream

  /** Run the task tool with callToolStream; returns every message (taskCreated, taskStatus..., result or error). */
  const runTask = async (session, topic) => {
    const messages = [];
    const stream = session.client.experimental.tasks.callToolStream(
      { name: TASK_TOOL, arguments: { topic, ambiguous: false } }, undefined, { task: { ttl: 60_000 } });
    for await (const m of stream) {
      if (m.type === 'error') messages.push({ type: 'error', message: m.error.message });
      else if (m.type === 'result' && session !== direct) messages.push({ ...m, result: checkWayOn(m.result) });
      else messages.push(m);
    }
    return messages;
  };

  before(async () => {
    [direct, proxied, tiny] = await Promise.all([
      connectDirect(cmd, opts),
      connectProxied(cmd, [], opts),
      connectProxied(cmd, [...TINY, '--log-level', 'info'], opts),
    ]);
  });

  after(async () => {
    await closeAllSessions();
  });

  test('the server advertises tasks for tools/call and lists simulate-research-query as task-only, through ctxguard too', T, async () => {
    for (const s of [direct, proxied]) {
      assert.deepEqual(s.client.getServerCapabilities().tasks?.requests?.tools?.call, {});
    }
    const [d, p] = await Promise.all([direct.client.listTools(), proxied.client.listTools(), tiny.client.listTools()]);
    const dt = d.tools.find((t) => t.name === TASK_TOOL);
    const pt = p.tools.find((t) => t.name === TASK_TOOL);
    assert.equal(dt?.execution?.taskSupport, 'required');
    assert.deepEqual(pt, dt, 'the task tool is listed unchanged (it has no outputSchema to remove)');
    assert.equal(p.tools.at(-1).name, FETCH);
  });

  test('the task runs on the three sessions (tools/call with a task, tasks/get, tasks/result)', { timeout: 60_000 }, async () => {
    // Concurrently: each run takes ~4 s (four 1-second stages).
    [runs.direct, runs.proxied, runs.tiny] = await Promise.all([runTask(direct, TOPIC), runTask(proxied, TOPIC), runTask(tiny, TOPIC)]);
    for (const [name, ms] of Object.entries(runs)) {
      assert.equal(ms[0].type, 'taskCreated', `${name}: ${JSON.stringify(ms[0])}`);
      assert.equal(ms.at(-1).type, 'result', `${name}: ${JSON.stringify(ms.at(-1))}`);
    }
    // The CreateTaskResult passes unchanged (but for the task's id and times).
    const norm = (v) => normalize(v, { uuids: true, isoTimes: true });
    assert.deepEqual(norm(runs.proxied[0]), norm(runs.direct[0]));
    assert.deepEqual(norm(runs.tiny[0]), norm(runs.direct[0]));
  });

  test('under the budget: the tasks/result answer is the direct one', T, () => {
    assert.ok(runs.proxied, 'the previous test ran the task');
    const d = runs.direct.at(-1).result;
    assert.ok(textOf(d).startsWith(`# Research Report: ${TOPIC}`));
    // Equal but for the task id in _meta (each session ran its own task).
    const untask = (r) => normalize(r, { uuids: true });
    assert.deepEqual(untask(runs.proxied.at(-1).result), untask(d));
    // Nothing was rewritten: no call record in the log (default level: info).
    assert.deepEqual(callRecords(proxied.stderrText()), []);
  });

  test('over the budget: the tasks/result answer is cut like a tools/call result, logged under the tool name, and rebuilt with ctxguard_fetch', T, async (t) => {
    assert.ok(runs.tiny, 'the previous test ran the task');
    const d = runs.direct.at(-1).result;
    const p = runs.tiny.at(-1).result;
    assert.notDeepEqual(p, d);
    const { text: piece, meta } = splitTextPiece(p);
    assert.equal(meta.offset, 0);
    assert.equal(meta.hasMore, true);
    assert.equal(meta.totalBytes, Buffer.byteLength(textOf(d)));
    assert.equal(meta.tokenBudget, 200);
    assert.ok(meta.estimatedTokens <= 400 * 1.01, `first answer of ${meta.estimatedTokens} estimated tokens, hard cap 400`);
    assert.ok(meta.hint.includes(FETCH), meta.hint);
    assert.ok(textOf(d).startsWith(piece));
    assert.equal(p.structuredContent, undefined, 'the report has no structuredContent, nor does its rewrite');
    const rec = await reconstructText(tiny.client, p);
    assert.equal(rec.text, textOf(d), 'the pieces rebuild the report byte for byte');
    assert.ok(rec.pieces >= 2);
    // One record for the result, named after the task's tool (the tools/call with the task was seen) ...
    // (The log is another pipe than the answers: wait until it has caught up.)
    const fetchRecords = (records) => records.filter((l) => l.includes(`call tool=${FETCH}:${TASK_TOOL} `));
    const records = await waitFor(() => {
      const r = callRecords(tiny.stderrText());
      return fetchRecords(r).length >= rec.pieces - 1 ? r : null;
    }, 5000, 'a call record for every piece fetched');
    const results = records.filter((l) => l.includes(`call tool=${TASK_TOOL} `));
    assert.equal(results.length, 1, records.join('\n'));
    assert.match(results[0], /stages=\S*chunk/, 'text over the chunk size is chunked');
    assert.ok(!records.some((l) => / call tool=task:/.test(l)), records.join('\n'));
    // ... and the pieces were fetched from that result.
    assert.equal(fetchRecords(records).length, rec.pieces - 1);
    t.diagnostic(`report of ${meta.totalBytes} bytes in ${rec.pieces} pieces`);
  });
});

// ---------------------------------------------------------------- raw server

/**
 * A raw JSON-RPC client on a rawProxy session: request(method, params) sends a
 * line and resolves with {id, line, msg} of the answer with that id;
 * callTool({name, arguments}) resolves with the tools/call result (for
 * lib/reconstruct.mjs).
 */
function rawClient(g, firstId = 1) {
  let nextId = firstId;
  const parsed = []; // ids of the complete stdout lines, parsed once each
  const idAt = (i, l) => {
    while (parsed.length <= i) parsed.push(undefined);
    if (parsed[i] === undefined) parsed[i] = { id: JSON.parse(l).id };
    return parsed[i].id;
  };
  const request = async (method, params) => {
    const id = nextId++;
    await g.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    const line = await waitFor(() => g.lines().find((l, i) => idAt(i, l) === id), 10_000, `the answer to request ${id} (${method})`);
    const msg = JSON.parse(line);
    // A tool result's way on checked, then the data handed over (lib/client-cuts.mjs).
    if (msg.result?.content) msg.result = checkWayOn(msg.result);
    return { id, line, msg };
  };
  return {
    request,
    async callTool({ name, arguments: args }) {
      const { msg } = await request('tools/call', { name, arguments: args });
      assert.ok(msg.result, `tools/call ${name}: ${JSON.stringify(msg).slice(0, 300)}`);
      return msg.result;
    },
  };
}

/** params._meta that makes lib/raw-server.mjs answer with `resultText`, verbatim. */
const scripted = (resultText) => ({ 'raw-server/result': resultText });

/** The JSON text of a CreateTaskResult, spaced oddly (it must pass byte for byte). */
const taskAnswer = (taskId) => `{ "task" : {"taskId":"${taskId}", "status":"working","ttl":60000,`
  + '"createdAt":"2026-01-02T03:04:05.000Z","lastUpdatedAt":"2026-01-02T03:04:05.000Z","pollInterval":100} }';

// A tool result far over the default budget: 400 rows as pretty-printed JSON
// text, mirrored in structuredContent. A page of 50 rows fits the budget with
// room to spare, so every rewrite shows exactly the first 50 (--page-size).
const ROWS = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}`, note: 'caf\u00e9 ✓', tags: ['a', 'b'], score: i * 1.5 }));
const BIG_VALUE = { rows: ROWS, total: ROWS.length };
const BIG_RESULT = JSON.stringify({ content: [{ type: 'text', text: JSON.stringify(BIG_VALUE, null, 2) }], structuredContent: BIG_VALUE });

describe('raw server: tasks/result answers go through the budget pipeline', { skip: SKIP, timeout: 60_000 }, () => {
  after(() => killAllRaw());

  test('the task answer passes byte for byte; the over-budget tasks/result answer is paginated exactly like the same tools/call result and rebuilds to it', T, async () => {
    const g = rawProxy(rawServerCommand());
    const c = rawClient(g);
    const created = await c.request('tools/call', { name: 'report', arguments: {}, task: { ttl: 60_000 }, _meta: scripted(taskAnswer('task-7')) });
    assert.equal(created.line, `{"jsonrpc":"2.0","id":${created.id},"result":${taskAnswer('task-7')}}`);

    const viaTask = await c.request('tasks/result', { taskId: 'task-7', _meta: scripted(BIG_RESULT) });
    const viaCall = await c.request('tools/call', { name: 'report', arguments: {}, _meta: scripted(BIG_RESULT) });
    for (const { msg } of [viaTask, viaCall]) {
      const r = msg.result;
      assert.equal(r.content.length, 1);
      const json = JSON.parse(textOf(r));
      const meta = json[META_KEY];
      assert.equal(meta?.path, '/rows', `a paginated answer: ${textOf(r).slice(0, 300)}`);
      assert.equal(meta.totalCount, ROWS.length);
      assert.equal(meta.pageSize, 50);
      assert.equal(meta.hasMore, true);
      assert.ok(meta.estimatedTokens <= 4000 * 1.01, `${meta.estimatedTokens} estimated tokens`);
      assert.deepEqual(r.structuredContent, json, 'the mirror follows the rewritten text');
      const rec = await reconstructJson(c, r);
      assert.deepEqual(rec.value, BIG_VALUE, 'the pages rebuild the server value');
    }
    // Exactly the rewrite of a tools/call result (but for the cursors, which name another
    // cache entry, and the token figures, which count the cursors).
    assert.deepEqual(unvary({ ...viaTask.msg, id: 0 }), unvary({ ...viaCall.msg, id: 0 }));

    // Two records for the two results, both under the tool's name; pages under ctxguard_fetch:report.
    const records = await endAndLog(g);
    assert.equal(records.filter((l) => l.includes(' call tool=report ')).length, 2, records.join('\n'));
    assert.ok(records.some((l) => l.includes(` call tool=${FETCH}:report `)));
    assert.ok(!records.some((l) => l.includes('tool=task:')), records.join('\n'));
  });

  test('a tasks/result answer under the budget passes byte for byte, as does one that is not a tool result', T, async () => {
    const g = rawProxy(rawServerCommand());
    const c = rawClient(g);
    await c.request('tools/call', { name: 'small', arguments: {}, task: {}, _meta: scripted(taskAnswer('task-s')) });
    // Spellings a rewrite would change: spacing, 1.50, 1E3, an escaped é, key order.
    const small = '{ "isError":false, "content" : [ {"type":"text","text":"{\\n  \\"a\\": 1.50,\\n  \\"b\\": 1E3, \\"c\\": \\"caf\\\\u00e9\\"\\n}"} ] }';
    const r = await c.request('tasks/result', { taskId: 'task-s', _meta: scripted(small) });
    assert.equal(r.line, `{"jsonrpc":"2.0","id":${r.id},"result":${small}}`);
    // No content array: not a tool result, never touched (here the raw server's {"line": ...} echo).
    const other = await c.request('tasks/result', { taskId: 'task-s', pad: 'x'.repeat(100_000) });
    assert.equal(other.msg.result.line.length > 100_000, true);
    assert.equal(other.line, JSON.stringify({ jsonrpc: '2.0', id: other.id, result: { line: other.msg.result.line } }));
    assert.deepEqual(await endAndLog(g), [], 'nothing was rewritten');
  });

  test('interleaved tasks of two tools: each tasks/result is logged under its own tool; an unseen task as task:<taskId>', T, async () => {
    const g = rawProxy(rawServerCommand());
    const c = rawClient(g);
    await c.request('tools/call', { name: 'alpha', arguments: {}, task: {}, _meta: scripted(taskAnswer('task-a')) });
    await c.request('tools/call', { name: 'beta', arguments: {}, task: {}, _meta: scripted(taskAnswer('task-b')) });
    const b = await c.request('tasks/result', { taskId: 'task-b', _meta: scripted(BIG_RESULT) });
    const a = await c.request('tasks/result', { taskId: 'task-a', _meta: scripted(BIG_RESULT) });
    const u = await c.request('tasks/result', { taskId: 'task-unseen', _meta: scripted(BIG_RESULT) });
    for (const { msg } of [a, b, u]) {
      assert.equal(JSON.parse(textOf(msg.result))[META_KEY]?.path, '/rows');
      assert.deepEqual((await reconstructJson(c, msg.result)).value, BIG_VALUE);
    }
    const records = (await endAndLog(g)).filter((l) => / stages=\S*paginate/.test(l));
    const tools = records.map((l) => / call tool=(\S+) /.exec(l)[1]);
    assert.deepEqual(tools, ['beta', 'alpha', 'task:task-unseen'], records.join('\n'));
  });

  test('tasks/result asked twice for the same task: both answers rewritten, both logged under the tool name', T, async () => {
    const g = rawProxy(rawServerCommand());
    const c = rawClient(g);
    await c.request('tools/call', { name: 'report', arguments: {}, task: {}, _meta: scripted(taskAnswer('task-r')) });
    for (let i = 0; i < 2; i++) {
      const { msg } = await c.request('tasks/result', { taskId: 'task-r', _meta: scripted(BIG_RESULT) });
      assert.equal(JSON.parse(textOf(msg.result))[META_KEY]?.path, '/rows', 'rewritten');
    }
    const tools = (await endAndLog(g)).map((l) => / call tool=(\S+) /.exec(l)[1]);
    assert.deepEqual(tools, ['report', 'report']);
  });
});
