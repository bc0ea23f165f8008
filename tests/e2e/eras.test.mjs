// ctxguard across MCP protocol eras, with real SDK clients and a real SDK v2 server
// (lib/v2-server.mjs, served by serveStdio, which speaks the 2025 era and 2026-07-28 on one pipe).
//
// Four client modes, each run directly and through ctxguard (sessions: lib/v2-harness.mjs):
//   pinned   SDK v2, versionNegotiation {pin: '2026-07-28'}: the session itself never sends
//            initialize nor server/discover (the SDK probes on a sibling process), and its very
//            first request is a ctxguard_fetch, answered before ctxguard knows the server
//   auto     SDK v2, versionNegotiation 'auto' (ends modern; then sends server/discover itself)
//   legacy   SDK v2, versionNegotiation 'legacy' (2025 initialize handshake)
//   sdk1     SDK 1.x client (2025 era)
// For each: every answer is accepted by the client (its onerror stays empty); the 3,000 rows are
// rebuilt from every cursor; each ctxguard_fetch form (next page, limit, fields, path -> record /
// number / array page `wrapped`, line ranges and queries on text, queries on rows); bad cursors
// as isError results; the report with outputSchema + structuredContent; the chunked resource;
// the tools/list edits; the elicitation round trip (input_required + retry in the modern era, a
// server->client elicitation/create in the legacy one); tools/list_changed from the server (on a
// subscriptions/listen stream in the modern era); server lines that are not JSON-RPC dropped.
// On the raw wire: ctxguard's fetch answers carry resultType "complete" and the server's
// serverInfo `_meta` in the modern era (neither in the legacy one), rewritten results keep the
// server's resultType/_meta/ttlMs/cacheScope, an input_required result passes byte for byte, and
// stdout carries nothing but JSON-RPC. Last, ctxguard's own tools/list_changed after a
// configuration reload: on the acknowledged listen stream that asked for it (2026-07-28), or
// unsolicited (2025).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';

import { alterCursor, ctxguardBin, makeTempDir, memoryServerCommand, recordWire, removeDir, skipWithoutCtxguard, waitFor, watchWayOn, within } from './lib/harness.mjs';
import { reconstructJson, reconstructText, splitTextPiece, textOf } from './lib/reconstruct.mjs';
import {
  ELICIT_ANSWER,
  MODES,
  closeAllV2Sessions,
  fetchExchanges,
  lastExchange,
  openSession,
  rawResponseLine,
  responseTo,
  sentRequests,
} from './lib/v2-harness.mjs';
import { INSTRUCTIONS, NOISE, SERVER_INFO, confirmMessage, makeLog, makeRegions, makeReport, makeRows } from './lib/v2-server.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };

const BUDGET = 4000;
const PAGE_SIZE = 50;
const FETCH = 'ctxguard_fetch';
const SERVER_INFO_KEY = 'io.modelcontextprotocol/serverInfo';
const SUBSCRIPTION_KEY = 'io.modelcontextprotocol/subscriptionId';
const PARAGRAPH_START = 'Tool results pass through ctxguard, which keeps each one within a token budget.';

const TOOL_NAMES = ['list_rows', 'read_log', 'report', 'confirm_action', 'noisy', 'enable_extra'];
const ROWS = makeRows(3000);
const REGIONS = makeRegions();
const LOG = makeLog(6000);
const LOG_LINES = LOG.split('\n').slice(0, -1);

const call = (s, name, args = {}) => s.client.callTool({ name, arguments: args });
const fetchRaw = (s, args) => call(s, FETCH, args);

/** A successful ctxguard_fetch answer with one JSON text item, parsed. */
async function fetchJson(s, args) {
  const r = await fetchRaw(s, args);
  assert.ok(!r.isError, `${FETCH} ${JSON.stringify(args).slice(0, 200)}: ${JSON.stringify(r.content).slice(0, 300)}`);
  assert.equal(r.content.length, 1, 'a JSON answer is one text item');
  return JSON.parse(textOf(r));
}

/** An isError result with one line of text matching `pattern`. */
function assertRefusal(result, pattern) {
  assert.equal(result.isError, true, `expected isError, got ${JSON.stringify(result).slice(0, 300)}`);
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, 'text');
  assert.ok(!result.content[0].text.includes('\n'), 'one line');
  assert.match(result.content[0].text, pattern);
}

/** The members of a wire result other than the ones ctxguard may rewrite. */
function envelopeOf(result, rewritten = ['content', 'structuredContent']) {
  const out = { ...result };
  for (const k of rewritten) delete out[k];
  return out;
}

/** a === b, or a failure naming the first difference (not two 80 KB strings). */
function assertSameText(actual, expected, what) {
  if (actual === expected) return;
  let i = 0;
  while (i < actual.length && i < expected.length && actual[i] === expected[i]) i += 1;
  const at = (s) => JSON.stringify(s.slice(Math.max(0, i - 80), i + 80));
  assert.fail(`${what}: ${actual.length} vs ${expected.length} characters, first difference at ${i}:\n  actual   ${at(actual)}\n  expected ${at(expected)}`);
}

/** True when `m` is a JSON-RPC 2.0 message: a request, a notification or a response. */
function isJsonRpc(m) {
  if (!m || typeof m !== 'object' || Array.isArray(m) || m.jsonrpc !== '2.0') return false;
  if (typeof m.method === 'string') return true;
  return Object.hasOwn(m, 'id') && (Object.hasOwn(m, 'result') !== Object.hasOwn(m, 'error'));
}

/**
 * A raw response line with its `"jsonrpc":"2.0","id":N` taken out (to compare answers to different
 * ids byte for byte); the SDK writes them first or last.
 */
function withoutId(line) {
  const head = /^\{"jsonrpc":"2\.0","id":(\d+|"[^"]*"),/;
  const tail = /,"jsonrpc":"2\.0","id":(\d+|"[^"]*")\}$/;
  if (head.test(line)) return line.replace(head, '{');
  if (tail.test(line)) return line.replace(tail, '}');
  assert.fail(`no "jsonrpc","id" at either end of ${line.slice(0, 100)}…${line.slice(-100)}`);
}

function defineEraSuite(modeName) {
  const mode = MODES[modeName];

  describe(`${mode.label} against the SDK v2 server`, { skip: SKIP, timeout: 120_000 }, () => {
    let D; // direct
    let P; // through ctxguard
    let rowsFirst; // list_rows through ctxguard
    let rowsMeta;

    before(async () => {
      [D, P] = await Promise.all([openSession(modeName), openSession(modeName, { proxied: true })]);
    });

    after(async () => {
      await Promise.all([D?.close(), P?.close()]);
    });

    if (modeName === 'pinned') {
      test('pinned, first request: a ctxguard_fetch refusal before ctxguard knows the server has resultType "complete" and no _meta', T, async () => {
        assert.equal(P.wire.filter((w) => w.dir === 'out').length, 0, 'nothing was sent on the session yet');
        assertRefusal(await fetchRaw(P, { cursor: 'not-a-cursor' }), /not a valid cursor/);
        const { response } = lastExchange(P, 'tools/call', FETCH);
        assert.equal(response.result.resultType, 'complete');
        assert.ok(!Object.hasOwn(response.result, '_meta'), `_meta while the server is unknown: ${JSON.stringify(response.result._meta)}`);
      });
    }

    test('connect: the era, the server identity, and the instructions with ctxguard\'s paragraph', T, async () => {
      for (const s of [D, P]) {
        if (mode.sdk === 'v2') assert.equal(s.client.getProtocolEra(), mode.modern ? 'modern' : 'legacy');
        if (mode.modern) assert.equal(s.client.getNegotiatedProtocolVersion(), '2026-07-28');
        assert.deepEqual(s.client.getServerVersion(), SERVER_INFO);
      }
      assert.equal(D.client.getInstructions(), INSTRUCTIONS);
      const instructions = P.client.getInstructions();
      assert.ok(instructions.startsWith(PARAGRAPH_START), `instructions: ${JSON.stringify(instructions).slice(0, 200)}`);
      assert.ok(instructions.endsWith(`\n\n${INSTRUCTIONS}`), 'the server\'s instructions follow after a blank line');
      assert.ok(instructions.includes(FETCH));

      const opened = (s) => s.wire.filter((w) => w.dir === 'out').map((w) => w.msg.method);
      if (mode.modern) {
        for (const s of [D, P]) {
          assert.ok(!opened(s).includes('initialize'), 'no initialize in the modern era');
          assert.ok(!opened(s).includes('notifications/initialized'));
        }
      } else {
        for (const s of [D, P]) assert.deepEqual(opened(s).slice(0, 2), ['initialize', 'notifications/initialized']);
        const [d, p] = [D, P].map((s) => lastExchange(s, 'initialize').response.result);
        assert.deepEqual({ ...p, instructions: undefined }, { ...d, instructions: undefined }, 'only instructions change in the initialize result');
        assert.equal(p.instructions, instructions);
      }

      if (modeName === 'auto') {
        // server/discover on the session itself (the connect-time probe ran on a sibling process).
        const [d, p] = await Promise.all([D.client.discover(), P.client.discover()]);
        assert.equal(d.instructions, INSTRUCTIONS);
        assert.equal(p.instructions, instructions);
        const [dw, pw] = [D, P].map((s) => lastExchange(s, 'server/discover').response.result);
        assert.equal(pw.resultType, 'complete');
        assert.deepEqual(pw._meta, { [SERVER_INFO_KEY]: SERVER_INFO });
        assert.deepEqual({ ...pw, instructions: undefined }, { ...dw, instructions: undefined }, 'only instructions change in the discover result');
      }
    });

    test('tools/list: the server\'s tools in its order, outputSchema removed, ctxguard_fetch last, the result\'s other members kept', T, async () => {
      const [dl, pl] = await Promise.all([D, P].map((s) => s.client.listTools(undefined, { cacheMode: 'refresh' })));
      const names = dl.tools.map((t) => t.name);
      assert.deepEqual(names, TOOL_NAMES);
      assert.deepEqual(pl.tools.map((t) => t.name), [...names, FETCH]);
      for (const [i, t] of dl.tools.entries()) {
        const { outputSchema, ...rest } = t;
        if (t.name === 'report') assert.ok(outputSchema, 'the server declares an outputSchema for report');
        assert.deepEqual(pl.tools[i], rest, `tool ${t.name}`);
      }
      const fetchTool = pl.tools.at(-1);
      assert.deepEqual(fetchTool.inputSchema.required, ['cursor']);
      assert.deepEqual(Object.keys(fetchTool.inputSchema.properties), ['cursor', 'limit', 'fields', 'path', 'startLine', 'endLine', 'query', 'aggregate']);

      const [dw, pw] = [D, P].map((s) => lastExchange(s, 'tools/list').response.result);
      assert.deepEqual(envelopeOf(pw, ['tools']), envelopeOf(dw, ['tools']));
      if (mode.modern) {
        assert.equal(pw.ttlMs, 45000);
        assert.equal(pw.cacheScope, 'public');
        assert.equal(pw.resultType, 'complete');
        assert.deepEqual(pw._meta, { [SERVER_INFO_KEY]: SERVER_INFO });
      } else {
        for (const k of ['ttlMs', 'cacheScope', 'resultType', '_meta']) assert.ok(!Object.hasOwn(pw, k), `no ${k} in the 2025 era`);
      }
    });

    test('list_rows: 3,000 rows paginated within the budget; walking every cursor rebuilds the direct answer', T, async () => {
      const direct = await call(D, 'list_rows');
      const original = JSON.parse(textOf(direct));
      assert.deepEqual(original, { table: 'orders', regions: REGIONS, rows: ROWS });

      rowsFirst = await call(P, 'list_rows');
      assert.ok(!rowsFirst.isError);
      assert.equal(rowsFirst.content.length, 1);
      const json = JSON.parse(textOf(rowsFirst));
      rowsMeta = json._ctxguard;
      assert.ok(rowsMeta, 'the answer has _ctxguard');
      assert.equal(rowsMeta.path, '/rows');
      assert.equal(rowsMeta.offset, 0);
      assert.equal(rowsMeta.totalCount, 3000);
      assert.ok(rowsMeta.pageSize >= 10 && rowsMeta.pageSize <= PAGE_SIZE, `pageSize ${rowsMeta.pageSize}`);
      assert.equal(rowsMeta.hasMore, true);
      assert.equal(typeof rowsMeta.nextCursor, 'string');
      assert.ok(rowsMeta.estimatedTokens <= BUDGET * 1.01, `estimatedTokens ${rowsMeta.estimatedTokens}`);
      assert.match(rowsMeta.summary, /^3000 rows; status: /);
      assert.deepEqual(json.rows, ROWS.slice(0, rowsMeta.pageSize), 'the first rows, in the server\'s order');
      assert.equal(json.table, 'orders');

      const rec = await reconstructJson(P.client, rowsFirst);
      assert.deepEqual(rec.value, original);
      assert.ok(rec.fetches >= Math.ceil((3000 - rowsMeta.pageSize) / PAGE_SIZE), `${rec.fetches} fetches`);

      // The rewritten result keeps every member it does not rewrite (resultType, _meta, ...).
      const [dw, pw] = [D, P].map((s) => lastExchange(s, 'tools/call', 'list_rows').response.result);
      assert.deepEqual(envelopeOf(pw), envelopeOf(dw));
      if (mode.modern) {
        assert.equal(pw.resultType, 'complete');
        assert.deepEqual(pw._meta, { [SERVER_INFO_KEY]: SERVER_INFO });
      } else {
        assert.deepEqual(Object.keys(pw), ['content']);
      }
    });

    test('ctxguard_fetch over the rows: next page with limit, fields, path to an array (wrapped), to a record, to a number, queries', T, async () => {
      const start = rowsMeta.pageSize;
      const page = await fetchJson(P, { cursor: rowsMeta.nextCursor, limit: 7 });
      assert.deepEqual(page.items, ROWS.slice(start, start + 7));
      assert.equal(page._ctxguard.path, '/rows');
      assert.equal(page._ctxguard.offset, start);
      assert.equal(page._ctxguard.pageSize, 7);
      assert.equal(page._ctxguard.totalCount, 3000);
      assert.equal(page._ctxguard.hasMore, true);

      // fields; the limit of the cursor's page stays in force.
      const narrow = await fetchJson(P, { cursor: page._ctxguard.nextCursor, fields: ['id', 'status'] });
      assert.deepEqual(narrow.items, ROWS.slice(start + 7, start + 14).map(({ id, status }) => ({ id, status })));
      assert.deepEqual(narrow._ctxguard.fields, ['id', 'status']);
      assert.equal(narrow._ctxguard.offset, start + 7);

      // path to an array: a page of it from item 0, wrapped.
      const regions = await fetchJson(P, { cursor: rowsMeta.nextCursor, path: '/regions' });
      assert.equal(regions._ctxguard.wrapped, true, `_ctxguard of a page by path: ${JSON.stringify(regions._ctxguard).slice(0, 300)}`);
      assert.equal(regions._ctxguard.path, '/regions');
      assert.equal(regions._ctxguard.offset, 0);
      assert.equal(regions._ctxguard.totalCount, REGIONS.length);
      assert.deepEqual(regions.items, REGIONS.slice(0, regions._ctxguard.pageSize));
      const rowsByPath = await fetchJson(P, { cursor: rowsMeta.nextCursor, path: '/rows', limit: 5 });
      assert.equal(rowsByPath._ctxguard.wrapped, true);
      assert.deepEqual(rowsByPath.items, ROWS.slice(0, 5));

      // path to a record and to a number.
      const record = await fetchJson(P, { cursor: rowsMeta.nextCursor, path: '/rows/123' });
      const { _ctxguard: recordMeta, ...row } = record;
      assert.equal(recordMeta.valuePath, '/rows/123');
      assert.deepEqual(row, ROWS[123]);
      const amount = await fetchJson(P, { cursor: rowsMeta.nextCursor, path: '/rows/5/amount' });
      assert.equal(amount.value, ROWS[5].amount);
      assert.equal(amount._ctxguard.wrapped, true);
      assert.equal(amount._ctxguard.valuePath, '/rows/5/amount');

      // queries: every item tested from item 0, matches in order, pages of matches.
      const cancelled = ROWS.flatMap((r, i) => (r.status === 'cancelled' ? [i] : []));
      const q = await fetchJson(P, { cursor: rowsMeta.nextCursor, query: 'status=cancelled', limit: 20 });
      assert.equal(q._ctxguard.totalMatches, cancelled.length);
      assert.deepEqual(q._ctxguard.indices, cancelled.slice(0, 20));
      assert.deepEqual(q.items, cancelled.slice(0, 20).map((i) => ROWS[i]));
      assert.equal(q._ctxguard.hasMore, true);
      const q2 = await fetchJson(P, { cursor: q._ctxguard.nextCursor });
      assert.deepEqual(q2._ctxguard.indices, cancelled.slice(20, 40));
      const both = ROWS.flatMap((r, i) => (r.region === 'r13' && r.status === 'shipped' ? [i] : []));
      const q3 = await fetchJson(P, { cursor: rowsMeta.nextCursor, query: 'region=r13 status=shipped', fields: ['id'] });
      assert.equal(q3._ctxguard.totalMatches, both.length);
      assert.deepEqual(q3.items, both.slice(0, q3.items.length).map((i) => ({ id: ROWS[i].id })));
      assert.ok(both.length > 0 && q3.items.length === Math.min(both.length, PAGE_SIZE));
    });

    test('read_log: chunks rebuild the direct text; startLine/endLine and a query for ERROR', T, async () => {
      const direct = await call(D, 'read_log');
      assert.equal(textOf(direct), LOG);
      const first = await call(P, 'read_log');
      const { meta } = splitTextPiece(first);
      assert.equal(meta.chunkIndex, 0);
      assert.equal(meta.totalLines, LOG_LINES.length);
      assert.equal(meta.hasMore, true);
      const rec = await reconstructText(P.client, first);
      assert.equal(rec.text, LOG);
      assert.equal(rec.pieces, meta.totalChunks);

      const range = splitTextPiece(await fetchRaw(P, { cursor: meta.nextCursor, startLine: 100, endLine: 120 }));
      assert.equal(range.text, LOG_LINES.slice(99, 120).join('\n') + '\n');
      assert.equal(range.meta.startLine, 100);
      assert.equal(range.meta.endLine, 120);
      assert.equal(range.meta.hasMore, false);

      const errors = LOG_LINES.flatMap((l, i) => (l.toLowerCase().includes('error') ? [i] : []));
      assert.ok(errors.length > 300);
      const found = splitTextPiece(await fetchRaw(P, { cursor: meta.nextCursor, query: 'ERROR' }));
      assert.equal(found.meta.totalMatches, errors.length);
      assert.equal(found.meta.hasMore, true);
      const shown = found.text.replace(/\n$/, '').split('\n');
      assert.equal(shown.length, found.meta.shownMatches);
      assert.deepEqual(shown, errors.slice(0, shown.length).map((i) => `${i + 1}: ${LOG_LINES[i]}`));
      const more = splitTextPiece(await fetchRaw(P, { cursor: found.meta.nextCursor }));
      assert.equal(more.text.split('\n')[0], `${errors[shown.length] + 1}: ${LOG_LINES[errors[shown.length]]}`);
    });

    test('report: outputSchema + structuredContent; the rewritten answer is accepted, consistent, and rebuilds the report', T, async () => {
      const report = makeReport(1500);
      const direct = await call(D, 'report');
      assert.deepEqual(direct.structuredContent, report);
      const first = await call(P, 'report');
      assert.ok(!first.isError);
      const json = JSON.parse(textOf(first));
      assert.ok(json._ctxguard, 'the report is paginated');
      assert.deepEqual(first.structuredContent, json, 'structuredContent is kept consistent with the text');
      const rec = await reconstructJson(P.client, first);
      assert.deepEqual(rec.value, report);
      const [dw, pw] = [D, P].map((s) => lastExchange(s, 'tools/call', 'report').response.result);
      assert.deepEqual(envelopeOf(pw), envelopeOf(dw));
    });

    test('resources/read: the first chunk and a _ctxguard item; the rest through ctxguard_fetch', T, async () => {
      const uri = 'log://app/big.log';
      const direct = await D.client.readResource({ uri });
      const text = direct.contents[0].text;
      assert.equal(text, makeLog(4000, 5));
      const r = await P.client.readResource({ uri });
      assert.equal(r.contents.length, 2);
      assert.equal(r.contents[0].uri, uri);
      assert.equal(r.contents[0].mimeType, 'text/plain');
      assert.ok(text.startsWith(r.contents[0].text));
      assert.equal(r.contents[1].uri, uri);
      assert.equal(r.contents[1].mimeType, 'application/json');
      const meta = JSON.parse(r.contents[1].text)._ctxguard;
      assert.equal(meta.chunkIndex, 0);
      assert.equal(meta.bytesInChunk, Buffer.byteLength(r.contents[0].text));
      assert.equal(meta.totalBytes, Buffer.byteLength(text));

      const next = splitTextPiece(await fetchRaw(P, { cursor: meta.nextCursor }));
      assert.equal(next.meta.chunkIndex, 1);
      assert.equal(next.text, Buffer.from(text).subarray(meta.bytesInChunk, meta.bytesInChunk + next.meta.bytesInChunk).toString());
      const asTool = { content: r.contents.map((c) => ({ type: 'text', text: c.text })) };
      assert.equal((await reconstructText(P.client, asTool)).text, text);

      const [dw, pw] = [D, P].map((s) => lastExchange(s, 'resources/read').response.result);
      assert.deepEqual(envelopeOf(pw, ['contents']), envelopeOf(dw, ['contents']));
      if (mode.modern) {
        assert.equal(pw.resultType, 'complete');
        assert.equal(pw.ttlMs, 0);
        assert.equal(pw.cacheScope, 'private');
      }
      const small = { uri: 'log://app/small.txt' };
      assert.deepEqual(await P.client.readResource(small), await D.client.readResource(small));
    });

    test('bad and tampered cursors are one-line isError results the client accepts; the session goes on', T, async () => {
      assertRefusal(await fetchRaw(P, {}), /`cursor` is required/);
      assertRefusal(await fetchRaw(P, { cursor: 'not-a-cursor' }), /not a valid cursor/);
      const c = rowsMeta.nextCursor;
      const tampered = alterCursor(c);
      assertRefusal(await fetchRaw(P, { cursor: tampered }), /altered/);
      assertRefusal(await fetchRaw(P, { cursor: c, path: '/nope' }), /There is no value at path "\/nope"/);
      assertRefusal(await fetchRaw(P, { cursor: c, startLine: 1, endLine: 2 }), /apply to text results/);
      assertRefusal(await fetchRaw(P, { cursor: c, limit: 0 }), /out of range/);
      const page = await fetchJson(P, { cursor: c, limit: 1 });
      assert.deepEqual(page.items, [ROWS[rowsMeta.pageSize]]);
    });

    test(mode.modern
      ? 'confirm_action: the input_required result passes byte for byte, the client\'s retry is answered, a large final answer is rewritten'
      : 'confirm_action: the server\'s elicitation/create reaches the client and its answer the server; a large final answer is rewritten', T, async () => {
      const small = await Promise.all([D, P].map((s) => call(s, 'confirm_action', { action: 'deploy' })));
      assert.deepEqual(small[1], small[0]);
      assert.deepEqual(JSON.parse(textOf(small[0])), { action: 'deploy', confirmed: true, note: ELICIT_ANSWER.content.note, rows: [] });
      for (const s of [D, P]) {
        assert.equal(s.elicitations.length, 1, `${s.proxied ? 'proxied' : 'direct'}: one elicitation`);
        assert.equal(s.elicitations[0].message, confirmMessage('deploy'));
      }
      assert.deepEqual(P.elicitations[0], D.elicitations[0]);

      if (mode.modern) {
        for (const s of [D, P]) {
          const [ask, retry] = sentRequests(s, 'tools/call', 'confirm_action');
          assert.ok(ask && retry, 'the call and its retry');
          assert.equal(ask.params.inputResponses, undefined);
          assert.deepEqual(retry.params.inputResponses, { confirm: ELICIT_ANSWER });
          assert.equal(retry.params.requestState, 'confirm:deploy');
          assert.notEqual(retry.id, ask.id);
          assert.equal(responseTo(s, ask)?.result?.resultType, 'input_required');
        }
        const [dAsk] = sentRequests(D, 'tools/call', 'confirm_action');
        const [pAsk] = sentRequests(P, 'tools/call', 'confirm_action');
        const dLine = rawResponseLine(D, dAsk.id);
        const pLine = rawResponseLine(P, pAsk.id);
        assert.ok(dLine.length > 60000, `the input_required answer is large (${dLine.length} bytes)`);
        assertSameText(withoutId(pLine), withoutId(dLine), 'the input_required result passes byte for byte');
      } else {
        const asked = (s) => s.wire.filter((w) => w.dir === 'in' && w.msg.method === 'elicitation/create').map((w) => w.msg);
        const [dReq, pReq] = [D, P].map(asked);
        assert.equal(pReq.length, 1);
        assert.deepEqual(pReq[0], dReq[0], 'the server\'s elicitation/create reaches the client unchanged');
        const answered = P.wire.find((w) => w.dir === 'out' && w.msg.id === pReq[0].id && w.msg.result);
        assert.deepEqual(answered.msg.result, ELICIT_ANSWER);
      }

      // A large answer after the confirmation is an ordinary result: rewritten, and rebuilt exactly.
      const [dBig, pBig] = await Promise.all([D, P].map((s) => call(s, 'confirm_action', { action: 'ship', size: 400 })));
      const original = JSON.parse(textOf(dBig));
      assert.equal(original.rows.length, 400);
      const meta = JSON.parse(textOf(pBig))._ctxguard;
      assert.ok(meta, 'the final answer is rewritten');
      assert.equal(meta.path, '/rows');
      assert.equal(meta.totalCount, 400);
      assert.deepEqual((await reconstructJson(P.client, pBig)).value, original);
      for (const s of [D, P]) assert.equal(s.elicitations.length, 2);
      if (mode.modern) {
        const [dw, pw] = [D, P].map((s) => lastExchange(s, 'tools/call', 'confirm_action').response.result);
        assert.equal(pw.resultType, 'complete');
        assert.deepEqual(envelopeOf(pw), envelopeOf(dw));
      }
    });

    test('lines of the server that are not JSON-RPC are not forwarded (directly the client chokes on them)', T, async () => {
      const errorsBefore = D.errors.length;
      const [d, p] = await Promise.all([D, P].map((s) => call(s, 'noisy')));
      assert.deepEqual(p, d);
      assert.equal(textOf(p), 'ok');
      // Directly, both lines reach the client. SDK 1.x reports both through onerror; SDK v2 skips a line
      // that is not JSON and reports the JSON that is not JSON-RPC. Dropped from D.errors for the checks at the end.
      const reported = D.errors.slice(errorsBefore);
      assert.equal(reported.length, mode.sdk === 'v2' ? 1 : 2, `direct client errors: ${reported.map(String)}`);
      assert.match(String(reported.at(-1)), /jsonrpc|invalid_union|Invalid input/);
      D.errors.splice(errorsBefore);
      assert.ok(D.rawLines().includes(NOISE[0]) && D.rawLines().includes(NOISE[1]));
      assert.ok(!P.rawLines().some((l) => NOISE.includes(l)), 'a line that is not JSON-RPC reached the client through ctxguard');
      // ctxguard logs before it answers, but its stderr reaches this process on a pipe of its own,
      // which a loaded machine may deliver after the answer's stdout.
      const logged = () => P.stderrText().match(/the server wrote a line of \d+ bytes that is not JSON-RPC \([^)]*\); not forwarded/g) ?? [];
      await waitFor(() => logged().length >= 2, 5000, 'the two drop lines in ctxguard\'s log').catch(() => {});
      assert.equal(logged().length, 2, `ctxguard's log: ${P.stderrText().slice(-2000)}`);
      for (const line of NOISE) assert.ok(!P.stderrText().includes(line), 'the line itself is logged at debug only');
    });

    if (mode.modern) {
      test('subscriptions/listen: the acknowledgement and the server\'s tools/list_changed on the stream reach the client through ctxguard', T, async () => {
        const seen = [];
        for (const s of [D, P]) {
          const sub = await s.client.listen({ toolsListChanged: true });
          assert.deepEqual(sub.honoredFilter, { toolsListChanged: true });
          const listen = sentRequests(s, 'subscriptions/listen').at(-1);
          assert.deepEqual(listen.params.notifications, { toolsListChanged: true });
          const ack = s.wire.find((w) => w.dir === 'in' && w.msg.method === 'notifications/subscriptions/acknowledged');
          assert.equal(ack?.msg.params._meta[SUBSCRIPTION_KEY], listen.id);
          const got = s.nextListChanged();
          assert.equal(textOf(await call(s, 'enable_extra')), 'enabled');
          const n = await within(got, 10_000, 'notifications/tools/list_changed');
          assert.equal(n.params._meta[SUBSCRIPTION_KEY], listen.id);
          const tools = await s.client.listTools(undefined, { cacheMode: 'refresh' });
          assert.equal(textOf(await call(s, 'extra_tool')), 'extra');
          await sub.close();
          assert.equal(await within(sub.closed, 5000, 'the subscription to close'), 'local');
          const cancelled = s.wire.find((w) => w.dir === 'out' && w.msg.method === 'notifications/cancelled' && w.msg.params.requestId === listen.id);
          assert.ok(cancelled, 'the client cancelled the listen request');
          const wireNote = s.wire.find((w) => w.dir === 'in' && w.msg.method === 'notifications/tools/list_changed');
          seen.push({ listen, ack: ack.msg, note: wireNote.msg, names: tools.tools.map((t) => t.name) });
        }
        const [d, p] = seen;
        assert.deepEqual(p.ack, d.ack, 'the acknowledgement passes unchanged');
        assert.deepEqual(p.note, d.note, 'the notification passes unchanged');
        assert.deepEqual(p.note, { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION_KEY]: p.listen.id } } });
        assert.deepEqual(d.names, [...TOOL_NAMES, 'extra_tool']);
        assert.deepEqual(p.names, [...d.names, FETCH], 'ctxguard_fetch stays last');
      });
    } else {
      test('tools/list_changed (unsolicited, 2025 era) reaches the client through ctxguard; ctxguard_fetch stays last', T, async () => {
        const notes = [];
        const names = [];
        for (const s of [D, P]) {
          const got = s.nextListChanged();
          assert.equal(textOf(await call(s, 'enable_extra')), 'enabled');
          await within(got, 10_000, 'notifications/tools/list_changed');
          notes.push(s.wire.find((w) => w.dir === 'in' && w.msg.method === 'notifications/tools/list_changed').msg);
          names.push((await s.client.listTools()).tools.map((t) => t.name));
          assert.equal(textOf(await call(s, 'extra_tool')), 'extra');
        }
        assert.deepEqual(notes[1], notes[0]);
        assert.deepEqual(notes[1], { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
        assert.deepEqual(names[1], [...names[0], FETCH]);
        assert.equal(names[0].at(-1), 'extra_tool');
      });
    }

    test(mode.modern
      ? 'every ctxguard_fetch answer on the wire carries resultType "complete" and the server\'s serverInfo _meta'
      : 'every ctxguard_fetch answer on the wire is as before: no resultType, no _meta', T, () => {
      const exchanges = fetchExchanges(P);
      assert.ok(exchanges.length > 150, `${exchanges.length} fetches`);
      const serverInfo = lastExchange(D, 'tools/call', 'list_rows').response.result._meta?.[SERVER_INFO_KEY];
      if (mode.modern) assert.deepEqual(serverInfo, SERVER_INFO, 'the server sends its serverInfo in _meta');
      // ctxguard knows the server from the first answer of the server that reached the client.
      const firstServerAnswer = P.wire.findIndex((w) => w.dir === 'in' && w.msg.method === undefined && w.msg.result
        && !fetchExchanges(P).some((x) => x.response === w.msg));
      let refusals = 0;
      for (const { request, response } of exchanges) {
        if (mode.modern && P.wire.findIndex((w) => w.msg === response) < firstServerAnswer) {
          assert.equal(response.result.resultType, 'complete');
          assert.ok(!Object.hasOwn(response.result, '_meta'), 'no _meta before the server is known');
          continue;
        }
        assert.ok(response, `no answer to ${JSON.stringify(request.params).slice(0, 200)}`);
        assert.ok(response.result, `a JSON-RPC error to ${JSON.stringify(request.params.arguments).slice(0, 200)}: ${JSON.stringify(response.error)}`);
        const r = response.result;
        if (r.isError) refusals += 1;
        if (mode.modern) {
          assert.equal(r.resultType, 'complete', `resultType of the answer to ${JSON.stringify(request.params.arguments).slice(0, 200)}`);
          assert.deepEqual(r._meta, { [SERVER_INFO_KEY]: serverInfo });
        } else {
          assert.ok(!Object.hasOwn(r, 'resultType'), 'no resultType in the 2025 era');
          assert.ok(!Object.hasOwn(r, '_meta'), 'no _meta in the 2025 era');
        }
      }
      assert.ok(refusals >= 6, `${refusals} isError answers`);
    });

    test('the client accepted every answer, and ctxguard\'s stdout carried nothing but JSON-RPC messages', T, () => {
      assert.deepEqual(P.errors.map(String), [], 'errors the client reported through ctxguard');
      assert.deepEqual(D.errors.map(String), [], 'errors the client reported directly');
      for (const w of P.wire) {
        if (w.dir === 'in' && w.msg.id !== undefined && w.msg.method === undefined) {
          assert.ok(w.msg.result, `a JSON-RPC error reached the client: ${JSON.stringify(w.msg).slice(0, 300)}`);
        }
      }
      const text = P.rawText();
      assert.ok(text.endsWith('\n'), 'no partial line');
      const lines = P.rawLines();
      for (const line of lines) {
        let m;
        assert.doesNotThrow(() => { m = JSON.parse(line); }, `not JSON on stdout: ${line.slice(0, 200)}`);
        assert.ok(isJsonRpc(m), `not a JSON-RPC message on stdout: ${line.slice(0, 200)}`);
      }
      assert.equal(lines.length, P.wire.filter((w) => w.dir === 'in').length, 'every line reached the client as one message');
      assert.ok(!P.wire.some((w) => w.msg.method === 'notifications/message'), 'ctxguard never sends notifications/message');
    });

    if (modeName === 'pinned') {
      test('pinned: the session never sent initialize nor server/discover, and worked fully', T, () => {
        const methods = new Set(P.wire.filter((w) => w.dir === 'out').map((w) => w.msg.method));
        for (const m of ['initialize', 'notifications/initialized', 'server/discover']) assert.ok(!methods.has(m), `${m} was sent`);
        for (const m of ['tools/list', 'tools/call', 'resources/read', 'subscriptions/listen']) assert.ok(methods.has(m), `${m} was not exercised`);
        for (const w of P.wire.filter((x) => x.dir === 'out' && x.msg.id !== undefined)) {
          assert.equal(w.msg.params?._meta?.['io.modelcontextprotocol/protocolVersion'], '2026-07-28', `${w.msg.method} carries the 2026-07-28 envelope`);
        }
      });
    }
  });
}

for (const modeName of Object.keys(MODES)) defineEraSuite(modeName);

// ---------------------------------------------------------------- ctxguard's own tools/list_changed

describe('ctxguard\'s own tools/list_changed after a reload that changes tools/list', { skip: SKIP, timeout: 60_000 }, () => {
  const RELOADED_RE = /configuration \S+ reloaded \([^)]*\): [1-9]\d* change/g;
  let tmp;

  before(() => { tmp = makeTempDir('ctxguard-eras-'); });
  after(async () => {
    await closeAllV2Sessions();
    removeDir(tmp);
  });

  /** Write the configuration file, SIGHUP ctxguard (a reload at once) and wait for the "reloaded" line with changes. */
  async function reload(s, file, text) {
    const count = () => (s.stderrText().match(RELOADED_RE) ?? []).length;
    const before = count();
    fs.writeFileSync(file, text);
    process.kill(s.pid, 'SIGHUP');
    await waitFor(() => count() > before, 5000, `a reload of ${JSON.stringify(text)} with changes`);
  }
  const listChangedOnWire = (s) => s.wire.filter((w) => w.dir === 'in' && w.msg.method === 'notifications/tools/list_changed').map((w) => w.msg);
  const toolNames = async (s) => (await s.client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);

  test('2026-07-28: only on the open, acknowledged listen stream that asked for toolsListChanged, tagged with its id; nothing without one', T, async () => {
    const file = path.join(tmp, 'modern.yaml');
    fs.writeFileSync(file, 'mode: enforce\n');
    const s = await openSession('pinned', { proxied: true, ctxguardArgs: ['--config', file] });
    assert.deepEqual(await toolNames(s), [...TOOL_NAMES, FETCH]);

    // No listen stream: the change is not announced (the next tools/list shows it).
    await reload(s, file, 'mode: observe\n');
    assert.deepEqual(await toolNames(s), TOOL_NAMES, 'observe mode lists the server\'s tools');
    assert.deepEqual(listChangedOnWire(s), [], 'no listen stream is open: nothing is sent');

    // A stream for tools and one for resources only.
    const toolsSub = await s.client.listen({ toolsListChanged: true });
    const resourcesSub = await s.client.listen({ resourcesListChanged: true });
    const [toolsListen, resourcesListen] = sentRequests(s, 'subscriptions/listen');
    assert.deepEqual(resourcesListen.params.notifications, { resourcesListChanged: true });
    const got = s.nextListChanged();
    await reload(s, file, 'mode: enforce\n');
    const n = await within(got, 5000, 'notifications/tools/list_changed from ctxguard');
    assert.equal(n.params._meta[SUBSCRIPTION_KEY], toolsListen.id);
    assert.deepEqual(await toolNames(s), [...TOOL_NAMES, FETCH]);
    assert.deepEqual(listChangedOnWire(s), [
      { jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { _meta: { [SUBSCRIPTION_KEY]: toolsListen.id } } },
    ], 'one notification, on the tools stream only');

    // The client ends the tools stream (notifications/cancelled): nothing more is sent.
    await toolsSub.close();
    assert.equal(await within(toolsSub.closed, 5000, 'the tools subscription to close'), 'local');
    await reload(s, file, 'mode: observe\n');
    assert.deepEqual(await toolNames(s), TOOL_NAMES);
    assert.equal(listChangedOnWire(s).length, 1, 'nothing on a stream the client cancelled, nor on the resources stream');
    await resourcesSub.close();
    assert.deepEqual(s.errors.map(String), []);
    await s.close();
  });

  test('2025 era (SDK v2 legacy): unsolicited, without params, as before', T, async () => {
    const file = path.join(tmp, 'legacy.yaml');
    fs.writeFileSync(file, 'mode: enforce\n');
    const s = await openSession('legacy', { proxied: true, ctxguardArgs: ['--config', file] });
    assert.deepEqual(await toolNames(s), [...TOOL_NAMES, FETCH]);
    const got = s.nextListChanged();
    await reload(s, file, 'mode: observe\n');
    await within(got, 5000, 'notifications/tools/list_changed from ctxguard');
    assert.deepEqual(listChangedOnWire(s), [{ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }]);
    assert.deepEqual(await toolNames(s), TOOL_NAMES);
    assert.deepEqual(s.errors.map(String), []);
    await s.close();
  });
});

// ---------------------------------------------------------------- SDK v2 'auto' against a 2025 server
// The probe (server/discover, on a sibling process) finds a server of the 2025 era: the client
// falls back to initialize, and ctxguard answers it in the 2025 shape.

describe('SDK v2 in auto mode against a 2025-era server (server-memory) through ctxguard', { skip: SKIP, timeout: 60_000 }, () => {
  let tmp;
  before(() => { tmp = makeTempDir('ctxguard-eras-auto-'); });
  after(() => removeDir(tmp));

  test('the probe falls back to initialize; pagination and ctxguard_fetch work, in the 2025 shape', T, async () => {
    const memory = memoryServerCommand(path.join(tmp, 'memory.jsonl'));
    const transport = new StdioClientTransportV2({
      command: ctxguardBin(), args: ['--', memory.command, ...memory.args], env: { ...process.env, ...memory.env }, stderr: 'pipe',
    });
    const wire = recordWire(transport);
    const client = new ClientV2({ name: 'ctxguard-eras-auto-legacy', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    watchWayOn(client);
    try {
      await client.connect(transport);
      assert.equal(client.getNegotiatedProtocolVersion(), '2025-11-25', 'a 2025 server: the legacy era');
      assert.equal((await client.listTools()).tools.at(-1).name, FETCH);
      const entities = Array.from({ length: 3000 }, (_, i) => ({ name: `person_${i}`, entityType: 'person', observations: [`note ${i}`] }));
      await client.callTool({ name: 'create_entities', arguments: { entities } });
      const graph = await client.callTool({ name: 'read_graph', arguments: {} });
      const meta = JSON.parse(graph.content[0].text)._ctxguard;
      assert.equal(meta.totalCount, 3000);
      const page = await client.callTool({ name: FETCH, arguments: { cursor: meta.nextCursor, limit: 3, fields: ['name'] } });
      const next = meta.offset + meta.pageSize;  // the page after the first answer's
      assert.deepEqual(JSON.parse(page.content[0].text).items, [0, 1, 2].map((i) => ({ name: `person_${next + i}` })));
      const answer = wire.find((w) => w.dir === 'in' && w.msg.result?.content?.[1]?.text?.startsWith('{"_ctxguard"'));
      assert.ok(answer, 'the fetch answer was on the wire');
      assert.equal(answer.msg.result.resultType, undefined, 'a 2025 request gets no resultType');
      assert.equal(answer.msg.result._meta, undefined);
    } finally {
      await client.close();
    }
  });
});
