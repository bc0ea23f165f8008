// What the tools take before any call, measured on every tools/list: with the real SDK client
// over server-filesystem, server-memory and server-everything,
//   - one INFO line per listing (`tools/list tools=N tokens=A->B ... largest=...`), a telemetry
//     record of kind tools_list (tool count, tokens and bytes as the server sent the list and as
//     the client got it, the largest tools, the instructions' tokens), the /metrics gauges
//     ctxguard_tool_list_tokens and ctxguard_tool_list_tools, and a section in `ctxguard stats`;
//   - the record's tool count is the client's (the server's tools and ctxguard_fetch);
//   - a warning when tools and instructions exceed toolListBudget.
// The same for lib/many-tools-server.mjs, 120 tools listed in pages of 50: one record for the
// whole listing. The figures (tokens direct and through ctxguard) are printed for the note.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  closeAllSessions,
  connectProxied,
  ctxguardBin,
  FULL_CLIENT_CAPABILITIES,
  makeFiles,
  makeTempDir,
  readJsonLines,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
} from './lib/harness.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 120_000 };

const records = readJsonLines;

describe('the cost of tools/list', { skip: SKIP }, () => {
  let root;
  let dir;
  before(() => {
    root = makeTempDir();
    dir = makeTempDir();
    makeFiles(root, 3);
  });
  after(async () => {
    await closeAllSessions();
    removeDir(root);
    removeDir(dir);
  });

  const servers = [
    ['filesystem', () => serverCommand('filesystem', root), {}],
    ['memory', () => ({ ...serverCommand('memory'), env: { MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } }), {}],
    ['everything', () => serverCommand('everything'), { capabilities: FULL_CLIENT_CAPABILITIES }],
  ];
  for (const [name, command, options] of servers) {
    test(`server-${name}: a record, a log line, gauges and a stats section per listing`, T, async () => {
      const file = path.join(dir, `${name}.jsonl`);
      const session = await connectProxied(command(), ['--telemetry-file', file, '--metrics-listen', '0'],
        { name: 'claude-code', ...options });
      const { tools } = await session.client.listTools();
      await waitFor(() => /tools\/list tools=\d+ tokens=\d+->\d+/.test(session.stderrText()), 5000, 'the listing line');
      const line = /tools\/list tools=(\d+) tokens=(\d+)->(\d+) bytes=\d+->\d+ largest=(\S+) instructions_tokens=(\d+) budget=10000/
        .exec(session.stderrText());
      assert.ok(line, session.stderrText());
      assert.equal(Number(line[1]), tools.length);
      const base = /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(session.stderrText())[1];
      const metrics = await (await fetch(`${base}/metrics`)).text();
      assert.match(metrics, new RegExp(`^ctxguard_tool_list_tools ${tools.length}$`, 'm'));
      assert.match(metrics, new RegExp(`^ctxguard_tool_list_tokens ${line[3]}$`, 'm'));
      await waitFor(() => fs.existsSync(file) && records(file).some((r) => r.kind === 'tools_list'), 5000, 'the record');
      await session.close();

      const [listing] = records(file).filter((r) => r.kind === 'tools_list');
      assert.equal(listing.tool, 'tools/list');
      assert.equal(listing.client, 'claude-code');
      assert.equal(listing.items_total, tools.length);
      assert.equal(listing.final_tokens, Number(line[3]));
      assert.ok(listing.largest_tools.length >= 1 && listing.largest_tools.length <= 5);
      assert.ok(listing.largest_tools.every((t, i, all) => i === 0 || all[i - 1].tokens >= t.tokens));
      assert.ok(listing.instructions_tokens > 0, 'ctxguard adds its paragraph to the instructions');
      // Not a call: the stats count it apart.
      const stats = spawnSync(ctxguardBin(), ['stats', '--format', 'json', file], { encoding: 'utf8' });
      assert.equal(stats.status, 0, stats.stderr);
      const report = JSON.parse(stats.stdout);
      assert.equal(report.tool_lists.listings, 1);
      assert.equal(report.tool_lists.latest.tools, tools.length);
      assert.equal(report.total.calls, 0);
      const table = spawnSync(ctxguardBin(), ['stats', file], { encoding: 'utf8' }).stdout;
      assert.match(table, /Tool lists \(1 listings/);
      console.log(`# server-${name}: ${tools.length} tools (ctxguard_fetch included), `
        + `tools/list ${listing.original_tokens} tokens direct, ${listing.final_tokens} through ctxguard `
        + `(full), instructions ${listing.instructions_tokens}`);
    });
  }

  test('120 tools in pages of 50: one record for the whole listing, and the warning', T, async () => {
    const file = path.join(dir, 'many.jsonl');
    const server = { command: process.execPath, args: [path.join(import.meta.dirname, 'lib', 'many-tools-server.mjs'), '--page-size', '50'] };
    const session = await connectProxied(server, ['--telemetry-file', file]);
    let cursor;
    let pages = 0;
    let listed = 0;
    do {
      const page = await session.client.listTools(cursor ? { cursor } : undefined);
      listed += page.tools.length;
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(listed, 121);  // ctxguard_fetch on the last page
    await waitFor(() => /tools\/list takes \d+ estimated tokens/.test(session.stderrText()), 5000, 'the warning');
    await waitFor(() => fs.existsSync(file) && records(file).length === 1, 5000, 'one record');
    await session.close();
    const [listing] = records(file);
    assert.equal(listing.kind, 'tools_list');
    assert.equal(listing.items_total, 121);
    assert.equal(listing.over_budget, true);
    console.log(`# many-tools-server: 121 tools (ctxguard_fetch included), tools/list ${listing.original_tokens} `
      + `tokens direct, ${listing.final_tokens} through ctxguard (full)`);
  });

  test('over toolListBudget: a warning naming the largest tool', T, async () => {
    const session = await connectProxied(serverCommand('filesystem', root), ['--tool-list-budget', '1000']);
    await session.client.listTools();
    await waitFor(() => /tools\/list takes \d+ estimated tokens of every conversation \(\d+ tools: \d+, instructions: \d+\), over toolListBudget 1000; the largest tools: \S+/
      .test(session.stderrText()), 5000, 'the warning');
    assert.match(session.stderrText(), /tools\/list tools=\d+ .* budget=1000 over/);
    await session.close();
  });
});
