// Every answer within the limits of the client that asked, measured by that client's own units.
// Real clients announce themselves as each built-in preset's client (docs/clients.md); ctxguard
// must keep every first answer, every page a cursor leads to, every line range and every line
// search within that client's characters (JavaScript string length), UTF-8 bytes and lines of
// the text items joined by newlines, or JSON bytes (Codex: structuredContent serialized when
// there is one, else the text items as a content array), and keep the `_ctxguard` item (and its
// cursor) inside; and the client's own rule (lib/client-cuts.mjs) must cut none of them:
//   - SDK 1.x, over server-filesystem (a 1 MB log, JSON files of 3,000 records, ASCII and with
//     non-ASCII names, a directory of 1,000 entries) and server-memory (a graph of 400 entities);
//   - SDK v2 pinned to 2026-07-28 (the name in every request's _meta) and SDK 1.x, over
//     lib/v2-server.mjs (3,000 rows, a 6,000-line log, a report with structuredContent);
//   - a client no preset names gets the global settings; `--client` names a silent client; a
//     `clients:` rule in the file (here: 40 lines) binds like a preset.
// The limit that bound each answer is in the telemetry record ("limit").

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  closeAllSessions,
  connectProxied,
  makeFiles,
  makeTempDir,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
} from './lib/harness.mjs';
import { clientCut } from './lib/client-cuts.mjs';
import { closeAllV2Sessions, openSession } from './lib/v2-harness.mjs';
import { makeLog } from './lib/v2-server.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 180_000 };
const FETCH = 'ctxguard_fetch';

// The built-in presets (lib/config/client_presets.cpp), as each client counts.
const PRESETS = [
  { name: 'claude-code', chars: 50000, jsonBytes: 50000 },
  { name: 'claude-ai', bytes: 800000 },
  { name: 'codex-mcp-client', jsonBytes: 12000 },
  { name: 'github-copilot-developer', bytes: 10000 },
  // 40,000 with the 41-character <untrusted_context> wrapper Gemini CLI puts around a block.
  { name: 'gemini-cli-mcp-client', chars: 39959 },
  { name: 'Visual Studio Code', chars: 8000 },
  { name: 'Visual Studio Code - Insiders', chars: 8000 },
  { name: 'Cline', chars: 8000 },
];

/** The text items joined as a client shows them, measured in each client's unit. */
function measure(result) {
  const texts = result.content.filter((c) => c.type === 'text').map((c) => c.text);
  const text = texts.join('\n');
  const json = result.structuredContent != null
    ? JSON.stringify(result.structuredContent)
    : JSON.stringify(texts.map((t) => ({ type: 'text', text: t })));
  return {
    chars: text.length,
    bytes: Buffer.byteLength(text, 'utf8'),
    lines: text.split('\n').length,
    jsonBytes: Buffer.byteLength(json, 'utf8'),
  };
}

function assertWithin(result, limits, what) {
  assert.ok(!result.isError, `${what}: ${JSON.stringify(result).slice(0, 300)}`);
  const size = measure(result);
  for (const unit of ['chars', 'bytes', 'lines', 'jsonBytes']) {
    if (limits[unit]) assert.ok(size[unit] <= limits[unit], `${what}: ${size[unit]} ${unit} > ${limits[unit]}`);
  }
  // The client's own rule cuts nothing of it.
  const cut = limits.name ? clientCut(limits.name) : undefined;
  if (cut) assert.equal(cut(result).cut, false, `${what}: ${limits.name} would cut it`);
  return size;
}

/** Every `_ctxguard` object of an answer: in a trailing item, or beside the JSON it describes. */
function metadataOf(result) {
  const found = [];
  for (const item of result.content.filter((c) => c.type === 'text')) {
    let parsed;
    try { parsed = JSON.parse(item.text); } catch { continue; }
    if (parsed && typeof parsed === 'object' && parsed._ctxguard) found.push(parsed._ctxguard);
  }
  return found;
}

/** The first cursor an answer offers to continue (nextCursor, or the first cut array's). */
function nextCursorOf(result) {
  for (const meta of metadataOf(result)) {
    if (typeof meta.nextCursor === 'string') return meta.nextCursor;
    for (const cut of meta.cuts ?? meta.arrays ?? []) {
      if (typeof cut.nextCursor === 'string') return cut.nextCursor;
    }
  }
  return undefined;
}

/**
 * Calls `name`, then follows its cursors for up to `pages` pages, and for text a wide line range
 * and a line search: every answer within `limits`, and every cut answer with its cursor.
 * Returns the number of answers checked.
 */
async function walk(client, name, args, limits, { pages = 4, text = false } = {}) {
  const first = await client.callTool({ name, arguments: args });
  assertWithin(first, limits, `${name} first answer`);
  let cursor = nextCursorOf(first);
  // An answer that says there is more carries its cursor (one that fits whole has neither).
  const more = metadataOf(first).some((meta) => meta.hasMore);
  assert.ok(!more || cursor, `${name}: more, without a cursor: ${JSON.stringify(first).slice(0, 300)}`);
  if (!cursor) return 1;
  const firstCursor = cursor;
  let checked = 1;
  for (let page = 0; page < pages && cursor; page++) {
    const next = await client.callTool({ name: FETCH, arguments: { cursor } });
    assertWithin(next, limits, `${name} page ${page + 2}`);
    cursor = nextCursorOf(next);
    checked++;
  }
  if (text) {
    const range = await client.callTool({ name: FETCH, arguments: { cursor: firstCursor, startLine: 1, endLine: 100000 } });
    assertWithin(range, limits, `${name} lines 1-100000`);
    assert.ok(nextCursorOf(range), `${name}: a line range over the limits continues`);
    const search = await client.callTool({ name: FETCH, arguments: { cursor: firstCursor, query: 'ERROR' } });
    assertWithin(search, limits, `${name} line search`);
    checked += 2;
  }
  return checked;
}

describe('answers within the limits of the client that asked', { skip: SKIP }, () => {
  let root;
  let memoryDir;
  before(() => {
    root = makeTempDir();
    fs.writeFileSync(path.join(root, 'app.log'), makeLog(12000));
    const records = Array.from({ length: 3000 }, (_, i) => ({
      id: i,
      name: `Zoë Ångström-Þórsdóttir ${i}`,
      city: ['Zürich', 'København', '東京', 'São Paulo'][i % 4],
      note: i % 7 === 0 ? 'gift 🎁 wrapped' : 'standard',
      total: `${(i * 7.31).toFixed(2)}`,
    }));
    fs.writeFileSync(path.join(root, 'orders.json'), JSON.stringify({ orders: records }, null, 2));
    // ASCII records: about 3 characters per estimated token, so characters bind before tokens.
    const bookings = Array.from({ length: 3000 }, (_, i) => ({
      id: `BK-${100000 + i}`, guest: `guest number ${i}`, status: ['confirmed', 'cancelled'][i % 2],
      nights: 1 + (i % 9), room: `suite-${i % 40}`,
    }));
    fs.writeFileSync(path.join(root, 'bookings.json'), JSON.stringify(bookings));
    makeFiles(path.join(root, 'many'), 1000, (i) => `report_${String(i).padStart(4, '0')}_quarterly_summary.txt`);
    memoryDir = makeTempDir();
  });
  after(async () => {
    await closeAllSessions();
    await closeAllV2Sessions();
    removeDir(root);
    removeDir(memoryDir);
  });

  // Roomy global settings, so that the client's limit is what binds (with the defaults it
  // often is the budget of 4,000 estimated tokens, or the page of 50 items).
  const ROOMY = ['--token-budget', '30000', '--chunk-size', '20000', '--page-size', '500', '--max-page-size', '500'];

  for (const preset of PRESETS) {
    test(`${preset.name}: server-filesystem answers and fetches within its limit`, T, async () => {
      for (const globals of [[], ROOMY]) {
        const dir = makeTempDir();
        const records = path.join(dir, 'records.jsonl');
        const session = await connectProxied(serverCommand('filesystem', root),
          [...globals, '--telemetry-file', records], { name: preset.name, rawAnswers: true });
        const { client } = session;
        let checked = 0;
        checked += await walk(client, 'read_text_file', { path: path.join(root, 'app.log') }, preset, { text: true });
        checked += await walk(client, 'read_text_file', { path: path.join(root, 'orders.json') }, preset);
        checked += await walk(client, 'read_text_file', { path: path.join(root, 'bookings.json') }, preset);
        checked += await walk(client, 'list_directory', { path: path.join(root, 'many') }, preset, { pages: 2 });
        assert.ok(checked >= 12);
        await session.close();
        const limits = fs.readFileSync(records, 'utf8').trim().split('\n').map((l) => JSON.parse(l).limit);
        removeDir(dir);
        // With room in tokens, the client's own unit bound answers (Claude Desktop's 800,000
        // bytes never do: the hard cap comes first).
        // (Claude Code's JSON bytes bind before its characters: the JSON is never shorter.)
        const unit = preset.jsonBytes ? 'json_bytes' : preset.chars ? 'chars' : 'bytes';
        if (globals === ROOMY && preset.name !== 'claude-ai') {
          assert.ok(limits.includes(unit), `${preset.name}: ${JSON.stringify(limits)}`);
        }
      }
    });
  }

  test('server-memory: a large graph within VS Code\'s and Copilot CLI\'s limits', T, async () => {
    for (const preset of [PRESETS[5], PRESETS[3]]) {
      const file = path.join(memoryDir, `${preset.name.replace(/\W/g, '_')}.jsonl`);
      const session = await connectProxied({ ...serverCommand('memory'), env: { MEMORY_FILE_PATH: file } }, [],
        { name: preset.name, rawAnswers: true });
      const entities = Array.from({ length: 400 }, (_, i) => ({
        name: `entity-${i}`,
        entityType: ['person', 'place', 'project'][i % 3],
        observations: [`observed on day ${i} in Zürich`, `notes: ${'détail '.repeat(8)}`],
      }));
      const created = await session.client.callTool({ name: 'create_entities', arguments: { entities } });
      assertWithin(created, preset, 'create_entities');
      await walk(session.client, 'read_graph', {}, preset, { pages: 3 });
      await session.close();
    }
  });

  for (const mode of ['pinned', 'sdk1']) {
    test(`SDK ${mode === 'pinned' ? 'v2 (name in every request, 2026-07-28)' : '1.x'}: rows, a log and a report within each client's limit`, T, async () => {
      for (const preset of [PRESETS[2], PRESETS[5], PRESETS[3]]) {
        const session = await openSession(mode, { proxied: true, clientName: preset.name, rawAnswers: true });
        const { client } = session;
        await walk(client, 'list_rows', {}, preset, { pages: 3 });
        await walk(client, 'read_log', {}, preset, { pages: 3, text: true });
        await walk(client, 'report', {}, preset, { pages: 2 });
        await session.close();
      }
    });
  }

  test('an unknown client gets the global settings; --client names a silent one', T, async () => {
    const orders = { path: path.join(root, 'bookings.json') };
    // Pages of 200 and a budget of 10,000 estimated tokens: the budget decides how many records
    // an answer shows, and it is over Cline's 8,000 characters (this JSON of ids and numbers
    // takes about 1.3 characters per estimated token).
    const globals = ['--page-size', '200', '--token-budget', '10000'];
    const unknown = await connectProxied(serverCommand('filesystem', root), globals, { name: 'some-new-client', rawAnswers: true });
    const wide = await unknown.client.callTool({ name: 'read_text_file', arguments: orders });
    assert.ok(measure(wide).chars > 8000, `${measure(wide).chars} characters`);
    await unknown.close();
    const silent = await connectProxied(serverCommand('filesystem', root), [...globals, '--client', 'Cline'], { name: '', rawAnswers: true });
    await walk(silent.client, 'read_text_file', orders, { chars: 8000 }, { pages: 2 });
    await silent.close();
  });

  test('a clients: rule binds in lines, and the record names the limit', T, async () => {
    const dir = makeTempDir();
    const config = path.join(dir, 'ctxguard.yaml');
    fs.writeFileSync(config, 'clients:\n  - match: "line-counting-*"\n    maxLines: 40\n');
    const records = path.join(dir, 'records.jsonl');
    const session = await connectProxied(serverCommand('filesystem', root),
      ['--config', config, '--telemetry-file', records], { name: 'line-counting-client', rawAnswers: true });
    await walk(session.client, 'read_text_file', { path: path.join(root, 'app.log') }, { lines: 40 }, { pages: 3, text: true });
    await session.close();
    const written = fs.readFileSync(records, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.equal(written[0].tool, 'read_text_file');
    assert.equal(written[0].client, 'line-counting-client');
    assert.equal(written[0].limit, 'lines');
    removeDir(dir);
  });
});
