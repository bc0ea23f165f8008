// Client-specific edits through ctxguard, with real clients announcing themselves:
//   - Claude Code (clientInfo.name "claude-code") writes a text result over 50,000 characters to a
//     file and shows the model a 2,000-byte preview, unless the tool's tools/list entry carries
//     _meta["anthropic/maxResultSizeChars"]. For that client ctxguard gives every tool whose
//     answers it bounds the hint (its hard cap × 6 characters, from 50,000 to 500,000), keeps the
//     server's _meta, and leaves observed tools alone; every answer then fits its tool's hint.
//   - Any other name, or none, gets tools/list exactly as before.
//   - A reload that changes a hard cap changes Claude Code's listing: it gets
//     notifications/tools/list_changed, and the new hints; another client gets no notification.
//   - The name is learned from `initialize` (SDK 1.x, SDK v2 in legacy negotiation) or from each
//     request's _meta["io.modelcontextprotocol/clientInfo"] (SDK v2 pinned to 2026-07-28, which
//     sends no initialize), and it names the client in the decision log line
//     (client="claude-code") and in the --telemetry-file record ("client").
// Server: @modelcontextprotocol/server-filesystem over a generated tree; lib/v2-server.mjs for
// the SDK v2 client.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  closeAllSessions,
  connectDirect,
  connectProxied,
  makeFiles,
  makeTempDir,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
} from './lib/harness.mjs';
import { closeAllV2Sessions, openSession } from './lib/v2-harness.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 90_000 };
const HINT = 'anthropic/maxResultSizeChars';
const FETCH = 'ctxguard_fetch';

/** Characters of the text items as a client shows them (joined by newlines). */
function textChars(result) {
  return [...result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n')].length;
}

describe('client-specific tool lists', { skip: SKIP }, () => {
  let root;
  before(() => {
    root = makeTempDir();
    // A listing of 3,000 entries: over 100,000 characters, twice Claude Code's 50,000.
    makeFiles(root, 3000, (i) => `a_rather_long_file_name_for_listing_${String(i).padStart(5, '0')}.txt`);
  });
  after(async () => {
    await closeAllSessions();
    await closeAllV2Sessions();
    removeDir(root);
  });

  test('claude-code: every tool carries the size hint, and every answer fits it', T, async () => {
    const direct = await connectDirect(serverCommand('filesystem', root));
    const served = (await direct.client.listTools()).tools;
    const whole = await direct.client.callTool({ name: 'list_directory', arguments: { path: root } });
    await direct.close();
    // What Claude Code would have written to a file without ctxguard.
    assert.ok(textChars(whole) > 100000, `${textChars(whole)} characters`);
    const records = path.join(root, '..', `records-${process.pid}.jsonl`);
    const session = await connectProxied(serverCommand('filesystem', root),
      ['--hard-cap', '20000', '--telemetry-file', records], { name: 'claude-code' });
    const { tools } = await session.client.listTools();
    assert.deepEqual(tools.map((t) => t.name), [...served.map((t) => t.name), FETCH]);
    for (const tool of tools) {
      assert.equal(tool._meta?.[HINT], 120000, `${tool.name}: 20,000 tokens × 6 characters`);
    }
    const directServed = new Map(served.map((t) => [t.name, t]));
    for (const tool of tools.filter((t) => t.name !== FETCH)) {
      // Everything else of the server's entry is kept (outputSchema aside: docs/protocol.md).
      const { _meta, outputSchema, ...rest } = tool;
      const { _meta: serverMeta, outputSchema: serverSchema, ...serverRest } = directServed.get(tool.name);
      assert.deepEqual(rest, serverRest);
      assert.deepEqual({ ..._meta, [HINT]: undefined }, { ...serverMeta, [HINT]: undefined });
    }

    const listing = await session.client.callTool({ name: 'list_directory', arguments: { path: root } });
    assert.ok(textChars(listing) <= 120000, `${textChars(listing)} characters`);
    // The listing is text over the chunk size: its first chunk, then a trailer with the cursor.
    const trailer = JSON.parse(listing.content.at(-1).text);
    const next = await session.client.callTool({ name: FETCH, arguments: { cursor: trailer._ctxguard.nextCursor } });
    assert.ok(!next.isError, JSON.stringify(next));
    assert.ok(textChars(next) <= 120000);
    await waitFor(() => /call tool=ctxguard_fetch:list_directory .* client="claude-code" proxy_ms=/.test(session.stderrText()),
      5000, 'the fetch\'s decision line');
    await session.close();
    const written = fs.readFileSync(records, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    fs.rmSync(records);
    assert.deepEqual(written.map((r) => [r.tool, r.client]),
      [['tools/list', 'claude-code'], ['list_directory', 'claude-code'],
        ['ctxguard_fetch:list_directory', 'claude-code']]);
  });

  test('other clients get the tool list as before', T, async () => {
    for (const name of ['ctxguard-e2e', 'codex-mcp-client', 'claude-ai']) {
      const session = await connectProxied(serverCommand('filesystem', root), [], { name });
      const { tools } = await session.client.listTools();
      for (const tool of tools) assert.equal(tool._meta?.[HINT], undefined, `${name}: ${tool.name}`);
      await session.close();
    }
  });

  test('observed tools keep their answers, and Claude Code its own limit for them', T, async () => {
    const session = await connectProxied(serverCommand('filesystem', root),
      ['--mode', 'observe'], { name: 'claude-code' });
    const { tools } = await session.client.listTools();
    for (const tool of tools) assert.equal(tool._meta?.[HINT], undefined, tool.name);
    assert.ok(!tools.some((t) => t.name === FETCH));
  });

  test('a reload that changes the hard cap tells Claude Code, and only Claude Code', T, async () => {
    const dir = makeTempDir();
    const file = path.join(dir, 'ctxguard.yaml');
    fs.writeFileSync(file, 'hardCap: 10000\n');
    const listChanged = (session, from) => session.wire.slice(from)
      .filter((m) => m.dir === 'in' && m.msg.method === 'notifications/tools/list_changed').length;
    const claude = await connectProxied(serverCommand('filesystem', root), ['--config', file], { name: 'claude-code' });
    const other = await connectProxied(serverCommand('filesystem', root), ['--config', file], { name: 'ctxguard-e2e' });
    assert.equal((await claude.client.listTools()).tools[0]._meta?.[HINT], 60000);
    const [claudeFrom, otherFrom] = [claude.wire.length, other.wire.length];
    fs.writeFileSync(file, 'hardCap: 15000\n');
    await waitFor(() => listChanged(claude, claudeFrom) === 1, 5000, 'notifications/tools/list_changed');
    assert.equal((await claude.client.listTools()).tools[0]._meta?.[HINT], 90000);
    // The other session has reloaded the same file by now (both poll every 100 ms).
    await waitFor(() => /reloaded/.test(other.stderrText()), 5000, 'the other session\'s reload');
    assert.equal(listChanged(other, otherFrom), 0);
    await claude.close();
    await other.close();
    removeDir(dir);
  });

  for (const mode of ['pinned', 'legacy', 'sdk1']) {
    test(`claude-code named ${mode === 'pinned' ? 'in each request (2026-07-28)' : `in initialize (${mode})`}`, T, async () => {
      const session = await openSession(mode, { proxied: true, clientName: 'claude-code' });
      const { tools } = await session.client.listTools();
      assert.ok(tools.length > 1);
      for (const tool of tools) assert.equal(tool._meta?.[HINT], 72000, `${tool.name}: 12,000 × 6`);
      await session.client.callTool({ name: 'list_rows', arguments: {} });
      await waitFor(() => /call tool=list_rows .* client="claude-code" proxy_ms=/.test(session.stderrText()),
        5000, 'the call\'s decision line naming the client');
      await session.close();
      const other = await openSession(mode, { proxied: true });
      for (const tool of (await other.client.listTools()).tools) assert.equal(tool._meta?.[HINT], undefined);
      await other.close();
    });
  }
});
