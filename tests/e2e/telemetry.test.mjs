// Telemetry end to end (issue 6): the real SDK client, the real server-filesystem and
// server-everything, the real ctxguard binary with --telemetry-file, --metrics-listen and
// --metrics-linger, and `ctxguard stats` over what it wrote:
//   - one record per answered call, in the order of the answers, with the ids seen on the wire,
//     the right kind/tool/outcome, final_bytes equal to the exact length of the line the client
//     received (captured from ctxguard's stdout), reduction_pct agreeing with the tokens, the
//     reason of a refused cursor, and never a byte of any payload;
//   - refused fetches are filed under their reason (cursor problems also in
//     ctxguard_cursor_errors_total, argument mistakes not); observe mode records what enforce
//     would have sent while the client gets the server's line; on raw pipes, string ids,
//     tasks/result (kind task), resources/read (kind resource) and compaction-only answers;
//   - `ctxguard stats` (json, table, csv, stdin) gives the sums a JS fold of the records gives,
//     its filters narrow them, lines that are not records are counted; a missing file exits 2;
//   - /metrics is valid Prometheus text (promtool check metrics) whose counters are the calls
//     made; /health names the server's pid and the rates of the records;
//   - a SIGKILLed server: /health 503 "down" during --metrics-linger, ctxguard_server_up 0, the
//     client's stdout at its end, SIGTERM ends the linger at once;
//   - a telemetry file that cannot be written (/dev/full) changes no answer and is counted and
//     logged once; an unopenable path stops the start-up; SIGHUP after logrotate starts a new
//     file; a queue of one drops but never loses count and never holds up a call;
//   - the oversize alert: exactly one warning per window once more than 5% of at least 20 calls
//     were over the budget, whichever calls came first;
//   - --metrics-listen refuses a bad address (exit 2) and a port in use (exit 127) before the
//     server starts;
//   - the decision log line of a shortened call at the default level, none for a passthrough.
// Product bugs found while writing these tests were fixed; each keeps the test that found it.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  alterCursor,
  closeAllSessions,
  connectProxied,
  connectSession,
  killAllRaw,
  makeDataFolder,
  makeFiles,
  makeTempDir,
  pidAlive,
  proxiedSession,
  rawProxy,
  rawServerCommand,
  removeDir,
  runCtxguard,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
  within,
} from './lib/harness.mjs';
import { splitTextPiece, textOf } from './lib/reconstruct.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };
const FETCH = 'ctxguard_fetch';
const BUDGET = 4000; // ctxguard's default --token-budget

// A string in the served files' names and contents (and nowhere else): the records must never
// hold it, whatever the answers carried.
const CANARY = 'zqcanary7f3e';

// ---------------------------------------------------------------- helpers

const call = (session, name, args = {}) => session.client.callTool({ name, arguments: args });

/**
 * A proxied session whose stdout bytes are also kept as they came (the SDK's wire log holds
 * parsed messages only): `rawResponses()` maps each response id to the byte length of its line.
 */
async function connectCapturing(cmd, ctxguardArgs) {
  const session = proxiedSession(cmd, ctxguardArgs);
  const chunks = [];
  const start = session.transport.start.bind(session.transport);
  session.transport.start = async () => {
    const started = start(); // spawns synchronously: session.proc is set now
    session.proc.stdout.on('data', (c) => chunks.push(c));
    return started;
  };
  session.rawResponses = () => {
    const all = Buffer.concat(chunks);
    const byId = new Map();
    let from = 0;
    for (let nl = all.indexOf(0x0a); nl >= 0; from = nl + 1, nl = all.indexOf(0x0a, from)) {
      const line = all.subarray(from, nl);
      const msg = JSON.parse(line.toString('utf8'));
      if (msg.id !== undefined && msg.method === undefined) byId.set(msg.id, line.length);
    }
    return byId;
  };
  return connectSession(session);
}

/** The id of the last tools/call the client sent. */
function lastCallId(session) {
  return session.wire.filter((m) => m.dir === 'out' && m.msg.method === 'tools/call').at(-1).msg.id;
}

/** Base URL of a session's metrics endpoint, from its `metrics endpoint:` log line. */
async function metricsBase(session) {
  const url = await waitFor(() => /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(session.stderrText())?.[1],
    5000, 'the "metrics endpoint:" log line');
  return url;
}

async function getText(base, target) {
  const res = await fetch(base + target);
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

async function health(base) {
  const { status, text } = await getText(base, '/health');
  return { status, body: JSON.parse(text) };
}

/** Samples of Prometheus text: [{name, labels, value}]. */
function parseMetrics(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${JSON.stringify(line)}`);
    const labels = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return samples;
}

/** The value of the one sample `name` whose labels include `labels` (undefined when none). */
function sample(samples, name, labels = {}) {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

async function metrics(base) {
  return parseMetrics((await getText(base, '/metrics')).text);
}

const PROMTOOL = ['/usr/bin/promtool', 'promtool'].find((p) => spawnSync(p, ['--version']).status === 0);

/** `promtool check metrics` of `text`: {code, output}. */
function promtoolCheck(text) {
  return new Promise((resolve, reject) => {
    const child = spawn(PROMTOOL, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output: Buffer.concat(out).toString('utf8') }));
    child.stdin.end(text);
  });
}

/** The records of a telemetry file. */
/** The call records of a telemetry file (a tools/list's record, kind tools_list, is not a call). */
function readRecords(file) {
  return readAllRecords(file).filter((r) => r.kind !== 'tools_list');
}

function readAllRecords(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l));
}

/** 100 * (1 - final / original) to two decimals, 0 when nothing was saved (call_event.cpp). */
function reductionPct(original, final) {
  if (original === 0 || final >= original) return 0;
  return Math.round((10000 * (original - final)) / original) / 100;
}

/** `ctxguard stats ...`: {code, stdout, stderr, json (for --format json)}. */
async function stats(args) {
  const r = await runCtxguard(['stats', ...args]);
  return { ...r, json: args.includes('json') && r.code === 0 ? JSON.parse(r.stdout) : undefined };
}

/**
 * A result with its cursors (signed with a per-session key) replaced by <CURSOR>, and the token
 * estimates (which count the cursors' characters) by 0: what two sessions may differ in.
 */
function maskCursors(result) {
  return JSON.parse(JSON.stringify(result)
    .replace(/([Cc]ursor(?:\\*)":(?:\\*)")[A-Za-z0-9_-]+/g, '$1<CURSOR>')
    .replace(/((?:estimatedTokens|budgetUsed|budgetRemaining)(?:\\*)":)[0-9.]+/g, (_, key) => `${key}0`));
}

/** A command that leaves `marker` behind if it ever runs (to prove no server was started). */
function markerCommand(marker) {
  return [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`];
}

function countMatches(text, re) {
  return (text.match(re) ?? []).length;
}

// ---------------------------------------------------------------- one session, every kind of record

describe('telemetry of a real session: records, stats, /metrics, /health, log lines', { skip: SKIP, timeout: 120_000 }, () => {
  let tmp;
  let root;
  let data;
  let tfile;
  let s; // the proxied session (default settings, --telemetry-file, --metrics-listen 0)
  let records;
  let raw; // response id -> byte length of the line the client received
  let ids; // tools/call ids in the order the client sent them
  const R = {}; // the answers the client got
  let scraped; // {metricsText, healthStatus, health} taken while the session ran
  let serverPidFromLog;

  before(async () => {
    tmp = makeTempDir('ctxguard-telemetry-');
    root = path.join(tmp, 'root');
    data = makeDataFolder(root); // logs/app.log: 10,000 lines, 1.9 MB
    fs.appendFileSync(data.logFile, `2024-01-02T03:00:00.000Z INFO  [worker-0] req=999999 ${CANARY} the last line\n`);
    fs.writeFileSync(path.join(root, 'canary.txt'), `A small file that says ${CANARY} once.\n`);
    makeFiles(path.join(root, 'many'), 3000, (i) => `${CANARY}_${String(i).padStart(5, '0')}.txt`);
    tfile = path.join(tmp, 'calls.jsonl');

    s = await connectCapturing(serverCommand('filesystem', root), ['--telemetry-file', tfile, '--metrics-listen', '0']);
    await s.client.listTools(); // the SDK checks structuredContent against the schemas it has seen
    serverPidFromLog = await waitFor(() => s.serverPid(), 5000, 'the "server started: pid=" log line');

    R.small = await call(s, 'read_text_file', { path: path.join(root, 'canary.txt') });
    R.paged = await call(s, 'directory_tree', { path: path.join(root, 'many') });
    R.chunked = await call(s, 'read_text_file', { path: data.logFile });
    const cursor = JSON.parse(textOf(R.paged))._ctxguard.nextCursor;
    R.fetched = await call(s, FETCH, { cursor });
    // A letter of the signature changed: the cursor is well formed but not ctxguard's.
    R.forged = await call(s, FETCH, { cursor: alterCursor(cursor, cursor.length - 3) });
    R.unknown = await call(s, 'no_such_tool', { x: CANARY });
    // tools/call without a name: the server answers with a JSON-RPC error.
    R.rpcError = await s.client.request({ method: 'tools/call', params: { arguments: { x: CANARY } } }, CallToolResultSchema)
      .then(() => null, (e) => e);
    ids = s.wire.filter((m) => m.dir === 'out' && m.msg.method === 'tools/call').map((m) => m.msg.id);

    const base = await metricsBase(s);
    const m = await getText(base, '/metrics');
    const h = await health(base);
    scraped = { metricsText: m.text, metricsType: m.type, healthStatus: h.status, health: h.body };

    raw = s.rawResponses();
    await s.client.close();
    await within(s.exited, 10_000, 'ctxguard exit after the client closed');
    records = readRecords(tfile);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(tmp);
  });

  test('the client got what each record is about (a passthrough, a page, a chunk, a fetched page, a refused cursor, an isError, a JSON-RPC error)', T, () => {
    assert.ok(!R.small.isError && textOf(R.small).includes(CANARY));
    assert.ok(JSON.parse(textOf(R.paged))._ctxguard.hasMore);
    assert.ok(splitTextPiece(R.chunked).meta.hasMore);
    assert.ok(!R.fetched.isError && JSON.parse(textOf(R.fetched)).items.length > 0);
    assert.equal(R.forged.isError, true);
    assert.match(textOf(R.forged), /altered or comes from another ctxguard session/);
    assert.equal(R.unknown.isError, true);
    assert.ok(R.rpcError, 'a tools/call without a name must fail');
    const rpcAnswer = s.wire.find((m) => m.dir === 'in' && m.msg.id === ids[6] && !m.msg.method)?.msg;
    assert.ok(Number.isInteger(rpcAnswer?.error?.code), `a JSON-RPC error on the wire: ${JSON.stringify(rpcAnswer)}`);
    assert.equal(rpcAnswer.result, undefined);
    assert.equal(ids.length, 7);
  });

  test('the file has one record per call, in the order of the calls, with the wire ids and the right kind, tool and outcome', T, () => {
    assert.equal(records.length, 7, `records:\n${records.map((r) => JSON.stringify(r)).join('\n')}`);
    assert.deepEqual(records.map((r) => r.id), ids);
    assert.deepEqual(records.map((r) => [r.kind, r.tool, r.outcome]), [
      ['call', 'read_text_file', 'passthrough'],
      ['call', 'directory_tree', 'paginated'],
      ['call', 'read_text_file', 'chunked'],
      ['fetch', `${FETCH}:directory_tree`, 'fetched'],
      ['fetch', FETCH, 'fetch-error'],
      ['call', 'no_such_tool', 'passthrough'],
      ['call', '', 'error'],
    ]);
    for (const r of records) {
      assert.equal(r.mode, 'enforce');
      assert.equal(r.budget, BUDGET, `budget of ${r.id}`);
      assert.ok(!Number.isNaN(Date.parse(r.time)), `time ${r.time}`);
      assert.ok(typeof r.proxy_ms === 'number' && r.proxy_ms >= 0, `proxy_ms of ${r.id}`);
      // The server is asked for calls, never for fetches.
      if (r.kind === 'call') assert.ok(typeof r.server_ms === 'number' && r.server_ms > 0, `server_ms of ${r.id}: ${r.server_ms}`);
      else assert.equal(r.server_ms, undefined, `server_ms of fetch ${r.id}`);
      assert.deepEqual([r.pagination_used, r.summarization_used, r.chunking_used, r.compaction_used],
        [r.stages.includes('paginate'), r.stages.some((x) => ['summarize', 'project', 'hard-cap'].includes(x)),
          r.stages.includes('chunk'), r.stages.some((x) => ['compact', 'tables'].includes(x))], `*_used of ${r.id}`);
    }
    const times = records.map((r) => Date.parse(r.time));
    assert.deepEqual(times, [...times].sort((a, b) => a - b), 'times in order');
    assert.equal(records[4].error, 'forged');
    for (const r of records.filter((x) => x !== records[4])) assert.equal(r.error, undefined, `error on ${r.id}`);
  });

  test('final_bytes is the exact length of the line the client received; original_bytes that of the server\'s line for passthroughs', T, () => {
    for (const r of records) {
      assert.ok(raw.has(r.id), `no response line for ${r.id}`);
      assert.equal(r.final_bytes, raw.get(r.id), `final_bytes of ${r.id} (${r.outcome})`);
      if (r.outcome === 'passthrough' || r.outcome === 'error') assert.equal(r.original_bytes, r.final_bytes, `original_bytes of ${r.id}`);
    }
    // The shortened answers: far smaller lines than the server's.
    for (const r of records.slice(1, 3)) assert.ok(r.original_bytes > 20 * r.final_bytes, `${r.original_bytes} -> ${r.final_bytes}`);
  });

  test('tokens, reduction_pct, over_budget and items agree with each other and with the answers', T, () => {
    for (const r of records) {
      assert.equal(r.reduction_pct, reductionPct(r.original_tokens, r.final_tokens), `reduction_pct of ${r.id}`);
      if (r.outcome === 'passthrough') assert.equal(r.final_tokens, r.original_tokens);
    }
    const [small, paged, chunked] = records;
    assert.equal(small.over_budget, false);
    assert.ok(small.original_tokens > 0 && small.original_tokens < BUDGET);
    for (const big of [paged, chunked]) {
      assert.equal(big.over_budget, true, `over_budget of ${big.tool}`);
      assert.ok(big.original_tokens > BUDGET && big.final_tokens <= BUDGET, `${big.original_tokens} -> ${big.final_tokens}`);
      assert.ok(big.reduction_pct > 90, `${big.reduction_pct}%`);
    }
    const meta = JSON.parse(textOf(R.paged))._ctxguard;
    assert.deepEqual([paged.items_total, paged.items_shown], [3000, meta.pageSize]);
    // The record measures the answer as sent; the answer's own estimate cannot count its own
    // digits exactly: the two agree within 1%.
    const near = (recorded, announced, what) => assert.ok(Math.abs(recorded - announced) <= announced / 100,
      `${what}: final_tokens ${recorded}, estimatedTokens ${announced}`);
    near(paged.final_tokens, meta.estimatedTokens, 'the page');
    assert.ok(chunked.stages.includes('chunk'));
    near(chunked.final_tokens, splitTextPiece(R.chunked).meta.estimatedTokens, 'the chunk');
    near(records[3].final_tokens, JSON.parse(textOf(R.fetched))._ctxguard.estimatedTokens, 'the fetched page');
    // fill_pct: the page's share of the token budget (no client limit here). This page holds
    // pageSize items (50, the default), so it is full at well under the budget.
    assert.equal(small.fill_pct, undefined, 'nothing rewritten, no fill');
    assert.ok(Math.abs(paged.fill_pct - (100 * paged.final_tokens) / BUDGET) <= 0.01, `fill_pct ${paged.fill_pct}`);
    assert.equal(paged.items_shown, 50);
    assert.ok(paged.fill_pct > 0 && paged.fill_pct <= 100, `fill_pct ${paged.fill_pct}`);
    assert.ok(chunked.fill_pct > 0 && chunked.fill_pct <= 100, `the chunk's fill ${chunked.fill_pct}`);
  });

  test('no payload: the canary in the files\' names and contents, the arguments and the data folder\'s path are not in the file', T, () => {
    const text = fs.readFileSync(tfile, 'utf8');
    assert.ok(JSON.stringify(R).includes(CANARY), 'the answers did carry the canary');
    assert.ok(!text.includes(CANARY), 'a payload reached the telemetry file');
    assert.ok(!text.includes(root), 'a path from the arguments reached the telemetry file');
    const cursor = JSON.parse(textOf(R.paged))._ctxguard.nextCursor;
    assert.ok(!text.includes(cursor), 'a cursor reached the telemetry file');
    assert.equal((fs.statSync(tfile).mode & 0o777).toString(8), '600', 'the file is private to its user');
  });

  test('ctxguard stats --format json: counts per outcome and token sums are those of the records', T, async () => {
    const { code, stderr, json } = await stats([tfile, '--format', 'json']);
    assert.equal(code, 0, stderr);
    assert.equal(stderr, '', 'no skipped lines');
    // 7 call records and the tools/list's (reported apart, in no total).
    assert.deepEqual(json.records, { read: 8, matched: 8, skipped_lines: 0, first_skipped: null });
    assert.equal(json.tool_lists.listings, 1);
    assert.equal(json.total.calls, 7);
    const sum = (rs, k) => rs.reduce((a, r) => a + r[k], 0);
    assert.equal(json.total.calls, 7);
    assert.equal(json.total.server_calls, 5);
    assert.equal(json.total.rewritten, 2);
    // The fill is taken over the answers the fit sized: the page (a chunk, a fetch: their request).
    const filled = records.filter((r) => r.fill_pct !== undefined && ['paginated', 'summarized'].includes(r.outcome));
    assert.ok(filled.length >= 1, `${filled.length} records with a fill`);
    assert.equal(json.total.fill_pct.samples, filled.length);
    assert.equal(json.total.fill_pct.min, Math.min(...filled.map((r) => r.fill_pct)));
    assert.equal(json.total.over_budget, records.filter((r) => r.over_budget).length);
    assert.equal(json.total.tokens_in, sum(records, 'original_tokens'));
    assert.equal(json.total.tokens_out, sum(records, 'final_tokens'));
    assert.equal(json.total.tokens_saved, sum(records, 'original_tokens') - sum(records, 'final_tokens'));
    assert.equal(json.total.bytes_in, sum(records, 'original_bytes'));
    assert.equal(json.total.bytes_out, sum(records, 'final_bytes'));
    assert.equal(json.total.fetches, 2);
    assert.equal(json.total.fetch_errors, 1);
    assert.deepEqual(json.total.fetch_errors_by_reason, { forged: 1 });
    assert.equal(json.total.proxy_ms.samples, 7);
    assert.equal(json.total.server_ms.samples, 5);
    assert.equal(json.total.proxy_ms.max, Math.max(...records.map((r) => r.proxy_ms)));
    // The span covers every record, the tools/list's too (it comes first).
    assert.equal(json.span.first, readAllRecords(tfile)[0].time);
    assert.equal(json.span.last, records.at(-1).time);

    const expected = {};
    for (const r of records) {
      expected[r.outcome] ??= { calls: 0, tokens_in: 0, tokens_out: 0 };
      expected[r.outcome].calls += 1;
      expected[r.outcome].tokens_in += r.original_tokens;
      expected[r.outcome].tokens_out += r.final_tokens;
    }
    const got = Object.fromEntries(json.outcomes.map((o) => [o.outcome, { calls: o.calls, tokens_in: o.tokens_in, tokens_out: o.tokens_out }]));
    assert.deepEqual(got, expected);
    // Per tool, the same fold.
    for (const t of json.tools) {
      const mine = records.filter((r) => r.tool === t.tool);
      assert.equal(t.calls, mine.length, t.tool);
      assert.equal(t.tokens_in, sum(mine, 'original_tokens'), t.tool);
      assert.equal(t.bytes_out, sum(mine, 'final_bytes'), t.tool);
    }
    assert.equal(json.tools.reduce((a, t) => a + t.calls, 0), 7);
  });

  test('ctxguard stats filters: --outcome paginated, --tool, --kind narrow the report to the matching records', T, async () => {
    const paged = records.find((r) => r.outcome === 'paginated');
    const p = await stats([tfile, '--format', 'json', '--outcome', 'paginated']);
    assert.equal(p.code, 0, p.stderr);
    assert.deepEqual([p.json.records.read, p.json.records.matched], [8, 1]);
    assert.deepEqual([p.json.total.calls, p.json.total.tokens_in, p.json.total.tokens_out, p.json.total.over_budget],
      [1, paged.original_tokens, paged.final_tokens, 1]);
    assert.deepEqual(p.json.outcomes.map((o) => o.outcome), ['paginated']);

    const reads = records.filter((r) => r.tool === 'read_text_file');
    const t = await stats([tfile, '--format', 'json', '--tool', 'read_*']);
    assert.equal(t.json.records.matched, 2);
    assert.deepEqual(t.json.tools.map((x) => x.tool), ['read_text_file']);
    assert.equal(t.json.total.tokens_in, reads.reduce((a, r) => a + r.original_tokens, 0));

    const f = await stats([tfile, '--format', 'json', '--tool', `${FETCH}*`, '--outcome', 'fetch-error,fetched']);
    assert.equal(f.json.records.matched, 2);
    assert.equal(f.json.total.fetches, 2);
    const k = await stats([tfile, '--format', 'json', '--kind', 'fetch']);
    assert.equal(k.json.records.matched, 2);
    const both = await stats([tfile, '--format', 'json', '--outcome', 'passthrough', '--tool', 'no_such_*']);
    assert.equal(both.json.records.matched, 1);
    const none = await stats([tfile, '--format', 'json', '--since', '2000-01-01', '--until', '2000-01-02']);
    assert.equal(none.code, 0);
    assert.equal(none.json.records.matched, 0);
  });

  test('ctxguard stats prints a table and CSV; a missing file or a bad --outcome exits 2 with a message', T, async () => {
    const table = await stats([tfile]);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^ctxguard stats\n/);
    assert.match(table.stdout, /records +8 read, 8 matched/);
    assert.match(table.stdout, /Tool lists \(1 listings/);
    assert.match(table.stdout, /\n {2}calls +7\n/);
    assert.match(table.stdout, /fetches +2 \(1 failed: forged 1\)/);
    for (const word of ['directory_tree', 'read_text_file', 'paginated', 'chunked', 'By tool', 'By outcome']) {
      assert.ok(table.stdout.includes(word), `the table names ${word}`);
    }
    const csv = await stats([tfile, '--format', 'csv']);
    assert.equal(csv.code, 0, csv.stderr);
    const rows = csv.stdout.trim().split('\n');
    assert.match(rows[0], /^tool,outcome,calls,/);
    const pagedRow = rows.find((r) => r.startsWith('directory_tree,paginated,'));
    assert.ok(pagedRow, csv.stdout);
    assert.equal(pagedRow.split(',')[2], '1');
    // One row per (tool, outcome): 7 records in 6 groups (read_text_file twice, differently).
    assert.equal(rows.length - 1, new Set(records.map((r) => `${r.tool}/${r.outcome}`)).size);

    // Lines that are not records are skipped and counted; '-' reads standard input.
    const lines = fs.readFileSync(tfile, 'utf8').split('\n');
    const mixed = [...lines.slice(0, 2), 'not a record', '', '{"time":"2024-01-01T00:00:00Z"}', ...lines.slice(2)].join('\n');
    const fromStdin = await runCtxguard(['stats', '--format', 'json', '-'], { input: mixed });
    assert.equal(fromStdin.code, 0, fromStdin.stderr);
    assert.match(fromStdin.stderr, /skipped 2 lines that are not call records \(first: <stdin>:3: /);
    const again = JSON.parse(fromStdin.stdout);
    assert.deepEqual([again.records.read, again.records.skipped_lines, again.total.calls], [8, 2, 7]);
    assert.equal(again.total.tokens_in, records.reduce((a, r) => a + r.original_tokens, 0));

    const missing = await stats([path.join(tmp, 'no-such-file.jsonl')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot open .*no-such-file\.jsonl/);
    assert.equal(missing.stdout, '');
    const bad = await stats([tfile, '--outcome', 'paged']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--outcome: unknown name 'paged'/);
  });

  test('/metrics passes promtool check metrics, and its counters are the calls made', T, async (t) => {
    const text = scraped.metricsText;
    assert.match(scraped.metricsType, /^text\/plain; version=0\.0\.4/);
    if (!PROMTOOL) {
      t.skip('promtool is not installed');
    } else {
      const { code, output } = await promtoolCheck(text);
      assert.equal(code, 0, `promtool check metrics:\n${output}`);
    }
    const m = parseMetrics(text);
    const calls = (tool, outcome) => sample(m, 'ctxguard_calls_total', { tool, outcome, mode: 'enforce' });
    assert.equal(calls('read_text_file', 'passthrough'), 1);
    assert.equal(calls('read_text_file', 'chunked'), 1);
    assert.equal(calls('directory_tree', 'paginated'), 1);
    assert.equal(calls(`${FETCH}:directory_tree`, 'fetched'), 1);
    assert.equal(calls(FETCH, 'fetch-error'), 1);
    assert.equal(calls('no_such_tool', 'passthrough'), 1);
    assert.equal(calls('', 'error'), 1);
    assert.equal(m.filter((x) => x.name === 'ctxguard_calls_total').reduce((a, x) => a + x.value, 0), 7);
    // The same calls by the client that made them (the harness's SDK client names itself).
    const byClient = m.filter((x) => x.name === 'ctxguard_client_calls_total');
    assert.deepEqual([...new Set(byClient.map((x) => x.labels.client))], ['ctxguard-e2e']);
    assert.equal(byClient.reduce((a, x) => a + x.value, 0), 7);
    assert.equal(sample(m, 'ctxguard_cursor_errors_total', { reason: 'forged' }), 1);
    for (const reason of ['missing', 'malformed', 'expired', 'evicted', 'mismatch']) {
      assert.equal(sample(m, 'ctxguard_cursor_errors_total', { reason }), 0, reason);
    }
    assert.equal(sample(m, 'ctxguard_server_up'), 1);
    assert.equal(sample(m, 'ctxguard_oversized_calls_total', { tool: 'directory_tree', mode: 'enforce' }), 1);
    assert.equal(sample(m, 'ctxguard_oversized_calls_total', { tool: 'read_text_file', mode: 'enforce' }), 1);
    const byTool = (name, tool) => sample(m, name, { tool, mode: 'enforce' });
    for (const tool of ['read_text_file', 'directory_tree']) {
      const mine = records.filter((r) => r.tool === tool);
      assert.equal(byTool('ctxguard_original_tokens_total', tool), mine.reduce((a, r) => a + r.original_tokens, 0), tool);
      assert.equal(byTool('ctxguard_final_tokens_total', tool), mine.reduce((a, r) => a + r.final_tokens, 0), tool);
      assert.equal(byTool('ctxguard_final_bytes_total', tool), mine.reduce((a, r) => a + r.final_bytes, 0), tool);
    }
    // Latency histograms count every record (server latency: the 5 calls).
    assert.equal(sample(m, 'ctxguard_proxy_latency_seconds_count'), 7);
    assert.equal(sample(m, 'ctxguard_server_latency_seconds_count'), 5);
    assert.equal(sample(m, 'ctxguard_proxy_latency_seconds_bucket', { le: '+Inf' }), 7);
    // Two results are cached for ctxguard_fetch (the tree and the log).
    assert.equal(sample(m, 'ctxguard_cache_entries'), 2);
    // The records had been handed to the writer; how many were on disk depends on its thread
    // (the 7 calls' and the tools/list's).
    const written = sample(m, 'ctxguard_telemetry_records_total', { result: 'written' });
    assert.ok(written <= 8, `${written} written`);
    assert.equal(sample(m, 'ctxguard_telemetry_records_total', { result: 'dropped' }), 0);
    assert.equal(sample(m, 'ctxguard_telemetry_records_total', { result: 'failed' }), 0);
  });

  test('/health: status ok, the server\'s pid from the log, rates and averages of the records', T, () => {
    assert.equal(scraped.healthStatus, 200);
    const h = scraped.health;
    assert.equal(h.status, 'ok');
    assert.deepEqual(h.server, { pid: serverPidFromLog, state: 'running' });
    assert.ok(serverPidFromLog !== s.pid && serverPidFromLog > 0);
    assert.equal(h.clientConnected, true);
    const toolCalls = records.filter((r) => r.kind === 'call');
    assert.equal(h.toolCalls, toolCalls.length);
    assert.equal(h.rewritten, 2);
    assert.equal(h.paginationAdoptionRate, Math.round((10000 * 1) / toolCalls.length) / 10000);
    assert.equal(h.chunkingRate, Math.round((10000 * 1) / toolCalls.length) / 10000);
    assert.equal(h.oversizeRate, Math.round((10000 * 2) / toolCalls.length) / 10000);
    const bytes = toolCalls.reduce((a, r) => a + r.final_bytes, 0);
    assert.equal(h.averageAnswerBytes, Math.round((10000 * bytes) / toolCalls.length) / 10000);
    assert.deepEqual([h.fetches, h.fetchErrors], [2, 1]);
    assert.deepEqual([h.oversizeAlert.callsInWindow, h.oversizeAlert.oversizedInWindow, h.oversizeAlert.alerts], [5, 2, 0]);
    assert.equal(h.telemetryFile.dropped + h.telemetryFile.failed, 0);
  });

  test('log: a shortened call logs its decision at the default level (outcome, reduction, oversized); a passthrough logs nothing', T, () => {
    const log = s.stderrText();
    const lineOf = (id) => log.split('\n').filter((l) => / call tool=/.test(l) && l.includes(` id=${id} `));
    const [small, paged, chunked, fetched, forged, unknown, rpcError] = records;
    const [pagedLine] = lineOf(paged.id);
    assert.ok(pagedLine, `no log line for the paginated call:\n${log}`);
    assert.match(pagedLine, / info /);
    assert.match(pagedLine, /tool=directory_tree /);
    assert.ok(pagedLine.includes(` tokens=${paged.original_tokens}->${paged.final_tokens} `), pagedLine);
    assert.ok(pagedLine.includes(` bytes=${paged.original_bytes}->${paged.final_bytes} `), pagedLine);
    assert.ok(pagedLine.includes(` items=${paged.items_shown}/${paged.items_total} `), pagedLine);
    assert.ok(pagedLine.includes(' outcome=paginated '), pagedLine);
    assert.ok(pagedLine.includes(` reduction=${paged.reduction_pct.toFixed(1)}% `), pagedLine);
    assert.ok(pagedLine.includes(` budget=${BUDGET} oversized `), pagedLine);
    assert.match(pagedLine, / proxy_ms=\d+\.\d{3} server_ms=\d+\.\d{3}$/);
    assert.match(lineOf(chunked.id)[0] ?? '', / outcome=chunked .* oversized /);
    assert.match(lineOf(fetched.id)[0] ?? '', / outcome=fetched /);
    assert.match(lineOf(forged.id)[0] ?? '', / outcome=fetch-error .* error=forged /);
    // Passthroughs and server errors are DEBUG lines.
    for (const r of [small, unknown, rpcError]) assert.deepEqual(lineOf(r.id), [], `a line for ${r.outcome} call ${r.id}`);
    assert.doesNotMatch(log, /oversized answers:/, 'no alert for 2 oversized of 5 calls (fewer than 20)');
    assert.ok(!log.includes(CANARY), 'the log carries no payload either');
  });
});

// ---------------------------------------------------------------- fetch failures and observe mode

describe('records of refused fetches and of observe mode', { skip: SKIP, timeout: 60_000 }, () => {
  let tmp;
  let dir;

  before(() => {
    tmp = makeTempDir('ctxguard-telemetry-modes-');
    dir = path.join(tmp, 'many');
    makeFiles(dir, 1000);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(tmp);
  });

  test('each refused ctxguard_fetch is filed under its reason; argument mistakes are not cursor errors', T, async () => {
    const tfile = path.join(tmp, 'fetches.jsonl');
    const s = await connectProxied(serverCommand('filesystem', tmp), ['--telemetry-file', tfile, '--metrics-listen', '0']);
    await s.client.listTools();
    const base = await metricsBase(s);
    const cursor = JSON.parse(textOf(await call(s, 'directory_tree', { path: dir })))._ctxguard.nextCursor;
    const refused = [
      [{}, 'missing'],
      [{ cursor: 'garbage' }, 'malformed'],
      [{ cursor, limit: 0 }, 'argument'],
      [{ cursor, fields: 'name' }, 'argument'],
    ];
    for (const [args] of refused) assert.equal((await call(s, FETCH, args)).isError, true, JSON.stringify(args));
    const m = await metrics(base);
    await s.client.close();
    await within(s.exited, 10_000, 'ctxguard exit');

    const recs = readRecords(tfile).slice(1);
    assert.deepEqual(recs.map((r) => [r.outcome, r.error]), refused.map(([, reason]) => ['fetch-error', reason]));
    // Refused before the cached result is looked up: the tool is not known (argument mistakes
    // found later, such as a limit over maxPageSize, are filed as ctxguard_fetch:<tool>).
    assert.deepEqual(recs.map((r) => r.tool), [FETCH, FETCH, FETCH, FETCH]);
    for (const r of recs) assert.equal(r.server_ms, undefined);
    const reasons = Object.fromEntries(m.filter((x) => x.name === 'ctxguard_cursor_errors_total').map((x) => [x.labels.reason, x.value]));
    assert.deepEqual(reasons, { missing: 1, malformed: 1, forged: 0, expired: 0, evicted: 0, mismatch: 0 });
    const failed = m.filter((x) => x.name === 'ctxguard_calls_total' && x.labels.outcome === 'fetch-error').reduce((a, x) => a + x.value, 0);
    assert.equal(failed, 4);
    const st = await stats([tfile, '--format', 'json']);
    assert.deepEqual(st.json.total.fetch_errors_by_reason, { argument: 2, malformed: 1, missing: 1 });
  });

  test('--mode observe: the client gets the server\'s line, the record says what enforce would have sent, stats and /health keep it apart', T, async () => {
    const tfile = path.join(tmp, 'observe.jsonl');
    const s = await connectCapturing(serverCommand('filesystem', tmp), ['--mode', 'observe', '--telemetry-file', tfile, '--metrics-listen', '0']);
    await s.client.listTools();
    const base = await metricsBase(s);
    const r = await call(s, 'directory_tree', { path: dir });
    assert.equal(JSON.parse(textOf(r)).length, 1000, 'the whole tree, as the server sent it');
    const id = lastCallId(s);
    const h = (await health(base)).body;
    const m = await metrics(base);
    const raw = s.rawResponses();
    await s.client.close();
    await within(s.exited, 10_000, 'ctxguard exit');

    const [rec] = readRecords(tfile);
    assert.equal(rec.id, id);
    assert.deepEqual([rec.mode, rec.outcome, rec.over_budget], ['observe', 'paginated', true]);
    assert.equal(rec.original_bytes, raw.get(id), 'the client got the server\'s line');
    assert.ok(rec.final_bytes < rec.original_bytes / 5, `would have sent ${rec.final_bytes} of ${rec.original_bytes} bytes`);
    assert.ok(rec.final_tokens <= BUDGET && rec.original_tokens > BUDGET);
    assert.equal(rec.reduction_pct, reductionPct(rec.original_tokens, rec.final_tokens));
    assert.deepEqual([h.toolCalls, h.observedCalls, h.paginationAdoptionRate], [0, 1, 0]);
    assert.equal(sample(m, 'ctxguard_calls_total', { tool: 'directory_tree', outcome: 'paginated', mode: 'observe' }), 1);
    assert.equal(sample(m, 'ctxguard_calls_total', { tool: 'directory_tree', outcome: 'paginated', mode: 'enforce' }), undefined);
    const st = await stats([tfile, '--format', 'json']);
    assert.equal(st.json.total.calls, 0, 'observe records are no enforce calls');
    assert.deepEqual([st.json.observe.calls, st.json.observe.tokens_in, st.json.observe.tokens_out],
      [1, rec.original_tokens, rec.final_tokens]);
    const table = await stats([tfile]);
    assert.match(table.stdout, /observe mode +1 call, would have saved \d+ tokens/);
  });
});

// ---------------------------------------------------------------- raw pipes: every kind of record

describe('raw pipes (lib/raw-server.mjs): records of every kind, tool labels', { skip: SKIP, timeout: 60_000 }, () => {
  let tmp;

  before(() => {
    tmp = makeTempDir('ctxguard-telemetry-raw-');
  });

  after(() => {
    killAllRaw();
    removeDir(tmp);
  });

  test('one record per answer with the id as sent (a string too), kind call/task/resource, and final_bytes the UTF-8 length of the line sent', T, async () => {
    const tfile = path.join(tmp, 'raw.jsonl');
    const g = rawProxy(rawServerCommand(), ['--telemetry-file', tfile]);
    const scripted = (resultText) => ({ 'raw-server/result': resultText });
    const lineOf = async (id, method, params) => {
      await g.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return g.waitForLine((l) => JSON.parse(l).id === id, 10_000);
    };
    const rows = Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}`, note: 'café ✓ 東京' }));
    const bigTool = JSON.stringify({ content: [{ type: 'text', text: JSON.stringify({ rows }, null, 2) }] });
    const logText = Array.from({ length: 3000 }, (_, i) => `2024-01-02 INFO line ${i} ü ${'word '.repeat(8)}`).join('\n');
    // JSON over the budget as the server spaced it that fits once minified (compacted, not cut).
    const spacedValue = { rows: Array.from({ length: 120 }, (_, i) => ({ id: i, on: i % 2 === 0, pair: [i, -i], meta: { k: 'v' } })) };
    const spaced = JSON.stringify(spacedValue, null, 4);

    const lines = {};
    lines.small = await lineOf('call-é✓', 'tools/call', { name: 'small', arguments: {}, _meta: scripted('{"content":[{"type":"text","text":"naïve ✓ 😀"}]}') });
    lines.task = await lineOf(2, 'tools/call', { name: 'report', arguments: {}, task: {}, _meta: scripted('{"task":{"taskId":"t-1","status":"working","ttl":60000,"createdAt":"2026-01-02T03:04:05.000Z","lastUpdatedAt":"2026-01-02T03:04:05.000Z"}}') });
    lines.taskResult = await lineOf(3, 'tasks/result', { taskId: 't-1', _meta: scripted(bigTool) });
    lines.resource = await lineOf(4, 'resources/read', { uri: 'file:///var/log/big.log', _meta: scripted(JSON.stringify({ contents: [{ uri: 'file:///var/log/big.log', mimeType: 'text/plain', text: logText }] })) });
    lines.compacted = await lineOf(5, 'tools/call', { name: 'spaced', arguments: {}, _meta: scripted(JSON.stringify({ content: [{ type: 'text', text: spaced }] })) });
    g.end();
    const exit = await within(g.exited, 10_000, 'ctxguard exit');
    assert.equal(exit.code, 0, g.stderrText());

    const recs = readRecords(tfile);
    assert.deepEqual(recs.map((r) => [r.id, r.kind, r.tool, r.outcome]), [
      ['call-é✓', 'call', 'small', 'passthrough'],
      [3, 'task', 'report', 'paginated'],
      [4, 'resource', 'file:///var/log/big.log', 'chunked'],
      [5, 'call', 'spaced', 'compacted'],
    ], `records:\n${recs.map((r) => JSON.stringify(r)).join('\n')}`);
    const sent = [lines.small, lines.taskResult, lines.resource, lines.compacted];
    recs.forEach((r, i) => assert.equal(r.final_bytes, Buffer.byteLength(sent[i]), `final_bytes of ${r.id}`));
    assert.equal(recs[0].original_bytes, recs[0].final_bytes);
    assert.equal(JSON.parse(lines.compacted).result.content[0].text, JSON.stringify(spacedValue), 'the spaced JSON was minified');
    for (const r of recs.slice(1)) {
      assert.equal(r.over_budget, true, `over_budget of ${r.id}`);
      assert.ok(r.final_tokens < r.original_tokens && r.reduction_pct > 40, `${r.id}: ${r.original_tokens} -> ${r.final_tokens}`);
      assert.equal(r.reduction_pct, reductionPct(r.original_tokens, r.final_tokens));
    }
    assert.equal(recs[1].items_total, 400);
    assert.ok(!fs.readFileSync(tfile, 'utf8').includes('café'), 'no payload');
    const st = await stats([tfile, '--format', 'json', '--kind', 'task,resource']);
    assert.deepEqual([st.json.records.matched, st.json.total.server_calls, st.json.total.rewritten], [2, 2, 2]);
  });
  test('tool names are the client\'s: labels escaped (promtool passes), at most 200 of them, the rest counted as tool="other"', T, async () => {
    const g = rawProxy(rawServerCommand(), ['--metrics-listen', '0']);
    const base = await waitFor(() => /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(g.stderrText())?.[1], 5000, 'the endpoint');
    const weird = 'we"ird\\name\nwith ✓';
    const names = [weird, ...Array.from({ length: 250 }, (_, i) => `tool_${i}`)];
    let id = 0;
    for (const name of names) {
      id += 1;
      await g.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, _meta: { 'raw-server/result': '{"content":[{"type":"text","text":"ok"}]}' } } })}\n`);
    }
    await g.waitForLine((l) => JSON.parse(l).id === id, 10_000);
    const text = (await getText(base, '/metrics')).text;
    if (PROMTOOL) {
      const check = await promtoolCheck(text);
      assert.equal(check.code, 0, check.output);
    }
    assert.ok(text.includes('ctxguard_calls_total{tool="we\\"ird\\\\name\\nwith ✓",outcome="passthrough",mode="enforce"} 1'), 'the label is escaped');
    const m = parseMetrics(text);
    const series = m.filter((x) => x.name === 'ctxguard_calls_total');
    assert.equal(series.length, 201, '200 tool labels and "other"');
    assert.equal(sample(m, 'ctxguard_calls_total', { tool: 'other', outcome: 'passthrough', mode: 'enforce' }), names.length - 200);
    assert.equal(series.reduce((a, x) => a + x.value, 0), names.length);
    g.end();
    await within(g.exited, 10_000, 'ctxguard exit');
  });
});

// ---------------------------------------------------------------- a server that dies

describe('/health and /metrics when the server is gone (--metrics-linger)', { skip: SKIP, timeout: 60_000 }, () => {
  after(async () => {
    await closeAllSessions();
    killAllRaw();
  });

  test('SIGKILLed server: /health 503 "down" with the signal, ctxguard_server_up 0, stdout closed; SIGTERM ends the 10 s linger at once', T, async () => {
    const s = await connectProxied(serverCommand('everything'), ['--metrics-listen', '0', '--metrics-linger', '10']);
    const base = await metricsBase(s);
    const childPid = await waitFor(() => s.serverPid(), 5000, 'the "server started: pid=" log line');
    await call(s, 'echo', { message: 'before' });
    const before = await health(base);
    assert.equal(before.status, 200);
    assert.equal(before.body.status, 'ok');
    assert.deepEqual(before.body.server, { pid: childPid, state: 'running' });

    let stdoutEnded = false;
    s.proc.stdout.once('end', () => { stdoutEnded = true; });
    process.kill(childPid, 'SIGKILL');
    const down = await waitFor(async () => { const h = await health(base); return h.status === 503 && h; }, 5000, '/health to answer 503');
    assert.equal(down.body.status, 'down');
    assert.equal(down.body.server.pid, childPid);
    assert.equal(down.body.server.state, 'exited');
    assert.match(down.body.server.exit, /signal 9|SIGKILL|Killed/);
    assert.equal(down.body.toolCalls, 1, 'the figures are still there');
    const m = await metrics(base);
    assert.equal(sample(m, 'ctxguard_server_up'), 0);
    assert.equal(sample(m, 'ctxguard_calls_total', { tool: 'echo', outcome: 'passthrough', mode: 'enforce' }), 1);
    if (PROMTOOL) {
      const check = await promtoolCheck((await getText(base, '/metrics')).text);
      assert.equal(check.code, 0, check.output);
    }
    // The client already has its end of stream; ctxguard itself lingers.
    await waitFor(() => stdoutEnded, 5000, 'ctxguard to close its stdout');
    assert.ok(pidAlive(s.pid), 'ctxguard lingers');
    await waitFor(() => /keeping \/metrics and \/health up for 10\.0 s/.test(s.stderrText()), 5000, 'the linger log line');

    const t0 = Date.now();
    process.kill(s.pid, 'SIGTERM');
    const exit = await within(s.exited, 3000, 'ctxguard exit after SIGTERM during the linger');
    const elapsed = Date.now() - t0;
    assert.ok(elapsed < 2000, `SIGTERM took ${elapsed} ms to end the linger`);
    assert.deepEqual(exit, { code: 137, signal: null }, 'the exit status is still the server\'s');
    await assert.rejects(fetch(base + '/health'), 'the endpoint is gone');
    await s.close();
  });
  test('/health while stopping: "stopping" (200) once the client is gone, "down" (503) when the escalation killed the server', T, async () => {
    const g = rawProxy(rawServerCommand('--ignore-sigterm'),
      ['--metrics-listen', '0', '--metrics-linger', '10', '--shutdown-timeout', '1', '--kill-timeout', '1']);
    const base = await waitFor(() => /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(g.stderrText())?.[1], 5000, 'the endpoint');
    const childPid = await waitFor(() => g.serverPid(), 5000, 'the "server started: pid=" log line');
    await waitFor(() => /raw-server: SIGTERM ignored from here/.test(g.stderrText()), 10_000, 'the server ready to ignore SIGTERM');
    assert.equal((await health(base)).body.status, 'ok');
    g.end();
    const stopping = await waitFor(async () => { const h = await health(base); return h.body.clientConnected === false && h; }, 5000, 'the client to be gone');
    assert.equal(stopping.status, 200);
    assert.equal(stopping.body.status, 'stopping');
    assert.deepEqual(stopping.body.server, { pid: childPid, state: 'running' });
    // SIGTERM after 1 s is ignored; SIGKILL 1 s later.
    const down = await waitFor(async () => { const h = await health(base); return h.status === 503 && h; }, 6000, '/health to answer 503');
    assert.equal(down.body.status, 'down');
    assert.match(down.body.server.exit, /signal 9/);
    assert.equal(pidAlive(childPid), false);
    process.kill(g.pid, 'SIGTERM');
    assert.deepEqual(await within(g.exited, 3000, 'ctxguard exit'), { code: 137, signal: null });
  });
});

// ---------------------------------------------------------------- a file that cannot be written

describe('a telemetry file that cannot be written, or keep up', { skip: SKIP, timeout: 90_000 }, () => {
  let tmp;
  let root;
  let data;

  before(() => {
    tmp = makeTempDir('ctxguard-telemetry-io-');
    root = path.join(tmp, 'root');
    data = makeDataFolder(root, { logLines: 3000 });
    makeFiles(path.join(root, 'many'), 1000);
  });

  after(async () => {
    await closeAllSessions();
    killAllRaw();
    removeDir(tmp);
  });

  test('--telemetry-file /dev/full: the same answers as without it, every record counted as failed, one warning', T, async () => {
    const cmd = serverCommand('filesystem', root);
    const [full, plain] = await Promise.all([
      connectProxied(cmd, ['--telemetry-file', '/dev/full', '--metrics-listen', '0']),
      connectProxied(cmd, []),
    ]);
    await Promise.all([full.client.listTools(), plain.client.listTools()]);
    const session = async (x) => {
      const out = [];
      out.push(await call(x, 'read_text_file', { path: path.join(root, 'notes.txt') }));
      out.push(await call(x, 'directory_tree', { path: path.join(root, 'many') }));
      out.push(await call(x, FETCH, { cursor: JSON.parse(textOf(out[1]))._ctxguard.nextCursor }));
      out.push(await call(x, 'read_text_file', { path: data.logFile }));
      out.push(await call(x, 'list_directory', { path: path.join(root, 'many') }));
      return out;
    };
    const [a, b] = await Promise.all([session(full), session(plain)]);
    // The page (text and structuredContent), the fetched page (text), two chunked texts (trailer and structuredContent).
    assert.equal(countMatches(JSON.stringify(maskCursors(a)), /<CURSOR>/g), 7, 'the masks found the cursors');
    assert.deepEqual(maskCursors(a), maskCursors(b));

    const base = await metricsBase(full);
    const m = await waitFor(async () => {
      const x = await metrics(base);
      // The tools/list's record and the five calls'.
      return sample(x, 'ctxguard_telemetry_records_total', { result: 'failed' }) === 6 && x;
    }, 5000, '6 failed records in /metrics');
    assert.equal(sample(m, 'ctxguard_telemetry_records_total', { result: 'written' }), 0);
    assert.equal(sample(m, 'ctxguard_telemetry_records_total', { result: 'dropped' }), 0);
    const h = await health(base);
    assert.equal(h.body.telemetryFile.failed, 6);
    assert.equal(h.body.status, 'ok');

    await full.client.close();
    await within(full.exited, 10_000, 'ctxguard exit');
    await waitFor(() => /server exited/.test(full.stderrText()), 5000, 'the last log line');
    const log = full.stderrText();
    assert.equal(countMatches(log, /\/dev\/full: cannot write/g), 1, `warnings:\n${log}`);
    assert.match(log, /warning ctxguard: \/dev\/full: cannot write \(No space left on device\); \d+ record\(s\) lost so far, calls are not affected/);
    assert.deepEqual(full.exitInfo, { code: 0, signal: null });
  });

  test('an unopenable --telemetry-file (flag or CTXGUARD_TELEMETRY_FILE) stops ctxguard before the server starts: exit 127 and the path in the message', T, async () => {
    const marker = path.join(tmp, 'server-ran');
    for (const [args, env] of [
      [['--telemetry-file', '/nonexistent/x.jsonl'], process.env],
      [[], { ...process.env, CTXGUARD_TELEMETRY_FILE: '/nonexistent/x.jsonl' }],
    ]) {
      const r = await runCtxguard([...args, '--', ...markerCommand(marker)], { env });
      assert.equal(r.code, 127, r.stderr);
      assert.match(r.stderr, /cannot open the telemetry file \/nonexistent\/x\.jsonl: No such file or directory/);
      assert.doesNotMatch(r.stderr, /server started/);
      assert.equal(r.stdout, '');
      assert.equal(fs.existsSync(marker), false, 'the server was started');
    }
    const dir = await runCtxguard(['--telemetry-file', tmp, '--', ...markerCommand(marker)]);
    assert.equal(dir.code, 127, dir.stderr);
    assert.match(dir.stderr, /cannot open the telemetry file .*: Is a directory/);
    assert.equal(fs.existsSync(marker), false);
  });

  test('SIGHUP after the file was moved away (logrotate): the next records go to a new file at the same path', T, async () => {
    const tfile = path.join(tmp, 'rotated.jsonl');
    const s = await connectProxied(serverCommand('everything'), ['--telemetry-file', tfile]);
    await call(s, 'echo', { message: 'one' });
    const first = lastCallId(s);
    await waitFor(() => fs.existsSync(tfile) && readRecords(tfile).length === 1, 5000, 'the first record');
    fs.renameSync(tfile, `${tfile}.1`);
    await call(s, 'echo', { message: 'two' });
    const second = lastCallId(s);
    // The writer still holds the moved file: the second record lands there.
    await waitFor(() => readRecords(`${tfile}.1`).length === 2, 5000, 'the second record in the moved file');
    process.kill(s.pid, 'SIGHUP');
    await waitFor(() => /received SIGHUP/.test(s.stderrText()), 5000, 'the SIGHUP log line');
    await call(s, 'echo', { message: 'three' });
    const third = lastCallId(s);
    await waitFor(() => fs.existsSync(tfile) && readRecords(tfile).length === 1, 5000, 'the third record in a new file');
    assert.deepEqual(readRecords(`${tfile}.1`).map((r) => r.id), [first, second]);
    assert.deepEqual(readRecords(tfile).map((r) => r.id), [third]);
    assert.equal((fs.statSync(tfile).mode & 0o777).toString(8), '600');
    await s.close();
  });

  test('--telemetry-queue 1 under 300 concurrent calls: every call answered, written + dropped = calls, the file holds the written ones', T, async (t) => {
    const tfile = path.join(tmp, 'queue-1.jsonl');
    const s = await connectProxied(serverCommand('everything'), ['--telemetry-file', tfile, '--telemetry-queue', '1', '--metrics-listen', '0']);
    const base = await metricsBase(s);
    const N = 300;
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => call(s, 'echo', { message: `m${i}` })));
    answers.forEach((r, i) => assert.equal(textOf(r), `Echo: m${i}`));
    const m = await waitFor(async () => {
      const x = await metrics(base);
      const done = sample(x, 'ctxguard_telemetry_records_total', { result: 'written' }) +
        sample(x, 'ctxguard_telemetry_records_total', { result: 'dropped' });
      return done === N && x;
    }, 5000, 'written + dropped to reach the calls');
    const written = sample(m, 'ctxguard_telemetry_records_total', { result: 'written' });
    const dropped = sample(m, 'ctxguard_telemetry_records_total', { result: 'dropped' });
    assert.equal(sample(m, 'ctxguard_telemetry_records_total', { result: 'failed' }), 0);
    assert.equal(sample(m, 'ctxguard_calls_total', { tool: 'echo', outcome: 'passthrough', mode: 'enforce' }), N);
    t.diagnostic(`${written} written, ${dropped} dropped`);
    const recs = readRecords(tfile);
    assert.equal(recs.length, written);
    assert.ok(recs.every((r) => r.tool === 'echo' && r.outcome === 'passthrough'));
    assert.equal(new Set(recs.map((r) => r.id)).size, recs.length, 'no record written twice');
    await s.close();
  });
});

// ---------------------------------------------------------------- the oversize alert

describe('the oversize alert (more than 5% of at least 20 calls over the budget in 300 s)', { skip: SKIP, timeout: 60_000 }, () => {
  after(async () => {
    await closeAllSessions();
  });

  // server-everything's echo under --token-budget 100: a short message is far under it, a long
  // one far over. Debug logging gives every call a line with its id.
  const ARGS = ['--token-budget', '100', '--log-level', 'debug', '--metrics-listen', '0'];
  const small = (s) => call(s, 'echo', { message: 'hi' });
  const big = (s) => call(s, 'echo', { message: 'lorem ipsum dolor sit amet '.repeat(60) });
  const ALERT = /warning ctxguard: oversized answers: (\d+) of the last (\d+) tool calls \(([\d.]+)%\) exceeded their token budget in 300 s/g;

  /** The alarm's figures after the last call's line is in the log (so any alert before it is too). */
  async function settle(s, base) {
    const id = lastCallId(s);
    await waitFor(() => s.stderrText().includes(` id=${id} `), 5000, `the log line of call ${id}`);
    return { alarm: (await health(base)).body.oversizeAlert, alerts: [...s.stderrText().matchAll(ALERT)] };
  }

  test('19 small calls then 2 big ones: no alert at 1 of 20 (5%), one at 2 of 21; more big calls in the window add none', T, async () => {
    const s = await connectProxied(serverCommand('everything'), ARGS);
    const base = await metricsBase(s);
    for (let i = 0; i < 19; i++) await small(s);
    await big(s);
    let now = await settle(s, base);
    assert.deepEqual([now.alarm.callsInWindow, now.alarm.oversizedInWindow, now.alarm.alerts, now.alarm.active], [20, 1, 0, false]);
    assert.equal(now.alerts.length, 0, 'exactly 5% is not more than 5%');
    await big(s);
    now = await settle(s, base);
    assert.deepEqual([now.alarm.callsInWindow, now.alarm.oversizedInWindow, now.alarm.alerts, now.alarm.active], [21, 2, 1, true]);
    assert.equal(now.alerts.length, 1);
    assert.deepEqual(now.alerts[0].slice(1, 4), ['2', '21', '9.5']);
    for (let i = 0; i < 5; i++) await big(s);
    now = await settle(s, base);
    assert.equal(now.alarm.alerts, 1);
    assert.equal(now.alerts.length, 1, 'at most one alert per window');
    const m = await metrics(base);
    assert.equal(sample(m, 'ctxguard_oversize_alerts_total'), 1);
    assert.equal(sample(m, 'ctxguard_oversized_calls_total', { tool: 'echo', mode: 'enforce' }), 7);
    await s.close();
  });

  test('2 big calls then small ones: the alert comes with the 20th call (2 of 20 = 10%), once', T, async () => {
    const s = await connectProxied(serverCommand('everything'), ARGS);
    const base = await metricsBase(s);
    await big(s);
    await big(s);
    for (let i = 0; i < 17; i++) await small(s);
    let now = await settle(s, base);
    assert.deepEqual([now.alarm.callsInWindow, now.alarm.alerts, now.alerts.length], [19, 0, 0], 'fewer than 20 calls say nothing');
    await small(s);
    now = await settle(s, base);
    assert.deepEqual([now.alarm.callsInWindow, now.alarm.oversizedInWindow, now.alarm.active], [20, 2, true]);
    assert.equal(now.alarm.alerts, 1, 'the window holds 2 oversized of 20 calls: the alert is due');
    assert.equal(now.alerts.length, 1);
    assert.deepEqual(now.alerts[0].slice(1, 4), ['2', '20', '10.0']);
    for (let i = 0; i < 5; i++) await small(s);
    await big(s);
    now = await settle(s, base);
    assert.equal(now.alerts.length, 1, 'at most one alert per window');
    await s.close();
  });
});

// ---------------------------------------------------------------- the endpoint's start-up errors

describe('--metrics-listen start-up errors', { skip: SKIP, timeout: 30_000 }, () => {
  let tmp;
  let blocker;

  before(async () => {
    tmp = makeTempDir('ctxguard-telemetry-listen-');
    blocker = net.createServer();
    await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  });

  after(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    removeDir(tmp);
  });

  test('a bad address exits 2 with a message quoting it, before the server starts', T, async () => {
    const marker = path.join(tmp, 'server-ran');
    for (const bad of ['nonsense', '127.0.0.1:99999', 'example.com:9000', '']) {
      const r = await runCtxguard(['--metrics-listen', bad, '--', ...markerCommand(marker)]);
      assert.equal(r.code, 2, `--metrics-listen ${JSON.stringify(bad)}: exit ${r.code}, ${r.stderr}`);
      assert.match(r.stderr, /metrics-listen/, r.stderr);
      if (bad) assert.ok(r.stderr.includes(bad), `the message quotes ${bad}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /server started/);
      assert.equal(r.stdout, '');
    }
    const fromEnv = await runCtxguard(['--', ...markerCommand(marker)], { env: { ...process.env, CTXGUARD_METRICS_LISTEN: 'nonsense' } });
    assert.equal(fromEnv.code, 2, fromEnv.stderr);
    assert.match(fromEnv.stderr, /nonsense/);
    assert.equal(fs.existsSync(marker), false, 'the server was started');
  });

  test('a port in use exits 127 with a message naming it, before the server starts', T, async () => {
    const marker = path.join(tmp, 'server-ran');
    const { port } = blocker.address();
    const r = await runCtxguard(['--metrics-listen', String(port), '--', ...markerCommand(marker)]);
    assert.equal(r.code, 127, r.stderr);
    assert.match(r.stderr, new RegExp(`cannot serve metrics on ${port}: .*(in use|Address already)`, 'i'));
    assert.doesNotMatch(r.stderr, /server started/);
    assert.equal(fs.existsSync(marker), false, 'the server was started');
  });
});

