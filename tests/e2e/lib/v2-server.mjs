#!/usr/bin/env node
// A real MCP server built with the SDK v2 (@modelcontextprotocol/server 2.4.0, zod 4), served by
// serveStdio(), which serves both protocol eras on one stdio connection: a client that opens with
// `server/discover` (or any request carrying the 2026-07-28 `_meta` envelope) gets the modern era,
// one that opens with `initialize` the 2025 era. Used by eras.test.mjs. Everything it answers is
// deterministic (fixed PRNG seeds, no clock), so a direct session and one through ctxguard can be
// compared exactly.
//
// serverInfo: {name: 'ctxguard-v2-server', version: '2.4.0-e2e'}; instructions: INSTRUCTIONS below.
// cacheHints: tools/list {ttlMs: 45000, cacheScope: 'public'} (so a proxy must keep them);
// resources/read {ttlMs: 0, cacheScope: 'private'} (the client does not cache reads).
//
// Tools (in this order in tools/list: list_rows, read_log, report, confirm_action, noisy, enable_extra,
// then extra_tool once enabled):
//   list_rows {count = 3000}     one text item: the minified JSON
//                                {"table":"orders","regions":[60 region objects],"rows":[count rows]},
//                                a row = {id, name, status, region, amount, tags: [2 words]};
//                                every 7th row (index 6, 13, ...) is "cancelled", the others' status a
//                                PRNG pick of the other six STATUSES.
//   read_log {lines = 6000}      one text item: an application log, one line per entry
//                                ("2024-01-02T00:00:00.000Z INFO  [worker-3] req=000000 ..."), every
//                                13th entry an ERROR line followed by two indented stack lines.
//   report {count = 1500}        outputSchema {summary: {...}, entries: [...]} and
//                                structuredContent of that shape; the text item is its JSON.
//   confirm_action {action, size = 0}
//                                needs the user's confirmation: with no accepted `confirm` input it
//                                returns inputRequired({inputRequests: {confirm: elicit(...)}}, with
//                                requestState "confirm:<action>") whose elicitation message is long
//                                (about 80 KB: an input_required result over the hard cap);
//                                on the 2025 era the SDK's shim turns that into a real
//                                elicitation/create request to the client. Once accepted:
//                                {"action", "confirmed": true, "note", "rows": [size rows of list_rows]}
//                                as one JSON text item; declined: isError "not confirmed".
//   noisy {}                     writes NOISE (a plain log line, then JSON that is not JSON-RPC) to stdout
//                                itself, each on a line of its own, then answers "ok".
//   enable_extra {}              enables the tool `extra_tool` (registered disabled), which makes the
//                                server emit notifications/tools/list_changed (on the 2026-07-28 era,
//                                on each subscriptions/listen stream that asked for toolsListChanged).
//                                Returns "enabled".
//   extra_tool {}                (only after enable_extra) returns "extra".
//
// Resources:
//   log://app/big.log            text/plain, 4000 lines of the same log generator (read_log's format).
//   log://app/small.txt          text/plain, "small resource\n".

import { McpServer, inputRequired, acceptedContent } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

import { prng } from './harness.mjs';

export const SERVER_INFO = { name: 'ctxguard-v2-server', version: '2.4.0-e2e' };
export const INSTRUCTIONS = 'A deterministic test server for ctxguard (rows, logs, a report, a confirmation).';
/** What the noisy tool writes to stdout before its answer: a log line, and JSON that is not JSON-RPC. */
export const NOISE = ['debug: noisy tool called', '{"not":"json-rpc"}'];
export const STATUSES = ['confirmed', 'pending', 'shipped', 'delivered', 'returned', 'on_hold', 'cancelled'];

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega'.split(' ');

/** The rows of list_rows (the first `count`, always the same for the same index). */
export function makeRows(count) {
  const rnd = prng(7);
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `${pick(WORDS)}-${pick(WORDS)}-${i}`,
    status: i % 7 === 6 ? 'cancelled' : STATUSES[Math.floor(rnd() * 6)],
    region: `r${String(i % 60).padStart(2, '0')}`,
    amount: Math.round(rnd() * 1000000) / 100,
    tags: [pick(WORDS), pick(WORDS)],
  }));
}

export function makeRegions() {
  return Array.from({ length: 60 }, (_, i) => ({ code: `r${String(i).padStart(2, '0')}`, name: `Region ${i}`, active: i % 4 !== 0 }));
}

/** The text of read_log / log://app/big.log. */
export function makeLog(lines, seed = 11) {
  const rnd = prng(seed);
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const levels = ['DEBUG', 'INFO', 'INFO', 'INFO', 'WARN'];
  const base = Date.UTC(2024, 0, 2, 0, 0, 0);
  const out = [];
  for (let i = 0; out.length < lines; i++) {
    const ts = new Date(base + i * 1037).toISOString();
    const words = Array.from({ length: 7 }, () => pick(WORDS)).join(' ');
    if (i % 13 === 12) {
      out.push(`${ts} ERROR [worker-${i % 8}] req=${String(i).padStart(6, '0')} payment failed: ${words}`);
      if (out.length < lines) out.push(`    at com.example.Payment.charge(Payment.java:${100 + (i % 50)})`);
      if (out.length < lines) out.push('    at com.example.Worker.run(Worker.java:42)');
    } else {
      out.push(`${ts} ${pick(levels).padEnd(5)} [worker-${i % 8}] req=${String(i).padStart(6, '0')} ${words}`);
    }
  }
  return out.join('\n') + '\n';
}

export function makeReport(count) {
  const rnd = prng(23);
  const entries = Array.from({ length: count }, (_, i) => ({
    key: `k${String(i).padStart(5, '0')}`,
    value: Math.round(rnd() * 100000) / 100,
    ok: rnd() < 0.8,
  }));
  return { summary: { count, okCount: entries.filter((e) => e.ok).length, title: 'quarterly report' }, entries };
}

/** The (long) message of confirm_action's elicitation. */
export function confirmMessage(action) {
  return `Please confirm "${action}". ` + Array.from({ length: 1500 }, (_, i) => `clause ${i}: the action is final and cannot be undone.`).join(' ');
}

const ConfirmSchema = z.object({ confirm: z.boolean(), note: z.string() });

function buildServer() {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: { listChanged: true }, resources: {} },
    instructions: INSTRUCTIONS,
    cacheHints: {
      'tools/list': { ttlMs: 45000, cacheScope: 'public' },
      'resources/read': { ttlMs: 0, cacheScope: 'private' },
    },
  });

  server.registerTool('list_rows', {
    description: 'Lists order rows as JSON.',
    inputSchema: z.object({ count: z.number().int().min(0).max(100000).optional() }),
  }, async ({ count = 3000 }) => ({
    content: [{ type: 'text', text: JSON.stringify({ table: 'orders', regions: makeRegions(), rows: makeRows(count) }) }],
  }));

  server.registerTool('read_log', {
    description: 'Reads the application log.',
    inputSchema: z.object({ lines: z.number().int().min(1).max(200000).optional() }),
  }, async ({ lines = 6000 }) => ({ content: [{ type: 'text', text: makeLog(lines) }] }));

  const ReportSchema = z.object({
    summary: z.object({ count: z.number(), okCount: z.number(), title: z.string() }),
    entries: z.array(z.object({ key: z.string(), value: z.number(), ok: z.boolean() })),
  });
  server.registerTool('report', {
    description: 'A structured report.',
    inputSchema: z.object({ count: z.number().int().min(0).max(100000).optional() }),
    outputSchema: ReportSchema,
  }, async ({ count = 1500 }) => {
    const report = makeReport(count);
    return { content: [{ type: 'text', text: JSON.stringify(report) }], structuredContent: report };
  });

  server.registerTool('confirm_action', {
    description: 'Does something after the user confirms it.',
    inputSchema: z.object({ action: z.string(), size: z.number().int().min(0).max(100000).optional() }),
  }, async ({ action, size = 0 }, ctx) => {
    const responses = ctx.mcpReq.inputResponses;
    const content = acceptedContent(responses, 'confirm', ConfirmSchema);
    if (content === undefined) {
      if (responses && Object.hasOwn(responses, 'confirm')) {
        return { content: [{ type: 'text', text: 'not confirmed' }], isError: true };
      }
      return inputRequired({
        inputRequests: { confirm: inputRequired.elicit({ message: confirmMessage(action), requestedSchema: ConfirmSchema }) },
        requestState: `confirm:${action}`,
      });
    }
    if (!content.confirm) return { content: [{ type: 'text', text: 'not confirmed' }], isError: true };
    return { content: [{ type: 'text', text: JSON.stringify({ action, confirmed: true, note: content.note, rows: makeRows(size) }) }] };
  });

  server.registerTool('noisy', { description: 'Writes two lines that are not JSON-RPC to stdout, then answers.' }, async () => {
    process.stdout.write(`${NOISE[0]}\n${NOISE[1]}\n`);
    return { content: [{ type: 'text', text: 'ok' }] };
  });

  let extra;
  server.registerTool('enable_extra', { description: 'Enables extra_tool.' }, async () => {
    extra.enable();
    return { content: [{ type: 'text', text: 'enabled' }] };
  });
  extra = server.registerTool('extra_tool', { description: 'An extra tool.' }, async () => ({ content: [{ type: 'text', text: 'extra' }] }));
  extra.disable();

  server.registerResource('big-log', 'log://app/big.log', { mimeType: 'text/plain', description: 'A big log.' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: makeLog(4000, 5) }],
  }));
  server.registerResource('small', 'log://app/small.txt', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'small resource\n' }],
  }));
  return server;
}

// Only serve when run as a program (the test imports the data generators).
if (import.meta.url === `file://${process.argv[1]}`) {
  serveStdio(() => buildServer(), { onerror: (e) => process.stderr.write(`v2-server: ${e?.stack ?? e}\n`) });
}
