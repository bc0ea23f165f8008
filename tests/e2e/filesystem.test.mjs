// server-filesystem over two identical generated data folders (one per
// session, so that writes do not interfere): every tool, called directly and
// through ctxguard, must give the same answer once each folder's path is
// replaced by <ROOT>. Includes multi-hundred-KB answers.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

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

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };

const TOOLS = [
  'read_file', 'read_text_file', 'read_media_file', 'read_multiple_files', 'write_file', 'edit_file',
  'create_directory', 'list_directory', 'list_directory_with_sizes', 'directory_tree', 'move_file',
  'search_files', 'get_file_info', 'list_allowed_directories',
];

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
  let proxied;

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
  const text = (result) => result.content[0].text;

  before(async () => {
    tmp = makeTempDir();
    droot = path.join(tmp, 'direct', 'data');
    proot = path.join(tmp, 'proxy_', 'data'); // same length as 'direct'
    makeDataFolder(droot);
    makeDataFolder(proot);
    [direct, proxied] = await Promise.all([
      connectDirect(serverCommand('filesystem', droot)),
      connectProxied(serverCommand('filesystem', proot), ['--log-level', 'debug']),
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

  test('initialize result and tools/list', T, async () => {
    assert.deepEqual(proxied.client.getServerVersion(), direct.client.getServerVersion());
    assert.deepEqual(proxied.client.getServerCapabilities(), direct.client.getServerCapabilities());
    assert.equal(proxied.client.getInstructions(), direct.client.getInstructions());
    const list = await same((c) => c.listTools());
    assert.deepEqual(list.tools.map((t) => t.name).sort(), [...TOOLS].sort());
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

  test('read_text_file: whole file, head, tail, and the whole 10,000-line log (large answer)', T, async () => {
    await same(call('read_text_file', (root) => ({ path: path.join(root, 'README.md') })));
    const head = await same(call('read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log'), head: 25 })));
    assert.equal(text(head).split('\n').length, 25);
    const tail = await same(call('read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log'), tail: 30 })));
    assert.match(text(tail), /req=009999/);
    const full = await same(call('read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log') })));
    assert.equal(text(full).split('\n').length, 10001);
    assert.ok(jsonBytes(full) > 500_000, `log answer is only ${jsonBytes(full)} bytes`);
    const json = await same(call('read_text_file', (root) => ({ path: path.join(root, 'data', 'big.json') })));
    assert.ok(jsonBytes(json) > 300_000, `big.json answer is only ${jsonBytes(json)} bytes`);
    assert.equal(JSON.parse(text(json)).records.length, 2000);
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

  test('directory_tree of the whole folder (large answer) and with excludes', T, async () => {
    const r = await same(call('directory_tree', (root) => ({ path: root })));
    const tree = JSON.parse(text(r));
    assert.ok(tree.some((e) => e.name === 'src' && e.type === 'directory'));
    assert.ok(jsonBytes(r) > 50_000, `directory_tree answer is only ${jsonBytes(r)} bytes`);
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

  test('many concurrent requests, large and small, interleaved', T, async () => {
    const calls = [];
    for (let i = 0; i < 6; i++) {
      calls.push(['read_text_file', (root) => ({ path: path.join(root, 'logs', 'app.log'), head: 2000 + i })]);
      calls.push(['list_directory', (root) => ({ path: path.join(root, 'src', `module_0${i}`, 'core') })]);
      calls.push(['read_text_file', (root) => ({ path: path.join(root, 'data', 'big.json') })]);
      calls.push(['get_file_info', (root) => ({ path: path.join(root, 'data', 'big.json') })]);
    }
    await same((c, root) => Promise.all(calls.map(([name, args]) => c.callTool({ name, arguments: args(root) }))),
      { fix: (v) => JSON.parse(JSON.stringify(v).replace(/(created|accessed): [^\\"]*/g, '$1: <TIME>')) });
  });

  test('both folders end up identical on disk', T, () => {
    assert.deepEqual(snapshot(proot), snapshot(droot));
  });
});
