// server-filesystem over two identical generated data folders (one per
// session, so that writes do not interfere): every tool, called directly and
// through ctxguard, must give the same answer once each folder's path is
// replaced by <ROOT>, except where the wire contract (docs/protocol.md) has
// ctxguard change it:
//  - initialize: ctxguard's paragraph becomes the instructions (the server has none);
//  - tools/list: no outputSchema, ctxguard_fetch appended;
//  - results over the token budget (the multi-hundred-KB answers: the whole
//    log, big.json, the whole directory tree) come back rewritten: each one is
//    checked to be a proper rewrite (minified, paginated with _ctxguard, or cut
//    at the hard cap) that rebuilds to the direct answer through ctxguard_fetch
//    (lib/reconstruct.mjs). Everything else must be identical.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import {
  FIXED_MTIME,
  closeAllSessions,
  connectDirect,
  connectProxied,
  jsonBytes,
  makeDataFolder,
  makeTempDir,
  normalize,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
} from './lib/harness.mjs';
import { META_KEY, reconstructJson, reconstructText, resolveSummarized, splitTextPiece, textOf, wrappedAnswer } from './lib/reconstruct.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };

const TOOLS = [
  'read_file', 'read_text_file', 'read_media_file', 'read_multiple_files', 'write_file', 'edit_file',
  'create_directory', 'list_directory', 'list_directory_with_sizes', 'directory_tree', 'move_file',
  'search_files', 'get_file_info', 'list_allowed_directories',
];

const FETCH = 'ctxguard_fetch';
// The paragraph ctxguard sets as the instructions of a server that has none (docs/protocol.md, section 8).
const CTXGUARD_PARAGRAPH = 'Tool results pass through ctxguard, which keeps each one within a token budget. A long result may '
  + 'come back shortened, with a `_ctxguard` object saying what was cut. To read more, call `ctxguard_fetch` with `cursor` set '
  + 'to `_ctxguard.nextCursor`; it answers from a cache, without running the tool again. Add `limit` for fewer items per page '
  + 'or `fields` to keep only some keys. A cursor expires after a while: then call the original tool again.';
// ctxguard's largest budget and hard cap: every answer of this suite passes unchanged.
const NO_REWRITE = ['--token-budget', '10000000', '--hard-cap', '10000000', '--chunk-size', '10000000'];
// Pagination only (summarizing has its own tests): every answer rebuilds from its cursors.
const PAGINATION_ONLY = ['--max-depth', '0', '--max-string', '0', '--no-projection', '--chunk-size', '4000'];
const HARD_CAP = 12000; // the default: no first answer goes above it

/** True when `item` is the trailing {"_ctxguard": {...}} text item of a hard-cap cut. */
function isCutTrailer(item) {
  if (item?.type !== 'text') return false;
  try {
    const v = JSON.parse(item.text);
    return v !== null && typeof v === 'object' && Object.keys(v).length === 1 && Object.hasOwn(v, META_KEY);
  } catch {
    return false;
  }
}

/**
 * Check a tools/call answer received through ctxguard (`p`) against the
 * direct answer (`d`) under the wire contract, and say which case it is:
 *  - 'unchanged'  deep-equal to the direct answer (after normalization);
 *  - 'compacted'  one text item of minified JSON, JSON-equal to the direct text, no _ctxguard;
 *  - 'paginated'  minified JSON with a top-level _ctxguard; walking every cursor
 *                 with ctxguard_fetch rebuilds the direct JSON exactly;
 *  - 'cut'        a text piece plus a {"_ctxguard"} item; the pieces fetched
 *                 through every nextCursor concatenate to the direct text
 *                 (for a JSON text: to JSON equal to it).
 * A rewrite keeps server-filesystem's {content: <text>} structuredContent
 * telling the same story as the text.
 * `normD`/`normP` normalize values of each session (folder paths).
 */
async function checkAgainstDirect(client, p, d, { normD = (x) => x, normP = (x) => x } = {}) {
  if (isDeepStrictEqual(normP(p), normD(d))) return 'unchanged';
  assert.ok(!d.isError, `an error result was rewritten: ${JSON.stringify(p).slice(0, 300)}`);
  assert.equal(d.content.length, 1, 'only single-text answers are large here');
  const directText = textOf(d);
  const wrapper = typeof d.structuredContent?.content === 'string' && d.structuredContent.content === directText;
  let directJson;
  try { directJson = JSON.parse(directText); } catch { directJson = undefined; }

  if (p.content.length === 2 && isCutTrailer(p.content[1])) {
    const { text: piece, meta } = splitTextPiece(p);
    assert.equal(meta.offset, 0);
    assert.ok(meta.hasMore, 'a cut first answer has more to fetch');
    // (1% slack: pagination.test.mjs tracks the estimate overshooting by a few tokens.)
    assert.ok(meta.estimatedTokens <= HARD_CAP * 1.01, `first answer of ${meta.estimatedTokens} estimated tokens`);
    if (wrapper) {
      assert.equal(p.structuredContent.content, piece, 'the wrapper member holds the piece');
      assert.deepEqual(p.structuredContent[META_KEY], meta, 'the wrapper carries the same _ctxguard');
    }
    const rec = await reconstructText(client, p);
    if (directJson !== undefined && rec.text !== directText) {
      // A JSON part is cut as its minified JSON.
      assert.deepEqual(normP(JSON.parse(rec.text)), normD(directJson));
    } else {
      assert.equal(normP(rec.text), normD(directText));
    }
    return 'cut';
  }

  assert.equal(p.content.length, 1, `unexpected rewrite: ${JSON.stringify(p).slice(0, 300)}`);
  const text = textOf(p);
  assert.ok(directJson !== undefined, `plain text was rewritten without a cut: ${text.slice(0, 300)}`);
  assert.ok(!text.includes('\n'), 'a rewritten JSON text is minified');
  const json = JSON.parse(text);
  // The wrapper member holds the rewritten JSON as a value, after its _ctxguard.
  if (wrapper) assert.deepEqual(p.structuredContent, wrappedAnswer(json));
  if (!Object.hasOwn(json, META_KEY)) {
    assert.deepEqual(normP(json), normD(directJson), 'compaction keeps the JSON value');
    return 'compacted';
  }
  assert.ok(json[META_KEY].estimatedTokens <= HARD_CAP * 1.01, `first answer of ${json[META_KEY].estimatedTokens} estimated tokens`);
  if (wrapper) assert.deepEqual(Object.keys(p.structuredContent), [META_KEY, 'content']);
  // A summarized answer (collapsed levels of a tree, cut strings) is resolved by path too.
  const summarized = json[META_KEY].resultCursor !== undefined;
  const rec = summarized ? await resolveSummarized(client, p) : await reconstructJson(client, p);
  assert.deepEqual(normP(rec.value), normD(directJson), 'the pages rebuild the direct JSON');
  return 'paginated';
}

// Never read (not even by this test), so that its atime stays the fixed one
// and get_file_info can compare it strictly.
const UNREAD = path.join('scratch', 'info-only.txt');

/** Map of relative path -> content (or '<dir>') of a folder, for comparing the two folders on disk. */
function snapshot(root) {
  const out = {};
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      const rel = path.relative(root, p);
      if (e.isDirectory()) { out[rel] = '<dir>'; walk(p); } else if (rel === UNREAD) out[rel] = `<${fs.statSync(p).size} bytes>`;
      else out[rel] = fs.readFileSync(p, 'utf8');
    }
  };
  walk(root);
  return out;
}

describe('server-filesystem direct vs through ctxguard', { skip: SKIP, timeout: 90_000 }, () => {
  let tmp;
  let droot;
  let proot;
  let direct;
  let proxied; // default budget: large answers are rewritten
  let unlimited; // NO_REWRITE, on the proxied folder (reads only): pure relaying of large answers

  // Answers name absolute paths; both roots have the same length, so only the
  // path itself has to be replaced (padding and sizes stay equal).
  const normFor = (root) => (v) => normalize(v, { replace: [[root, '<ROOT>']] });

  /**
   * Call `fn(client, root)` on both sessions concurrently; assert that the
   * normalized answers (or errors) are deep-equal; return the direct answer.
   * `fix` post-processes each normalized answer (e.g. to blank birth times).
   */
  const same = async (fn, { expectError = false, fix = (x) => x } = {}) => {
    const settle = (s, root) => Promise.resolve().then(() => fn(s.client, root)).then(
      (ok) => ({ ok }),
      (e) => ({ error: { code: e.code, message: e.message, data: e.data } }));
    const [d, p] = await Promise.all([settle(direct, droot), settle(proxied, proot)]);
    const nd = fix(normFor(droot)(d));
    const np = fix(normFor(proot)(p));
    assert.deepEqual(np, nd);
    if (expectError) {
      assert.ok(d.error || d.ok?.isError, `expected an error, got ${JSON.stringify(d).slice(0, 300)}`);
      return d.error ?? d.ok;
    }
    assert.ok(!d.error, `direct call failed: ${JSON.stringify(d.error)}`);
    assert.ok(!d.ok.isError, `direct tool call returned an error: ${JSON.stringify(d.ok).slice(0, 500)}`);
    return d.ok;
  };
  const call = (name, argsFor) => (c, root) => c.callTool({ name, arguments: argsFor(root) });

  /**
   * Call `fn(client, root)` on both sessions concurrently; the proxied answer
   * must be the direct one or a proper rewrite of it (checkAgainstDirect), of
   * the kind `expect` when given. Returns {d, p, kind}.
   */
  const sameOrRewritten = async (fn, { expect } = {}) => {
    const [d, p] = await Promise.all([fn(direct.client, droot), fn(proxied.client, proot)]);
    assert.ok(!d.isError, `direct tool call returned an error: ${JSON.stringify(d).slice(0, 500)}`);
    const kind = await checkAgainstDirect(proxied.client, p, d, { normD: normFor(droot), normP: normFor(proot) });
    if (expect) assert.equal(kind, expect, `expected a ${expect} answer, got ${kind}`);
    return { d, p, kind };
  };
  const text = (result) => result.content[0].text;

  before(async () => {
    tmp = makeTempDir();
    droot = path.join(tmp, 'direct', 'data');
    proot = path.join(tmp, 'proxy_', 'data'); // same length as 'direct'
    makeDataFolder(droot);
    makeDataFolder(proot);
    [direct, proxied, unlimited] = await Promise.all([
      connectDirect(serverCommand('filesystem', droot)),
      connectProxied(serverCommand('filesystem', proot), ['--log-level', 'debug', ...PAGINATION_ONLY]),
      connectProxied(serverCommand('filesystem', proot), NO_REWRITE),
    ]);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(tmp);
  });

  test('the two generated folders are identical', T, () => {
    assert.deepEqual(snapshot(proot), snapshot(droot));
    const files = Object.values(snapshot(droot)).filter((v) => v !== '<dir>').length;
    assert.ok(files >= 250, `only ${files} files generated`);
  });

  test('initialize result and tools/list (ctxguard instructions; no outputSchema, ctxguard_fetch last)', T, async () => {
    assert.deepEqual(proxied.client.getServerVersion(), direct.client.getServerVersion());
    assert.deepEqual(proxied.client.getServerCapabilities(), direct.client.getServerCapabilities());
    // The server has no instructions: ctxguard's paragraph is the whole text.
    assert.equal(direct.client.getInstructions(), undefined);
    assert.equal(proxied.client.getInstructions(), CTXGUARD_PARAGRAPH);
    const [d, p] = await Promise.all([direct.client.listTools(), proxied.client.listTools()]);
    assert.deepEqual(d.tools.map((t) => t.name).sort(), [...TOOLS].sort());
    assert.equal(d.nextCursor, undefined, 'a single page (ctxguard_fetch goes on the last one)');
    assert.ok(d.tools.some((t) => t.outputSchema), 'the server lists tools with an outputSchema (or this check proves little)');
    assert.equal(p.tools.at(-1)?.name, FETCH, 'ctxguard_fetch is listed last');
    assert.deepEqual(p.tools.at(-1).inputSchema.required, ['cursor']);
    assert.deepEqual({ ...p, tools: p.tools.slice(0, -1) }, { ...d, tools: d.tools.map(({ outputSchema, ...rest }) => rest) });
    await same((c) => c.ping());
  });

  test('list_allowed_directories', T, async () => {
    const r = await same(call('list_allowed_directories', () => ({})));
    assert.equal(text(r), `Allowed directories:\n${droot}`);
  });

  test('get_file_info (birth time normalized; the file is never read, so atime is the fixed one)', T, async () => {
    const blank = (keys) => (v) => JSON.parse(JSON.stringify(v).replace(new RegExp(`(${keys.join('|')}): [^\\\\"]*`, 'g'), '$1: <TIME>'));
    const r = await same(call('get_file_info', (root) => ({ path: path.join(root, UNREAD) })), { fix: blank(['created']) });
    assert.match(text(r), /size: 31\n/);
    assert.match(text(r), new RegExp(`modified: ${FIXED_MTIME.toString().slice(0, 24)}`));
    assert.match(text(r), /isFile: true/);
    assert.match(text(r), new RegExp(`accessed: ${FIXED_MTIME.toString().slice(0, 24)}`));
    // A directory: listing elsewhere in this suite may update its atime.
    await same(call('get_file_info', (root) => ({ path: path.join(root, 'docs', 'guide') })), { fix: blank(['created', 'accessed']) });
  });

  test('read_text_file: whole file, head, tail; the whole 10,000-line log and big.json (large answers, rewritten)', T, async (t) => {
    await same(call('read_text_file', (root) => ({ path: path.join(root, 'README.md') })));
    const head = await same(call('read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log'), head: 25 })));
    assert.equal(text(head).split('\n').length, 25);
    const tail = await same(call('read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log'), tail: 30 })));
    assert.match(text(tail), /req=009999/);
    // ~1 MB of plain text, far over the hard cap: cut into pieces that rebuild the log byte for byte.
    const full = await sameOrRewritten(call('read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log') })), { expect: 'cut' });
    assert.equal(text(full.d).split('\n').length, 10001);
    assert.ok(jsonBytes(full.d) > 500_000, `log answer is only ${jsonBytes(full.d)} bytes`);
    assert.ok(jsonBytes(full.p) < jsonBytes(full.d) / 10, `the cut answer is ${jsonBytes(full.p)} bytes`);
    // With an unlimited budget the same ~1.9 MB answer is relayed unchanged.
    const relayed = await unlimited.client.callTool({ name: 'read_text_file', arguments: { path: path.join(proot, 'logs', 'app.log') } });
    assert.deepEqual(relayed, full.d);
    // Pretty-printed JSON of 2000 records: paginated; the pages rebuild every record.
    const json = await sameOrRewritten(call('read_text_file', (root) => ({ path: path.join(root, 'data', 'big.json') })), { expect: 'paginated' });
    assert.ok(jsonBytes(json.d) > 300_000, `big.json answer is only ${jsonBytes(json.d)} bytes`);
    assert.equal(JSON.parse(text(json.d)).records.length, 2000);
    assert.equal(JSON.parse(text(json.p))._ctxguard.path, '/records');
    t.diagnostic(`log: ${jsonBytes(full.d)} -> ${jsonBytes(full.p)} bytes; big.json: ${jsonBytes(json.d)} -> ${jsonBytes(json.p)} bytes`);
    // Relative paths resolve against the allowed directory.
    await same(call('read_text_file', () => ({ path: 'notes.txt' })));
    // Both head and tail is an error.
    await same(call('read_text_file', (root) => ({ path: path.join(root, 'notes.txt'), head: 1, tail: 1 })), { expectError: true });
  });

  test('read_file (deprecated alias)', T, async () => {
    await same(call('read_file', (root) => ({ path: path.join(root, 'todo.md') })));
  });

  test('read_media_file: image and non-media (embedded resource)', T, async () => {
    const img = await same(call('read_media_file', (root) => ({ path: path.join(root, 'images', 'pixel.png') })));
    assert.equal(img.content[0].type, 'image');
    assert.equal(img.content[0].mimeType, 'image/png');
    const res = await same(call('read_media_file', (root) => ({ path: path.join(root, 'data', 'small.csv') })));
    assert.equal(res.content[0].type, 'resource');
  });

  test('read_multiple_files (one missing)', T, async () => {
    const r = await same(call('read_multiple_files', (root) => ({
      paths: [path.join(root, 'README.md'), path.join(root, 'data', 'small.csv'), path.join(root, 'missing.txt'),
        path.join(root, 'src', 'module_03', 'io', 'file_05.ts')],
    })));
    assert.match(text(r), /missing\.txt: Error - /);
  });

  test('list_directory and list_directory_with_sizes', T, async () => {
    const r = await same(call('list_directory', (root) => ({ path: root })));
    assert.match(text(r), /\[DIR\] src/);
    await same(call('list_directory', (root) => ({ path: path.join(root, 'src', 'module_02', 'util') })));
    const s = await same(call('list_directory_with_sizes', (root) => ({ path: root })));
    assert.match(text(s), /Total: \d+ files, \d+ directories/);
    await same(call('list_directory_with_sizes', (root) => ({ path: path.join(root, 'data'), sortBy: 'size' })));
  });

  test('directory_tree of the whole folder (large answer, rewritten) and with excludes', T, async (t) => {
    // Over the budget; the nested file lists are long arrays: paginated, the pages rebuild the tree.
    const r = await sameOrRewritten(call('directory_tree', (root) => ({ path: root })), { expect: 'paginated' });
    t.diagnostic(`directory_tree: ${r.kind}, ${jsonBytes(r.d)} -> ${jsonBytes(r.p)} bytes`);
    const tree = JSON.parse(text(r.d));
    assert.ok(tree.some((e) => e.name === 'src' && e.type === 'directory'));
    assert.ok(jsonBytes(r.d) > 50_000, `directory_tree answer is only ${jsonBytes(r.d)} bytes`);
    await same(call('directory_tree', (root) => ({ path: root, excludePatterns: ['src', '**/*.log'] })));
  });

  test('search_files', T, async () => {
    const r = await same(call('search_files', (root) => ({ path: root, pattern: '**/*.md' })));
    assert.ok(text(r).split('\n').length > 50);
    await same(call('search_files', (root) => ({ path: root, pattern: '**/file_0[0-3].*', excludePatterns: ['src/module_01/**'] })));
    await same(call('search_files', (root) => ({ path: root, pattern: '**/*.nothing' })));
  });

  test('write_file: create, overwrite, read back', T, async () => {
    const content = 'first line\nsecond line — with “unicode” ✓\n';
    await same(call('write_file', (root) => ({ path: path.join(root, 'scratch', 'new.txt'), content })));
    await same(call('write_file', (root) => ({ path: path.join(root, 'scratch', 'new.txt'), content: content + 'third line\n' })));
    const r = await same(call('read_text_file', (root) => ({ path: path.join(root, 'scratch', 'new.txt') })));
    assert.equal(text(r), `${content}third line\n`);
    // A large write: ~300 KB in a client-to-server message.
    const big = Array.from({ length: 6000 }, (_, i) => `row ${i} ${'x'.repeat(40)}`).join('\n');
    await same(call('write_file', (root) => ({ path: path.join(root, 'scratch', 'big-write.txt'), content: big })));
    assert.equal(fs.readFileSync(path.join(proot, 'scratch', 'big-write.txt'), 'utf8'), big);
  });

  test('edit_file: dry run, then real edit', T, async () => {
    const edits = [{ oldText: 'line two', newText: 'line 2 (edited)' }, { oldText: 'the end', newText: 'the real end' }];
    const dry = await same(call('edit_file', (root) => ({ path: path.join(root, 'scratch', 'edit-me.txt'), edits, dryRun: true })));
    assert.match(text(dry), /\+line 2 \(edited\)/);
    assert.equal(fs.readFileSync(path.join(proot, 'scratch', 'edit-me.txt'), 'utf8'), 'line one\nline two\nline three\nthe end\n');
    await same(call('edit_file', (root) => ({ path: path.join(root, 'scratch', 'edit-me.txt'), edits })));
    assert.equal(fs.readFileSync(path.join(proot, 'scratch', 'edit-me.txt'), 'utf8'), 'line one\nline 2 (edited)\nline three\nthe real end\n');
    // An edit whose oldText is not found is an error.
    await same(call('edit_file', (root) => ({ path: path.join(root, 'scratch', 'edit-me.txt'), edits: [{ oldText: 'absent', newText: 'x' }] })),
      { expectError: true });
  });

  test('create_directory and move_file', T, async () => {
    await same(call('create_directory', (root) => ({ path: path.join(root, 'scratch', 'a', 'b', 'c') })));
    await same(call('move_file', (root) => ({ source: path.join(root, 'scratch', 'move-me.txt'), destination: path.join(root, 'scratch', 'a', 'b', 'moved.txt') })));
    await same(call('list_directory', (root) => ({ path: path.join(root, 'scratch', 'a', 'b') })));
    // Moving onto an existing file fails.
    await same(call('move_file', (root) => ({ source: path.join(root, 'scratch', 'new.txt'), destination: path.join(root, 'scratch', 'edit-me.txt') })),
      { expectError: true });
  });

  test('access outside the allowed directory is refused the same way', T, async () => {
    await same(call('read_text_file', () => ({ path: '/etc/hostname' })), { expectError: true });
    await same(call('list_directory', (root) => ({ path: path.join(root, '..', '..') })), { expectError: true });
  });

  const concurrentCalls = () => {
    const calls = [];
    for (let i = 0; i < 6; i++) {
      calls.push(['read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log'), head: 2000 + i })]);
      calls.push(['list_directory', (root) => ({ path: path.join(root, 'src', `module_0${i}`, 'core') })]);
      calls.push(['read_text_file', (root) => ({ path: path.join(root, 'data', 'big.json') })]);
      calls.push(['get_file_info', (root) => ({ path: path.join(root, 'data', 'big.json') })]);
    }
    return calls;
  };
  const untimeInfo = (v) => JSON.parse(JSON.stringify(v).replace(/(created|accessed): [^\\"]*/g, '$1: <TIME>'));

  test('many concurrent requests, large and small, interleaved: relayed unchanged with an unlimited budget', T, async () => {
    // Pure relaying under concurrency: this session runs ctxguard with NO_REWRITE
    // (--token-budget/--hard-cap 10000000), so even the ~200 KB and ~1.2 MB answers
    // must come back exactly as the server sent them, each to its own request.
    const calls = concurrentCalls();
    const run = (c, root) => Promise.all(calls.map(([name, args]) => c.callTool({ name, arguments: args(root) })));
    const [d, p] = await Promise.all([run(direct.client, droot), run(unlimited.client, proot)]);
    assert.deepEqual(untimeInfo(normFor(proot)(p)), untimeInfo(normFor(droot)(d)));
    assert.ok(d.some((r) => jsonBytes(r) > 1_000_000), 'some answers are large');
  });

  test('many concurrent requests with the default budget: small ones unchanged, large ones rewritten and rebuilt', T, async (t) => {
    // The same interleaving through the default session: every answer is its
    // own request's (rebuilt from its own cursors, fetched concurrently too).
    const calls = concurrentCalls();
    const run = (c, root) => Promise.all(calls.map(([name, args]) => c.callTool({ name, arguments: args(root) })));
    const [d, p] = await Promise.all([run(direct.client, droot), run(proxied.client, proot)]);
    const kinds = await Promise.all(calls.map((_, i) => checkAgainstDirect(proxied.client, untimeInfo(p[i]), untimeInfo(d[i]),
      { normD: normFor(droot), normP: normFor(proot) })));
    const expected = calls.map(([name, args]) => {
      if (name === 'read_text_file') return args('').head ? 'cut' : 'paginated';
      return 'unchanged';
    });
    assert.deepEqual(kinds, expected);
    t.diagnostic(`kinds: ${[...new Set(kinds)].join(', ')}`);
  });

  test('both folders end up identical on disk', T, () => {
    assert.deepEqual(snapshot(proot), snapshot(droot));
  });
});
