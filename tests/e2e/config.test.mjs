// Configuration end to end (issue 5): built-in defaults < YAML file (--config FILE or
// CTXGUARD_CONFIG) < variables CTXGUARD_<KEY> < flags, per-tool rules, feature switches, observe
// mode, hot reload (a poll every 200 ms, SIGHUP at once) and --check-config, with the real SDK
// client, the real server-filesystem (and server-everything for observe mode) and the real
// ctxguard binary. Every behaviour is checked against what a client sees, most of it against a
// direct session to the same server over the same generated folder:
//   - an edited file is picked up within a second (the `reloaded` log line is timed from the
//     write), the next call behaves by the new file (an answer under the new budget equals the
//     direct one), cursors issued before a reload still work after it, and a change that alters
//     tools/list (enforce <-> observe) sends notifications/tools/list_changed;
//   - a file with a syntax error, an out-of-range value or an unknown key is refused with its key
//     path, and the calls after it are the same as before (cursors and estimates masked);
//   - SIGHUP reloads at once (well inside one poll interval);
//   - observe mode, from the file or --mode, forwards every answer as the server sent it (deep-equal
//     through the SDK, byte-identical on raw pipes) and logs what enforce would have done;
//   - per-tool rules change only the tools they match: pageSize, mode, fields, search,
//     pagination, summarization, chunking;
//   - the same key from file, variable and flag: --check-config names the source of each value
//     and a session behaves by the winner; a reload of a key a flag overrides changes nothing;
//   - --check-config prints the effective configuration (every key, reusable as a file) or every
//     problem (exit 2); a start-up with an invalid file exits 2 before starting the server.
// Product bugs found while writing these tests were fixed; each keeps the test that found it.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';

import {
  closeAllSessions,
  connectDirect,
  connectProxied,
  killAllRaw,
  makeFiles,
  makeTempDir,
  pidAlive,
  prng,
  rawProxy,
  removeDir,
  runCtxguard,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
} from './lib/harness.mjs';
import { textOf } from './lib/reconstruct.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };
const FETCH = 'ctxguard_fetch';

// The keys --check-config prints, in its order (ctxguard --help, config/ctxguard.yaml).
const KEYS = ['mode', 'tokenBudget', 'hardCap', 'maxChars', 'maxBytes', 'maxLines', 'maxJsonBytes', 'estimatorMargin', 'pageSize', 'maxPageSize', 'chunkSize', 'maxString',
  'maxDepth', 'pagination', 'summarization', 'projection', 'chunking', 'search', 'tables', 'cursorTtl', 'toolListBudget', 'toolList', 'cacheSize'];
// Their built-in defaults, as --check-config writes them.
const DEFAULTS = {
  mode: 'enforce', tokenBudget: '4000', hardCap: '12000', maxChars: '0', maxBytes: '0', maxLines: '0', maxJsonBytes: '0', estimatorMargin: '0', pageSize: '50', maxPageSize: '200',
  chunkSize: '2000', maxString: '500', maxDepth: '4', pagination: 'true', summarization: 'true', projection: 'true',
  chunking: 'true', search: 'true', tables: 'false', cursorTtl: '600s', toolListBudget: '10000', toolList: 'full', cacheSize: '256M',
};
const SOURCES = ['default', 'file', 'environment', 'command line', 'derived'];

// Reload latencies measured by the tests (write or SIGHUP -> `reloaded` line), for the report.
const latencies = [];

// ---------------------------------------------------------------- the data folder

let tmp;
let DATA;
const P = {}; // paths of the generated files
const D = {}; // what the generated JSON files hold

/**
 * The folder server-filesystem serves to every session (direct and proxied read the same files):
 *   many/           300 empty files (directory_tree: a 300-item JSON array; list_directory: text)
 *   items.json      300 small records {id, name, status} (20,000 estimated tokens, paginated)
 *   records.json    300 records of 8 fields, one nested (projected under a small budget)
 *   doc.json        6 sections of 400 words (long strings: summarized, no array to cut)
 *   app.log         400 log lines (plain text: chunked, or cut at the hard cap)
 */
function makeData() {
  tmp = makeTempDir('ctxguard-config-');
  DATA = path.join(tmp, 'data');
  const rnd = prng(5);
  const W = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'.split(' ');
  const words = (n) => Array.from({ length: n }, () => W[Math.floor(rnd() * W.length)]).join(' ');
  P.many = path.join(DATA, 'many');
  makeFiles(P.many, 300);
  D.items = Array.from({ length: 300 }, (_, i) => ({ id: i, name: `item-${i}`, status: i % 2 ? 'closed' : 'open' }));
  P.items = path.join(DATA, 'items.json');
  fs.writeFileSync(P.items, JSON.stringify(D.items, null, 2));
  const cities = ['Lisbon', 'Oslo', 'Kyoto', 'Lima', 'Accra'];
  D.records = Array.from({ length: 300 }, (_, i) => ({
    id: i,
    name: `record number ${i}`,
    status: ['open', 'closed', 'pending'][i % 3],
    owner: { name: `owner ${i % 17}`, email: `owner${i % 17}@example.com` },
    city: cities[i % 5],
    note: `note for record ${i}: the quick brown fox jumps over the lazy dog`,
    score: (i * 37) % 101,
    tags: [`a${i % 4}`, `b${i % 6}`],
  }));
  P.records = path.join(DATA, 'records.json');
  fs.writeFileSync(P.records, JSON.stringify(D.records, null, 2));
  D.doc = { title: 'design notes', sections: Array.from({ length: 6 }, (_, i) => ({ heading: `section ${i}`, text: words(400) })) };
  P.doc = path.join(DATA, 'doc.json');
  fs.writeFileSync(P.doc, JSON.stringify(D.doc, null, 2));
  P.log = path.join(DATA, 'app.log');
  fs.writeFileSync(P.log, Array.from({ length: 400 }, (_, i) => `2024-01-01T00:${String(Math.floor(i / 60)).padStart(2, '0')}:${String(i % 60).padStart(2, '0')} INFO req=${i} ${words(8)}`).join('\n') + '\n');
}

const fsCmd = (env) => ({ ...serverCommand('filesystem', DATA), ...(env ? { env } : {}) });

// ---------------------------------------------------------------- helpers

const call = (session, name, args = {}) => session.client.callTool({ name, arguments: args });
const fetchCursor = (session, args) => call(session, FETCH, args);

/** The `_ctxguard` of an answer (a JSON answer's member or a text answer's trailing item), or null. */
function metaOf(result) {
  for (const item of [...(result.content ?? [])].reverse()) {
    if (item.type !== 'text') continue;
    try {
      const json = JSON.parse(item.text);
      if (json && typeof json === 'object' && json._ctxguard) return json._ctxguard;
    } catch { /* plain text */ }
  }
  return null;
}

/** {items, meta} of a shortened answer (or a page) of a top-level array. */
function pageOf(result) {
  assert.ok(!result.isError, `isError: ${JSON.stringify(result).slice(0, 300)}`);
  const json = JSON.parse(textOf(result));
  assert.ok(json._ctxguard, `no _ctxguard in ${textOf(result).slice(0, 200)}`);
  assert.ok(Array.isArray(json.items), `no items in ${textOf(result).slice(0, 200)}`);
  return { items: json.items, meta: json._ctxguard };
}

/** An isError result with one line of text. */
function assertOneLineError(result, pattern) {
  assert.equal(result.isError, true, `expected isError, got ${JSON.stringify(result).slice(0, 300)}`);
  assert.equal(result.content.length, 1);
  const { text } = result.content[0];
  assert.ok(text.length > 0 && !text.includes('\n'), `not one line: ${JSON.stringify(text)}`);
  if (pattern) assert.match(text, pattern);
  return text;
}

const VARYING = new Set(['nextCursor', 'resultCursor', 'estimatedTokens', 'budgetUsed', 'budgetRemaining']);
/**
 * A tools/call result with what differs from call to call masked: cursors (random bytes) and the
 * token estimates that depend on them. Text items and string members holding JSON are parsed.
 */
function masked(result) {
  const walk = (v) => {
    if (typeof v === 'string' && /^\s*[[{]/.test(v)) {
      try { return { json: walk(JSON.parse(v)) }; } catch { return v; }
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, VARYING.has(k) ? '<varies>' : walk(x)]));
    return v;
  };
  return walk(result);
}

/**
 * ctxguard's stderr, line by line, each line with the moment it arrived (performance.now()), for
 * timing reloads. Watches `stream` from now on; earlier lines are in stderrText().
 */
function watchLog(stream) {
  const lines = [];
  const decoder = new StringDecoder('utf8');
  let partial = '';
  stream.on('data', (chunk) => {
    const at = performance.now();
    const parts = (partial + decoder.write(chunk)).split('\n');
    partial = parts.pop();
    for (const text of parts) lines.push({ text, at });
  });
  return {
    lines,
    mark: () => lines.length,
    /** The index of the first line at or after `from` that matches `re`. */
    async find(re, from, ms = 5000, what = String(re)) {
      const found = await waitFor(() => {
        const i = lines.findIndex((l, k) => k >= from && re.test(l.text));
        return i >= 0 ? i + 1 : 0;
      }, ms, what);
      return found - 1;
    },
    since: (from) => lines.slice(from).map((l) => l.text),
  };
}

const RELOAD_RE = /configuration (\S+) (reloaded|refused) \(/;
const CHANGES_RE = /reloaded \([^)]*\): (\d+) change\(s\) for new calls \(([\d.]+) ms\):$/;

/**
 * Wait for the next `reloaded`/`refused` line at or after `from`; return it with the lines logged
 * under it (the changes, or the problems): {line, index, at, changes: string[], problems: string[]}.
 */
async function nextReload(log, from, ms = 5000) {
  const index = await log.find(RELOAD_RE, from, ms, 'a "reloaded" or "refused" log line');
  const line = log.lines[index].text;
  let count = 0;
  const changes = CHANGES_RE.exec(line);
  if (changes) count = Number(changes[1]);
  const refused = /refused \([^)]*\): (\d+) problem\(s\)/.exec(line);
  if (refused) count = Number(refused[1]);
  // The lines under it are logged right after it: wait for all of them.
  await waitFor(() => log.lines.length >= index + 1 + count, 2000, `the ${count} lines under "${line}"`);
  const under = log.lines.slice(index + 1, index + 1 + count).map((l) => {
    const m = /ctxguard: {3}(.*)$/.exec(l.text);
    assert.ok(m, `not an indented change or problem line: ${l.text}`);
    return m[1];
  });
  return { line, index, at: log.lines[index].at, changes: changes ? under : [], problems: refused ? under : [] };
}

/** Replace `file`'s content and wait for ctxguard to reload it; returns nextReload's answer and the latency in ms. */
async function rewriteAndWait(log, file, text, { atomic = false } = {}) {
  const from = log.mark();
  const t0 = performance.now();
  if (atomic) {
    // How editors save: a new file renamed over the old one (a new inode).
    const temp = `${file}.tmp-${process.pid}`;
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, file);
  } else {
    fs.writeFileSync(file, text);
  }
  const reload = await nextReload(log, from);
  return { ...reload, latency: reload.at - t0 };
}

/** notifications/tools/list_changed messages the session received from wire index `from` on. */
const listChangedSince = (session, from) => session.wire.slice(from).filter((m) => m.dir === 'in' && m.msg.method === 'notifications/tools/list_changed').length;

/** INFO records of rewritten (`call`) or observed (`observe`) results: [{kind, tool, before, after, line}]. */
function callRecords(text) {
  const out = [];
  for (const m of text.matchAll(/ctxguard: (call|observe) tool=(\S+) tokens=(\d+)->(\d+) .*$/gm)) {
    out.push({ kind: m[1], tool: m[2], before: Number(m[3]), after: Number(m[4]), line: m[0] });
  }
  return out;
}

/**
 * The records in `stderrText()` once at least `n` of them pass `pred` (a record is written to
 * stderr around the time its answer goes to stdout: the two pipes are not ordered).
 */
async function recordsOf(stderrText, pred, n) {
  return waitFor(() => {
    const found = callRecords(stderrText()).filter(pred);
    return found.length >= n ? found : null;
  }, 5000, `${n} matching call/observe log lines`);
}

/** The process environment without any CTXGUARD_* variable (the developer's must not leak in), plus `extra`. */
function cleanEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CTXGUARD_')));
  return { ...env, ...extra };
}

/**
 * `ctxguard --check-config FILE ...` output parsed: {header, values: {key: {value, source}}, order,
 * tools: [lines after `tools:`], toolsLine}. Fails on any line that is not part of that grammar.
 */
function parseEffective(stdout) {
  const lines = stdout.split('\n');
  assert.equal(lines.pop(), '', 'the output ends with a newline');
  const header = lines.shift();
  assert.match(header, /^# ctxguard effective configuration \(file .+\)$/);
  const values = {};
  const order = [];
  let i = 0;
  for (; i < lines.length && !lines[i].startsWith('clients:'); i++) {
    const m = /^([A-Za-z]+): (\S+) +# (.+)$/.exec(lines[i]);
    assert.ok(m, `not a "key: value  # source" line: ${JSON.stringify(lines[i])}`);
    assert.ok(SOURCES.includes(m[3]), `unknown source in ${JSON.stringify(lines[i])}`);
    values[m[1]] = { value: m[2], source: m[3] };
    order.push(m[1]);
  }
  // The client rules (`clients: []`, or the rules under `clients:`), then the built-in presets
  // as comments.
  assert.ok(i < lines.length, 'a clients: line');
  const clients = [];
  for (i++; i < lines.length && !lines[i].startsWith('tools:'); i++) {
    assert.match(lines[i], /^(  - match: ".*"|    [A-Za-z]+: \S+|#.*)$/, `a clients line: ${JSON.stringify(lines[i])}`);
    clients.push(lines[i]);
  }
  assert.ok(clients.some((l) => l.includes('"Visual Studio Code*" (VS Code): maxChars: 8000')), 'the presets');
  assert.ok(i < lines.length, 'a tools: line');
  const toolsLine = lines[i];
  const tools = lines.slice(i + 1);
  if (toolsLine === 'tools: []') assert.deepEqual(tools, []);
  else assert.match(toolsLine, /^tools:( +#.*)?$/);
  for (const l of tools) assert.match(l, /^( {2}- match: "[^"]*"| {4}[A-Za-z]+: .+)$/, 'a rule line');
  return { header, values, order, toolsLine, tools };
}

const summary = (effective) => Object.fromEntries(Object.entries(effective.values).map(([k, v]) => [k, `${v.value} # ${v.source}`]));

before(() => {
  if (!SKIP) makeData();
});

after(async () => {
  await closeAllSessions();
  killAllRaw();
  removeDir(tmp);
});

// ---------------------------------------------------------------- 1. hot reload by polling

describe('hot reload: an edited file applies to the next call', { skip: SKIP, timeout: 60_000 }, () => {
  let file;
  let direct;
  let proxied;
  let log;
  let directItems; // the direct read_text_file answer of items.json
  let cursorBefore; // nextCursor of a first answer under tokenBudget 1000, before any reload

  before(async () => {
    file = path.join(tmp, 'reload.yaml');
    fs.writeFileSync(file, 'tokenBudget: 1000\n');
    [direct, proxied] = await Promise.all([connectDirect(fsCmd()), connectProxied(fsCmd(), ['--config', file])]);
    log = watchLog(proxied.transport.stderr);
    await Promise.all([direct.client.listTools(), proxied.client.listTools()]);
    directItems = await call(direct, 'read_text_file', { path: P.items });
    assert.deepEqual(JSON.parse(textOf(directItems)), D.items);
    await waitFor(() => /watching .*reload\.yaml for changes/.test(proxied.stderrText()), 5000, 'the "watching" line');
  });

  after(async () => {
    await closeAllSessions();
  });

  test('the starting file applies: under tokenBudget 1000 the 300 items come as a short first page', T, async () => {
    const { items, meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    assert.equal(meta.tokenBudget, 1000);
    assert.ok(meta.estimatedTokens <= 1000, `estimatedTokens ${meta.estimatedTokens}`);
    assert.equal(meta.totalCount, 300);
    assert.ok(meta.pageSize >= 1 && meta.pageSize < 50, `the budget, not the page size (50), limits the page: ${meta.pageSize}`);
    assert.deepEqual(items, D.items.slice(0, meta.pageSize));
    cursorBefore = meta.nextCursor;
    const rec = await recordsOf(proxied.stderrText, (r) => r.tool === 'read_text_file', 1);
    assert.equal(rec.length, 1);
    assert.equal(rec[0].kind, 'call');
    assert.ok(rec[0].after < rec[0].before && rec[0].after <= 1000, rec[0].line);
  });

  test('raising tokenBudget in the file: reloaded within a second, the next call passes untouched (deep-equal to direct)', T, async (t) => {
    const wireFrom = proxied.wire.length;
    const r = await rewriteAndWait(log, file, 'tokenBudget: 50000\n');
    t.diagnostic(`reload latency (write -> "reloaded" line): ${r.latency.toFixed(1)} ms; ${r.line}`);
    latencies.push(['poll, budget raised', r.latency]);
    assert.match(r.line, /configuration .*reload\.yaml reloaded \(the file changed\): \d+ change\(s\) for new calls/);
    assert.ok(r.latency < 1000, `reloaded ${r.latency.toFixed(0)} ms after the write`);
    assert.ok(r.changes.includes('tokenBudget: 1000 -> 50000'), `changes: ${JSON.stringify(r.changes)}`);
    // What followed from the budget: the hard cap (3x, derived) and the chunk size (no longer half the budget).
    assert.ok(r.changes.includes('hardCap: 12000 -> 150000'), `changes: ${JSON.stringify(r.changes)}`);
    assert.ok(r.changes.includes('chunkSize: 500 -> 2000'), `changes: ${JSON.stringify(r.changes)}`);

    const after = await call(proxied, 'read_text_file', { path: P.items });
    assert.deepEqual(after, directItems, 'under a 50000-token budget the 20,000-token answer passes as the server sent it');
    assert.equal(metaOf(after), null);
    assert.equal(listChangedSince(proxied, wireFrom), 0, 'a budget change does not change tools/list');
  });

  test('a cursor issued before the reload still pages after it', T, async () => {
    const { items, meta } = pageOf(await fetchCursor(proxied, { cursor: cursorBefore, limit: 20 }));
    assert.equal(meta.totalCount, 300);
    assert.ok(meta.offset > 0 && meta.offset < 50, `offset ${meta.offset}`);
    assert.equal(items.length, 20);
    assert.deepEqual(items, D.items.slice(meta.offset, meta.offset + 20));
  });

  test('lowering it again (an editor-style save: new file renamed over the old one): reloaded within a second, the next call is rewritten', T, async (t) => {
    const r = await rewriteAndWait(log, file, 'tokenBudget: 1200\n', { atomic: true });
    t.diagnostic(`reload latency (rename -> "reloaded" line): ${r.latency.toFixed(1)} ms; ${r.line}`);
    latencies.push(['poll, budget lowered (rename)', r.latency]);
    assert.ok(r.latency < 1000, `reloaded ${r.latency.toFixed(0)} ms after the write`);
    assert.ok(r.changes.includes('tokenBudget: 50000 -> 1200'), `changes: ${JSON.stringify(r.changes)}`);

    const result = await call(proxied, 'read_text_file', { path: P.items });
    const { items, meta } = pageOf(result);
    assert.equal(meta.tokenBudget, 1200);
    assert.ok(meta.estimatedTokens <= 1200, `estimatedTokens ${meta.estimatedTokens}`);
    assert.deepEqual(items, D.items.slice(0, meta.pageSize));
    // Both cursors work: the one from before both reloads, and the new one.
    const old = pageOf(await fetchCursor(proxied, { cursor: cursorBefore, limit: 5 }));
    assert.deepEqual(old.items, D.items.slice(old.meta.offset, old.meta.offset + 5));
    const fresh = pageOf(await fetchCursor(proxied, { cursor: meta.nextCursor, limit: 5 }));
    assert.equal(fresh.meta.offset, meta.pageSize);
    assert.deepEqual(fresh.items, D.items.slice(meta.pageSize, meta.pageSize + 5));
    const rec = await recordsOf(proxied.stderrText, (x) => x.tool === 'read_text_file', 2);
    assert.deepEqual(rec.map((x) => x.kind), ['call', 'call'], 'logged: the first call and this one, not the untouched one');
  });

  test('a file that changes nothing effective: "reloaded, nothing changed"; a cursorTtl change waits for the next start', T, async () => {
    let from = log.mark();
    fs.writeFileSync(file, '# the same settings, written differently\ntokenBudget: 1200\ntools: []\n');
    let idx = await log.find(/reloaded/, from);
    assert.match(log.lines[idx].text, /reload\.yaml reloaded \(the file changed\): nothing changed/);

    from = log.mark();
    fs.writeFileSync(file, 'tokenBudget: 1200\ncursorTtl: 5\n');
    idx = await log.find(/reloaded/, from);
    assert.match(log.lines[idx].text, /reloaded \([^)]*\): nothing changed/, 'cursorTtl is read at start-up only');
    assert.ok(log.since(from).some((l) => /cursorTtl: 600s -> 5s takes effect at the next start; 600s stays in force/.test(l)),
      `no note about cursorTtl in ${JSON.stringify(log.since(from))}`);
  });

  test('enforce -> observe -> enforce by reload: tools/list_changed each time; observe lists and answers as the server', T, async (t) => {
    let wireFrom = proxied.wire.length;
    const r = await rewriteAndWait(log, file, 'mode: observe\ntokenBudget: 1200\n');
    latencies.push(['poll, mode -> observe', r.latency]);
    t.diagnostic(`reload latency: ${r.latency.toFixed(1)} ms`);
    assert.ok(r.changes.includes('mode: enforce -> observe'), JSON.stringify(r.changes));
    await waitFor(() => listChangedSince(proxied, wireFrom) === 1, 3000, 'notifications/tools/list_changed');
    const [dl, pl] = await Promise.all([direct.client.listTools(), proxied.client.listTools()]);
    assert.deepEqual(pl, dl, 'in observe mode tools/list is the server\'s (outputSchema kept, no ctxguard_fetch)');
    const from = log.mark();
    const observed = await call(proxied, 'read_text_file', { path: P.items });
    assert.deepEqual(observed, directItems);
    await log.find(/observe tool=read_text_file/, from);
    const obs = callRecords(log.since(from).join('\n'));
    assert.equal(obs.length, 1);
    assert.ok(obs[0].after < obs[0].before && obs[0].after <= 1200, obs[0].line);

    wireFrom = proxied.wire.length;
    const back = await rewriteAndWait(log, file, 'mode: enforce\ntokenBudget: 1200\n');
    latencies.push(['poll, mode -> enforce', back.latency]);
    assert.ok(back.changes.includes('mode: observe -> enforce'), JSON.stringify(back.changes));
    await waitFor(() => listChangedSince(proxied, wireFrom) === 1, 3000, 'notifications/tools/list_changed');
    const tools = (await proxied.client.listTools()).tools;
    assert.equal(tools.at(-1).name, FETCH);
    assert.ok(tools.every((x) => x.outputSchema === undefined));
    const { meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    assert.equal(meta.tokenBudget, 1200);
  });

  test('a cursor from enforce mode still pages while the file says observe (ctxguard_fetch is unlisted, not gone)', T, async () => {
    const { meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    await rewriteAndWait(log, file, 'mode: observe\ntokenBudget: 1200\n');
    await proxied.client.listTools();
    const result = await fetchCursor(proxied, { cursor: meta.nextCursor, limit: 3 });
    await rewriteAndWait(log, file, 'mode: enforce\ntokenBudget: 1200\n');
    await proxied.client.listTools();
    // A client (or model) that kept the cursor still gets its page.
    const page = pageOf(result);
    assert.deepEqual(page.items, D.items.slice(meta.pageSize, meta.pageSize + 3));
  });

  test('a smaller cacheSize by reload drops the least recently used results at once', T, async () => {
    const cursors = [];
    for (let i = 0; i < 8; i++) {
      // records.json: 225 KB as the server sends it, each call a cache entry of its own.
      cursors.push(pageOf(await call(proxied, 'read_text_file', { path: P.records })).meta.nextCursor);
    }
    assert.ok(!(await fetchCursor(proxied, { cursor: cursors[0], limit: 1 })).isError, 'cached before the reload');
    // The oldest is now the most recently used: the second one is the least.
    const r = await rewriteAndWait(log, file, 'mode: enforce\ntokenBudget: 1200\ncacheSize: 1M\n');
    assert.deepEqual(r.changes, ['cacheSize: 256M -> 1M']);
    assertOneLineError(await fetchCursor(proxied, { cursor: cursors[1], limit: 1 }), /no longer cached/);
    const last = pageOf(await fetchCursor(proxied, { cursor: cursors.at(-1), limit: 1 }));
    assert.equal(last.items.length, 1);
    assert.deepEqual(last.items[0].id, D.records[last.meta.offset].id);
  });
});

// ---------------------------------------------------------------- 2. refused files

describe('a file that is not valid is refused; the running configuration stays', { skip: SKIP, timeout: 60_000 }, () => {
  const GOOD = 'pageSize: 10\nmaxString: 300\n';
  let file;
  let proxied;
  let log;
  let baseline; // masked answers under GOOD
  const probe = async () => ({
    items: masked(await call(proxied, 'read_text_file', { path: P.items })),
    log: masked(await call(proxied, 'read_text_file', { path: P.log })),
  });

  before(async () => {
    file = path.join(tmp, 'refuse.yaml');
    fs.writeFileSync(file, GOOD);
    proxied = await connectProxied(fsCmd(), ['--config', file]);
    log = watchLog(proxied.transport.stderr);
    await proxied.client.listTools();
    await waitFor(() => /watching /.test(proxied.stderrText()), 5000, 'the "watching" line');
    baseline = await probe();
    // The starting file is in force: pages of 10.
    const { items, meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    assert.equal(meta.pageSize, 10);
    assert.deepEqual(items, D.items.slice(0, 10));
  });

  after(async () => {
    await closeAllSessions();
  });

  const cases = [
    ['a YAML syntax error', 'pageSize: [10\nmaxString: 300\n', [/line \d+, column \d+/]],
    ['an out-of-range value', 'pageSize: 0\nmaxString: 300\n', [/^\S*refuse\.yaml: pageSize: 0 is not allowed: it must be a whole number from 1 to 100000\.$/]],
    ['an unknown key', 'pageSize: 10\nmaxString: 300\npageSise: 20\n', [/^\S*refuse\.yaml: pageSise: unknown setting\./]],
    ['a bad value in a rule', 'pageSize: 10\nmaxString: 300\ntools:\n  - match: read_text_file\n    maxDepth: 99\n', [/^\S*refuse\.yaml: tools\[0\]\.maxDepth: 99 is not allowed/]],
    ['three problems at once', 'pageSize: 0\nmode: shadow\ntools:\n  - match: x\n    cacheSize: 2M\n', [
      /^\S*refuse\.yaml: pageSize: 0 is not allowed/,
      /^\S*refuse\.yaml: mode: shadow is not allowed: it must be enforce or observe\.$/,
      /^\S*refuse\.yaml: tools\[0\]\.cacheSize: applies to the whole process/,
    ]],
    ['a conflict between two valid values', 'pageSize: 10\nmaxString: 300\nmaxPageSize: 5\n', [/pageSize: 10 is above maxPageSize 5/]],
  ];
  for (const [what, text, expected] of cases) {
    test(`${what}: "refused" with the problem's key path, then calls as before`, T, async () => {
      const r = await rewriteAndWait(log, file, text);
      assert.match(r.line, new RegExp(`configuration .*refuse\\.yaml refused \\(the file changed\\): ${expected.length} problem\\(s\\); the running configuration stays`));
      assert.equal(r.problems.length, expected.length, JSON.stringify(r.problems));
      expected.forEach((re, i) => assert.match(r.problems[i], re));
      assert.deepEqual(await probe(), baseline, 'the calls after a refused file behave as before');
    });
  }

  test('the file deleted: a warning, the running configuration stays; created again: read again', T, async () => {
    let from = log.mark();
    fs.rmSync(file);
    await log.find(/the configuration file .*refuse\.yaml is gone; the running configuration stays/, from);
    assert.deepEqual(await probe(), baseline);
    from = log.mark();
    fs.writeFileSync(file, 'pageSize: 12\nmaxString: 300\n');
    const r = await nextReload(log, from);
    assert.deepEqual(r.changes, ['pageSize: 10 -> 12']);
    const { items, meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    assert.equal(meta.pageSize, 12);
    assert.deepEqual(items, D.items.slice(0, 12));
  });
});

// ---------------------------------------------------------------- 3. SIGHUP

describe('SIGHUP reloads the file at once', { skip: SKIP, timeout: 60_000 }, () => {
  let file;
  let proxied;
  let log;

  before(async () => {
    file = path.join(tmp, 'sighup.yaml');
    fs.writeFileSync(file, 'pageSize: 10\n');
    proxied = await connectProxied(fsCmd(), ['--config', file]);
    log = watchLog(proxied.transport.stderr);
    await proxied.client.listTools();
    await waitFor(() => /watching /.test(proxied.stderrText()), 5000, 'the "watching" line');
  });

  after(async () => {
    await closeAllSessions();
  });

  test('SIGHUP with the file unchanged: "reloaded, nothing changed"', T, async () => {
    const from = log.mark();
    process.kill(proxied.pid, 'SIGHUP');
    const r = await nextReload(log, from);
    assert.match(r.line, /configuration .*sighup\.yaml reloaded \(received SIGHUP\): nothing changed/);
    assert.ok(pidAlive(proxied.pid));
  });

  test('an edit and SIGHUP right after it: reloaded by the signal, well inside one poll interval; the next call follows', T, async (t) => {
    const from = log.mark();
    const t0 = performance.now();
    fs.writeFileSync(file, 'pageSize: 20\n');
    process.kill(proxied.pid, 'SIGHUP');
    const r = await nextReload(log, from);
    const latency = r.at - t0;
    latencies.push(['SIGHUP', latency]);
    t.diagnostic(`SIGHUP latency (write + kill -> "reloaded" line): ${latency.toFixed(1)} ms`);
    // A poll needs the file unchanged for one interval (200 ms) before it reads it: this reload is the signal's.
    assert.match(r.line, /configuration .*sighup\.yaml reloaded \(received SIGHUP\): 1 change\(s\) for new calls/);
    assert.deepEqual(r.changes, ['pageSize: 10 -> 20']);
    assert.ok(latency < 190, `the SIGHUP reload took ${latency.toFixed(0)} ms`);
    const { items, meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    assert.equal(meta.pageSize, 20);
    assert.deepEqual(items, D.items.slice(0, 20));
  });

  test('SIGHUP with a broken file: refused at once, the calls keep the running configuration', T, async () => {
    const from = log.mark();
    fs.writeFileSync(file, 'pageSize: twenty\n');
    process.kill(proxied.pid, 'SIGHUP');
    const r = await nextReload(log, from);
    assert.match(r.line, /configuration .*sighup\.yaml refused \(received SIGHUP\): 1 problem\(s\)/);
    assert.match(r.problems[0], /pageSize: twenty is not allowed/);
    const { meta } = pageOf(await call(proxied, 'read_text_file', { path: P.items }));
    assert.equal(meta.pageSize, 20);
  });

  test('SIGHUP without a configuration file: logged, ignored, the session goes on', T, async () => {
    const s = await connectProxied(fsCmd(), []);
    process.kill(s.pid, 'SIGHUP');
    await waitFor(() => /received SIGHUP; there is no configuration file to reload/.test(s.stderrText()), 5000, 'the SIGHUP line');
    const { meta } = pageOf(await call(s, 'read_text_file', { path: P.items }));
    assert.equal(meta.tokenBudget, 4000);
    assert.ok(pidAlive(s.pid));
    await s.close();
  });
});

// ---------------------------------------------------------------- 4. observe mode

describe('observe mode: every answer as the server sent it, what enforce would do in the log', { skip: SKIP, timeout: 60_000 }, () => {
  let file;
  let direct;
  const sessions = {}; // 'file' (mode: observe in the file), 'flag' (--mode observe)

  // The calls compared: large JSON (paginated under enforce), large text (chunked), long strings
  // (summarized), a 78,000-token answer (projected), small ones.
  const CALLS = [
    ['read_text_file', () => ({ path: P.items })],
    ['directory_tree', () => ({ path: P.many })],
    ['list_directory', () => ({ path: P.many })],
    ['read_text_file', () => ({ path: P.doc })],
    ['read_file', () => ({ path: P.records })],
    ['read_text_file', () => ({ path: P.log })],
    ['list_allowed_directories', () => ({})],
    ['read_text_file', () => ({ path: P.items, head: 3 })],
  ];
  const LARGE = 6; // the first six are over the budget

  before(async () => {
    file = path.join(tmp, 'observe.yaml');
    fs.writeFileSync(file, 'mode: observe\ntokenBudget: 2000\n');
    let fileSession;
    let flagSession;
    [direct, fileSession, flagSession] = await Promise.all([
      connectDirect(fsCmd()),
      connectProxied(fsCmd(), ['--config', file]),
      connectProxied(fsCmd(), ['--mode', 'observe']),
    ]);
    sessions.file = fileSession;
    sessions.flag = flagSession;
  });

  after(async () => {
    await closeAllSessions();
  });

  for (const which of ['file', 'flag']) {
    test(`${which === 'file' ? 'mode: observe in the file' : '--mode observe'}: initialize, tools/list and every call deep-equal to direct; "observe" log lines, no "call" line`, T, async () => {
      const s = sessions[which];
      assert.deepEqual(s.client.getServerVersion(), direct.client.getServerVersion());
      assert.deepEqual(s.client.getServerCapabilities(), direct.client.getServerCapabilities());
      assert.equal(s.client.getInstructions(), direct.client.getInstructions());
      const [dl, pl] = await Promise.all([direct.client.listTools(), s.client.listTools()]);
      assert.ok(dl.tools.some((x) => x.outputSchema), 'server-filesystem has outputSchemas (or this proves nothing)');
      assert.deepEqual(pl, dl);
      assert.ok(!pl.tools.some((x) => x.name === FETCH));
      for (const [name, args] of CALLS) {
        const [d, p] = await Promise.all([call(direct, name, args()), call(s, name, args())]);
        assert.ok(!d.isError, `${name}: ${JSON.stringify(d).slice(0, 200)}`);
        assert.deepEqual(p, d, `${name} ${JSON.stringify(args())}`);
      }
      const records = await recordsOf(s.stderrText, () => true, LARGE);
      assert.deepEqual(records.filter((r) => r.kind === 'call'), [], 'observe mode rewrites nothing');
      assert.deepEqual(records.map((r) => r.tool), CALLS.slice(0, LARGE).map(([n]) => n), 'one "observe" line per call over the budget, none for small ones');
      const budget = which === 'file' ? 2000 : 4000;
      for (const r of records) {
        assert.ok(r.after < r.before, r.line);
        assert.ok(r.after <= budget * 3, `would have sent ${r.after} tokens: ${r.line}`);
        assert.match(r.line, / bytes=\d+->\d+ .*stages=\S+/);
      }
    });
  }

  test('an "observe" line names the bytes enforce would have sent', T, () => {
    const records = callRecords(sessions.flag.stderrText());
    assert.ok(records.length > 0);
    for (const r of records) {
      const m = / bytes=(\d+)->(\d+) /.exec(r.line);
      assert.ok(Number(m[2]) > 0 && Number(m[2]) < Number(m[1]), r.line);
    }
  });

  test('--mode observe on raw pipes: ctxguard\'s stdout is byte for byte the server\'s', T, async () => {
    const requests = [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
      ...CALLS.map(([name, args], i) => ({ jsonrpc: '2.0', id: 3 + i, method: 'tools/call', params: { name, arguments: args() } })),
    ];
    const cmd = fsCmd();
    const server = spawn(cmd.command, cmd.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const serverOut = [];
    server.stdout.on('data', (c) => serverOut.push(c));
    server.stderr.resume();
    const proxy = rawProxy(cmd, ['--mode', 'observe']);
    try {
      const replies = (chunks) => Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l.length > 0).length;
      for (const [k, msg] of requests.entries()) {
        server.stdin.write(`${JSON.stringify(msg)}\n`);
        await proxy.send(`${JSON.stringify(msg)}\n`);
        if (msg.id === undefined) continue;
        const answered = requests.slice(0, k + 1).filter((m) => m.id !== undefined).length;
        await waitFor(() => replies(serverOut) >= answered && proxy.lines().length >= answered, 10_000, `the answers to request ${msg.id}`);
      }
      const expected = Buffer.concat(serverOut);
      assert.ok(expected.length > 200_000, `the server wrote ${expected.length} bytes`);
      assert.ok(proxy.stdoutBuffer().equals(expected), 'ctxguard --mode observe wrote other bytes than the server');
      assert.equal((await recordsOf(proxy.stderrText, (r) => r.kind === 'observe', LARGE)).length, LARGE);
    } finally {
      server.kill('SIGKILL');
      proxy.kill();
    }
  });

  test('server-everything: instructions and tools/list (with its outputSchema) untouched under mode: observe', T, async () => {
    const cmd = serverCommand('everything');
    const [d, p] = await Promise.all([connectDirect(cmd), connectProxied(cmd, ['--config', file])]);
    const instructions = d.client.getInstructions();
    assert.ok(typeof instructions === 'string' && instructions.length > 0, 'server-everything has instructions');
    assert.equal(p.client.getInstructions(), instructions);
    const [dl, pl] = await Promise.all([d.client.listTools(), p.client.listTools()]);
    assert.ok(dl.tools.some((x) => x.name === 'get-structured-content' && x.outputSchema));
    assert.deepEqual(pl, dl);
    for (const [name, args] of [['get-structured-content', { location: 'Chicago' }], ['echo', { message: 'observed' }], ['get-sum', { a: 1, b: 2 }]]) {
      assert.deepEqual(await call(p, name, args), await call(d, name, args), name);
    }
    await Promise.all([d.close(), p.close()]);
  });
});

// ---------------------------------------------------------------- 5. per-tool rules

describe('per-tool rules change only the tools they match', { skip: SKIP, timeout: 60_000 }, () => {
  let direct;
  let paging; // pageSize, search, mode rules
  let switches; // pagination, summarization, chunking, fields rules

  before(async () => {
    const pagingFile = path.join(tmp, 'rules-paging.yaml');
    fs.writeFileSync(pagingFile, [
      'tools:',
      '  - match: read_file', // pageSize and search for read_file only; read_text_file reads the same files
      '    pageSize: 5',
      '    search: false',
      '  - match: "dir*_tree"', // a glob
      '    mode: observe',
      '',
    ].join('\n'));
    const switchesFile = path.join(tmp, 'rules-switches.yaml');
    fs.writeFileSync(switchesFile, [
      'tools:',
      '  - match: directory_tree',
      '    pagination: false',
      '  - match: read_file',
      '    summarization: false',
      '    chunking: false',
      '  - match: read_text_file',
      '    tokenBudget: 1500',
      '    fields: [id, status, owner.name]',
      '  - match: "read_*"', // never reached for read_file / read_text_file: the first match wins
      '    pageSize: 1',
      '    tokenBudget: 100000',
      '',
    ].join('\n'));
    [direct, paging, switches] = await Promise.all([
      connectDirect(fsCmd()),
      connectProxied(fsCmd(), ['--config', pagingFile]),
      connectProxied(fsCmd(), ['--config', switchesFile]),
    ]);
    await Promise.all([direct.client.listTools(), paging.client.listTools(), switches.client.listTools()]);
  });

  after(async () => {
    await closeAllSessions();
  });

  test('pageSize 5 for read_file: pages of 5 (first answer and fetches); read_text_file on the same file keeps pages of 50', T, async () => {
    const a = pageOf(await call(paging, 'read_file', { path: P.items }));
    assert.equal(a.meta.pageSize, 5);
    assert.deepEqual(a.items, D.items.slice(0, 5));
    const a2 = pageOf(await fetchCursor(paging, { cursor: a.meta.nextCursor }));
    assert.equal(a2.meta.offset, 5);
    assert.deepEqual(a2.items, D.items.slice(5, 10), 'a fetch without limit uses the rule\'s page size');
    const b = pageOf(await call(paging, 'read_text_file', { path: P.items }));
    assert.equal(b.meta.pageSize, 50);
    assert.deepEqual(b.items, D.items.slice(0, 50));
    const b2 = pageOf(await fetchCursor(paging, { cursor: b.meta.nextCursor }));
    assert.deepEqual(b2.items, D.items.slice(50, 100));
    const recs = await recordsOf(paging.stderrText, (r) => r.kind === 'call', 4);
    assert.ok(recs.some((r) => r.tool === 'read_file' && / items=5\/300 /.test(r.line)), JSON.stringify(recs));
    assert.ok(recs.some((r) => r.tool === 'read_text_file' && / items=50\/300 /.test(r.line)), JSON.stringify(recs));
  });

  test('search: false for read_file: a query on its cursor is an isError saying so; a query on read_text_file\'s cursor searches', T, async () => {
    const a = pageOf(await call(paging, 'read_file', { path: P.items }));
    assertOneLineError(await fetchCursor(paging, { cursor: a.meta.nextCursor, query: 'closed' }), /[Ss]earch is turned off.*read_file/);
    // Paging the same cursor still works.
    assert.deepEqual(pageOf(await fetchCursor(paging, { cursor: a.meta.nextCursor, limit: 2 })).items, D.items.slice(5, 7));
    const b = pageOf(await call(paging, 'read_text_file', { path: P.items }));
    const found = await fetchCursor(paging, { cursor: b.meta.nextCursor, query: 'closed', limit: 20 });
    assert.ok(!found.isError, JSON.stringify(found).slice(0, 300));
    const hits = JSON.parse(textOf(found)).items;
    const expected = D.items.filter((x) => x.status === 'closed');
    assert.ok(hits.length > 0 && hits.length <= 20, `${hits.length} matches shown`);
    assert.deepEqual(hits, expected.slice(0, hits.length), 'the matches are the items whose status is "closed", in order');
  });

  test('mode: observe for "dir*_tree": directory_tree passes as the server sent it (outputSchema listed), other tools are still rewritten', T, async () => {
    const [dl, pl] = await Promise.all([direct.client.listTools(), paging.client.listTools()]);
    const byName = (list, n) => list.tools.find((x) => x.name === n);
    assert.ok(byName(dl, 'directory_tree').outputSchema);
    assert.deepEqual(byName(pl, 'directory_tree'), byName(dl, 'directory_tree'), 'an observed tool keeps its outputSchema');
    assert.equal(byName(pl, 'read_text_file').outputSchema, undefined);
    assert.equal(pl.tools.at(-1).name, FETCH, 'ctxguard_fetch is listed: other tools are enforced');
    assert.match(paging.client.getInstructions() ?? '', new RegExp(FETCH));

    const args = { path: P.many };
    const [d, p] = await Promise.all([call(direct, 'directory_tree', args), call(paging, 'directory_tree', args)]);
    assert.equal(JSON.parse(textOf(d)).length, 300);
    assert.deepEqual(p, d);
    const other = pageOf(await call(paging, 'read_text_file', { path: P.items }));
    assert.equal(other.meta.pageSize, 50);
    const tree = await recordsOf(paging.stderrText, (r) => r.tool === 'directory_tree', 1);
    assert.deepEqual(tree.map((r) => r.kind), ['observe']);
    const texts = await recordsOf(paging.stderrText, (r) => r.tool === 'read_text_file', 1);
    assert.ok(texts.every((r) => r.kind === 'call'), JSON.stringify(texts));
  });

  test('pagination: false for directory_tree: all 300 entries in one answer, no cursor; read_text_file\'s 300 items are still paginated', T, async () => {
    const result = await call(switches, 'directory_tree', { path: P.many });
    const direct300 = JSON.parse(textOf(await call(direct, 'directory_tree', { path: P.many })));
    assert.equal(metaOf(result), null, `no _ctxguard: ${textOf(result).slice(-300)}`);
    assert.deepEqual(JSON.parse(textOf(result)), direct300, 'the whole array (compacted, nothing cut)');
    const [rec] = await recordsOf(switches.stderrText, (r) => r.tool === 'directory_tree', 1);
    assert.ok(rec && !/paginate/.test(rec.line), rec?.line);
    const other = pageOf(await call(switches, 'read_text_file', { path: P.items }));
    assert.ok(other.meta.pageSize < 300 && other.meta.hasMore);
    assert.deepEqual(other.items, D.items.slice(0, other.meta.pageSize));
  });

  test('summarization: false for read_file: its long strings stay whole; read_text_file cuts them', T, async () => {
    const whole = await call(switches, 'read_file', { path: P.doc });
    assert.deepEqual(JSON.parse(textOf(whole)), D.doc, 'every section text in full');
    assert.equal(metaOf(whole), null);
    const cut = await call(switches, 'read_text_file', { path: P.doc });
    const json = JSON.parse(textOf(cut));
    assert.equal(json._ctxguard.stringsCut, 6);
    for (const [i, s] of json.sections.entries()) {
      assert.match(s.text, new RegExp(`…\\[\\+\\d+ chars: /sections/${i}/text\\]$`));
      assert.ok(D.doc.sections[i].text.startsWith(s.text.slice(0, 100)));
    }
  });

  test('chunking: false for read_file: a 400-line log is cut at the hard cap, not chunked; read_text_file chunks it', T, async () => {
    const a = metaOf(await call(switches, 'read_file', { path: P.log }));
    assert.ok(a, 'the log is over the hard cap: cut');
    assert.equal(a.chunkIndex, undefined, `no chunk: ${JSON.stringify(a)}`);
    assert.ok(a.returnedBytes > 0 && a.returnedBytes < a.totalBytes, JSON.stringify(a));
    assert.ok(a.estimatedTokens > 4000, `a hard-cap cut, not a chunk: ${a.estimatedTokens} tokens`);
    const b = metaOf(await call(switches, 'read_text_file', { path: P.log }));
    assert.equal(b.chunkIndex, 0);
    assert.ok(b.totalChunks > 1);
    const recs = await recordsOf(switches.stderrText, (r) => r.tool === 'read_file', 1);
    assert.match(recs.at(-1).line, /stages=(compact,)?hard-cap /);
  });

  test('fields: [id, status, owner.name] for read_text_file: projected records keep exactly those; without the rule, others are chosen', T, async () => {
    const { items, meta } = pageOf(await call(switches, 'read_text_file', { path: P.records }));
    assert.equal(meta.tokenBudget, 1500, 'the rule\'s budget (the first match wins over "read_*")');
    assert.deepEqual(meta.projections?.[0]?.projectedFields, ['id', 'status', 'owner.name'], JSON.stringify(meta.projections));
    assert.deepEqual(items, D.records.slice(0, items.length).map((r) => ({ id: r.id, status: r.status, owner: { name: r.owner.name } })));
    // The same file through read_file (its rule sets no fields, and no summarization): no projection.
    const other = pageOf(await call(switches, 'read_file', { path: P.records }));
    assert.equal(other.meta.projections, undefined);
    assert.deepEqual(other.items, D.records.slice(0, other.items.length));
    assert.equal(other.meta.tokenBudget, 4000, 'read_file\'s rule does not set tokenBudget: the global one');
  });
});

// ---------------------------------------------------------------- 6. precedence

describe('precedence: defaults < file < variables < flags (rules above all)', { skip: SKIP, timeout: 60_000 }, () => {
  let file;
  const FILE = [
    'tokenBudget: 1500',
    'pageSize: 12',
    'maxPageSize: 150',
    'maxString: 300',
    'tools:',
    '  - match: read_file',
    '    pageSize: 5',
    '',
  ].join('\n');
  const ENV = { CTXGUARD_TOKEN_BUDGET: '3000', CTXGUARD_PAGE_SIZE: '20' };
  const FLAGS = ['--page-size', '30'];

  before(() => {
    file = path.join(tmp, 'precedence.yaml');
    fs.writeFileSync(file, FILE);
  });

  after(async () => {
    await closeAllSessions();
  });

  const check = async (args, env) => {
    const r = await runCtxguard(['--check-config', file, ...args], { env: cleanEnv(env) });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    return summary(parseEffective(r.stdout));
  };

  test('--check-config names the winner of each key and its source', T, async () => {
    const all = await check(FLAGS, ENV);
    assert.equal(all.pageSize, '30 # command line');
    assert.equal(all.tokenBudget, '3000 # environment');
    assert.equal(all.maxPageSize, '150 # file');
    assert.equal(all.maxString, '300 # file');
    assert.equal(all.chunkSize, '1500 # derived', 'half the budget (3000) when the budget is below 4000');
    assert.equal(all.hardCap, '12000 # default');
    assert.equal(all.mode, 'enforce # default');

    const noFlags = await check([], ENV);
    assert.equal(noFlags.pageSize, '20 # environment');
    assert.equal(noFlags.tokenBudget, '3000 # environment');

    const fileOnly = await check([], {});
    assert.equal(fileOnly.pageSize, '12 # file');
    assert.equal(fileOnly.tokenBudget, '1500 # file');
    assert.equal(fileOnly.chunkSize, '750 # derived');

    const flagsOnly = await check(['--token-budget', '20000', '--mode', 'observe', '--search=false'], {});
    assert.equal(flagsOnly.tokenBudget, '20000 # command line');
    assert.equal(flagsOnly.hardCap, '60000 # derived', '3x the budget when only that is raised past 12000');
    assert.equal(flagsOnly.chunkSize, '2000 # default');
    assert.equal(flagsOnly.mode, 'observe # command line');
    assert.equal(flagsOnly.search, 'false # command line');
    assert.equal(flagsOnly.pageSize, '12 # file');
  });

  test('a session started with the same three sources (file by CTXGUARD_CONFIG) behaves by the winners; a rule beats the flag', T, async () => {
    const s = await connectProxied(fsCmd({ CTXGUARD_CONFIG: file, ...ENV }), FLAGS);
    const log = watchLog(s.transport.stderr);
    await s.client.listTools();
    await waitFor(() => /watching .*precedence\.yaml for changes/.test(s.stderrText()), 5000, 'the "watching" line (CTXGUARD_CONFIG)');
    const a = pageOf(await call(s, 'read_text_file', { path: P.items }));
    assert.equal(a.meta.tokenBudget, 3000, 'the variable');
    assert.equal(a.meta.pageSize, 30, 'the flag');
    assert.deepEqual(a.items, D.items.slice(0, 30));
    assertOneLineError(await fetchCursor(s, { cursor: a.meta.nextCursor, limit: 151 }), /from 1 to 150/);
    const r = pageOf(await call(s, 'read_file', { path: P.items }));
    assert.equal(r.meta.pageSize, 5, 'a rule overrides the global value whatever its source');
    assert.equal(r.meta.tokenBudget, 3000);

    // A reload that changes keys the variable and the flag override changes only what the file decides.
    const wireFrom = s.wire.length;
    const re = await rewriteAndWait(log, file, FILE.replace('tokenBudget: 1500', 'tokenBudget: 1200')
      .replace('pageSize: 12', 'pageSize: 8').replace('maxPageSize: 150', 'maxPageSize: 100'));
    latencies.push(['poll, precedence session', re.latency]);
    assert.deepEqual(re.changes, ['maxPageSize: 150 -> 100']);
    // ctxguard_fetch's `limit` maximum is in tools/list: the client is told.
    await waitFor(() => listChangedSince(s, wireFrom) === 1, 3000, 'notifications/tools/list_changed');
    const fetchTool = (await s.client.listTools()).tools.find((x) => x.name === FETCH);
    assert.equal(fetchTool.inputSchema.properties.limit.maximum, 100);
    const b = pageOf(await call(s, 'read_text_file', { path: P.items }));
    assert.equal(b.meta.pageSize, 30);
    assert.equal(b.meta.tokenBudget, 3000);
    assertOneLineError(await fetchCursor(s, { cursor: b.meta.nextCursor, limit: 101 }), /from 1 to 100/);
    await s.close();
  });

  test('--config FILE wins over CTXGUARD_CONFIG; --mode observe wins over the file\'s mode: enforce', T, async () => {
    const other = path.join(tmp, 'precedence-other.yaml');
    fs.writeFileSync(other, 'mode: enforce\npageSize: 7\n');
    const s = await connectProxied(fsCmd({ CTXGUARD_CONFIG: file }), ['--config', other]);
    assert.equal(pageOf(await call(s, 'read_text_file', { path: P.items })).meta.pageSize, 7);
    await s.close();
    const o = await connectProxied(fsCmd(), ['--config', other, '--mode', 'observe']);
    const d = await connectDirect(fsCmd());
    assert.deepEqual(await call(o, 'read_text_file', { path: P.items }), await call(d, 'read_text_file', { path: P.items }));
    assert.match(o.stderrText(), /observe tool=read_text_file/);
    await Promise.all([o.close(), d.close()]);
  });

  test('a flag checked against the file\'s values, not the defaults (maxPageSize 500 in the file, --page-size 300)', T, async () => {
    const wide = path.join(tmp, 'wide.yaml');
    fs.writeFileSync(wide, 'maxPageSize: 500\ntokenBudget: 20000\n');
    const r = await runCtxguard(['--check-config', wide, '--page-size', '300', '--chunk-size', '5000'], { env: cleanEnv() });
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    const v = summary(parseEffective(r.stdout));
    assert.equal(v.pageSize, '300 # command line');
    assert.equal(v.maxPageSize, '500 # file');
    assert.equal(v.chunkSize, '5000 # command line');
  });
});

// ---------------------------------------------------------------- 7. --check-config and start-up

describe('--check-config and start-up with an invalid file', { skip: SKIP, timeout: 60_000 }, () => {
  let dir;
  const write = (name, text) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };

  before(() => {
    dir = path.join(tmp, 'check');
    fs.mkdirSync(dir);
  });

  test('the shipped config/ctxguard.yaml: every key, in order, each "# file", with the default values; exit 0, nothing else', T, async () => {
    const shipped = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'config', 'ctxguard.yaml');
    const r = await runCtxguard(['--check-config', shipped], { env: cleanEnv() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const e = parseEffective(r.stdout);
    assert.deepEqual(e.order, KEYS);
    assert.deepEqual(Object.fromEntries(KEYS.map((k) => [k, e.values[k].value])), DEFAULTS);
    assert.ok(KEYS.every((k) => e.values[k].source === 'file'));
    assert.equal(e.toolsLine, 'tools: []');
  });

  test('an empty file: the defaults, each "# default"', T, async () => {
    const r = await runCtxguard(['--check-config', write('empty.yaml', '')], { env: cleanEnv() });
    assert.equal(r.code, 0, r.stderr);
    const e = parseEffective(r.stdout);
    assert.deepEqual(summary(e), Object.fromEntries(KEYS.map((k) => [k, `${DEFAULTS[k]} # default`])));
  });

  test('rules are printed in order, and the output is itself a valid file with the same effective values', T, async () => {
    const first = write('rules.yaml', [
      'tokenBudget: 3000',
      'cursorTtl: 90',
      'cacheSize: 64M',
      'tools:',
      '  - match: "read_*"',
      '    pageSize: 5',
      '    fields: [id, guest.name]',
      '  - match: directory_tree',
      '    mode: observe',
      '    search: false',
      '',
    ].join('\n'));
    const r = await runCtxguard(['--check-config', first], { env: cleanEnv() });
    assert.equal(r.code, 0, r.stderr);
    const e = parseEffective(r.stdout);
    assert.equal(e.values.cursorTtl.value, '90s');
    assert.equal(e.values.cacheSize.value, '64M');
    assert.deepEqual(e.tools, [
      '  - match: "read_*"',
      '    pageSize: 5',
      '    fields: ["id", "guest.name"]',
      '  - match: "directory_tree"',
      '    mode: observe',
      '    search: false',
    ]);
    const again = await runCtxguard(['--check-config', write('roundtrip.yaml', r.stdout)], { env: cleanEnv() });
    assert.equal(again.code, 0, again.stderr);
    const e2 = parseEffective(again.stdout);
    assert.deepEqual(Object.fromEntries(KEYS.map((k) => [k, e2.values[k].value])), Object.fromEntries(KEYS.map((k) => [k, e.values[k].value])));
    assert.deepEqual(e2.tools, e.tools);
  });

  test('a file with many problems: every one on stderr with its key path, nothing on stdout, exit 2', T, async () => {
    const bad = write('bad.yaml', [
      'pageSize: 0',
      'tokenBudjet: 5000',
      'mode: shadow',
      'pagination: maybe',
      'cacheSize: 1K',
      'tools:',
      '  - pageSize: 3',
      '  - match: x',
      '    cursorTtl: 5',
      '  - match: y',
      '    fields: id',
      '    maxDepth: 99',
      '',
    ].join('\n'));
    const r = await runCtxguard(['--check-config', bad], { env: cleanEnv() });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, '');
    const expected = [
      /bad\.yaml: pageSize: 0 is not allowed/,
      /bad\.yaml: tokenBudjet: unknown setting/,
      /bad\.yaml: mode: shadow is not allowed/,
      /bad\.yaml: pagination: maybe is not allowed/,
      /bad\.yaml: cacheSize: 1K is not allowed/,
      /bad\.yaml: tools\[0\]: `match` is missing/,
      /bad\.yaml: tools\[1\]\.cursorTtl: applies to the whole process/,
      /bad\.yaml: tools\[2\]\.fields: must be a list/,
      /bad\.yaml: tools\[2\]\.maxDepth: 99 is not allowed/,
    ];
    for (const re of expected) assert.match(r.stderr, re);
    const problems = r.stderr.split('\n').filter((l) => /^ {2}\S/.test(l));
    assert.equal(problems.length, expected.length, r.stderr);
  });

  test('a syntax error and a file that is not a map: exit 2 with the place of the problem', T, async () => {
    const syntax = await runCtxguard(['--check-config', write('syntax.yaml', 'tokenBudget: 1000\npageSize: [10\n')], { env: cleanEnv() });
    assert.equal(syntax.code, 2);
    assert.equal(syntax.stdout, '');
    assert.match(syntax.stderr, /syntax\.yaml: line \d+, column \d+: /);
    const list = await runCtxguard(['--check-config', write('list.yaml', '- a\n- b\n')], { env: cleanEnv() });
    assert.equal(list.code, 2);
    assert.match(list.stderr, /list\.yaml: the file must be a map of settings/);
    const missing = await runCtxguard(['--check-config', path.join(dir, 'no-such.yaml')], { env: cleanEnv() });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no-such\.yaml: cannot read it/);
  });

  test('bad values from a variable and a flag: exit 2 naming the variable and the flag', T, async () => {
    const ok = write('ok.yaml', 'pageSize: 10\n');
    const env = await runCtxguard(['--check-config', ok], { env: cleanEnv({ CTXGUARD_PAGE_SIZE: 'abc' }) });
    assert.equal(env.code, 2);
    assert.match(env.stderr, /CTXGUARD_PAGE_SIZE: abc is not allowed/);
    const flag = await runCtxguard(['--check-config', ok, '--max-depth', '65'], { env: cleanEnv() });
    assert.equal(flag.code, 2);
    assert.match(flag.stderr, /--max-depth: 65 is not allowed/);
  });

  test('every problem at once: conflicts between values, and a file\'s problems next to a variable\'s', T, async () => {
    const conflicts = await runCtxguard(['--check-config', write('conflicts.yaml', 'tokenBudget: 1000\nhardCap: 500\npageSize: 300\nmaxPageSize: 100\nmaxString: 3\n')], { env: cleanEnv() });
    assert.equal(conflicts.code, 2);
    assert.match(conflicts.stderr, /pageSize: 300 is above maxPageSize 100/);
    assert.match(conflicts.stderr, /hardCap: 500 is below tokenBudget 1000/);
    assert.match(conflicts.stderr, /maxString: 3 is too short/);
    const mixed = await runCtxguard(['--check-config', write('mixed.yaml', 'pageSize: 0\n')], { env: cleanEnv({ CTXGUARD_TOKEN_BUDGET: '5' }) });
    assert.equal(mixed.code, 2);
    assert.match(mixed.stderr, /CTXGUARD_TOKEN_BUDGET: 5 is not allowed/);
    assert.match(mixed.stderr, /mixed\.yaml: pageSize: 0 is not allowed/);
  });

  test('start-up with an invalid file (--config or CTXGUARD_CONFIG): exit 2, the problems on stderr, the server never started', T, async () => {
    const bad = write('startup-bad.yaml', 'pageSize: 0\nfoo: 1\n');
    const marker = path.join(dir, 'server-ran');
    const server = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'ran')`];
    // The marker proves the command works when the configuration is valid.
    const good = await runCtxguard(['--config', write('startup-good.yaml', 'pageSize: 10\n'), '--', ...server], { env: cleanEnv() });
    assert.equal(good.code, 0, good.stderr);
    assert.ok(fs.existsSync(marker));
    fs.rmSync(marker);

    for (const [args, env] of [[['--config', bad], {}], [[], { CTXGUARD_CONFIG: bad }]]) {
      const r = await runCtxguard([...args, '--', ...server], { env: cleanEnv(env) });
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /startup-bad\.yaml: pageSize: 0 is not allowed/);
      assert.match(r.stderr, /startup-bad\.yaml: foo: unknown setting/);
      assert.doesNotMatch(r.stderr, /server started/);
      assert.ok(!fs.existsSync(marker), 'the server command was run');
    }
    const missing = await runCtxguard(['--config', path.join(dir, 'absent.yaml'), '--', ...server], { env: cleanEnv() });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /absent\.yaml: cannot read it/);
    assert.ok(!fs.existsSync(marker));
  });

  test('--check-config needs no server command and starts nothing', T, async () => {
    const r = await runCtxguard(['--check-config', write('plain.yaml', 'tokenBudget: 5000\n')], { env: cleanEnv(), timeoutMs: 5000 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(parseEffective(r.stdout).values.tokenBudget.source, 'file');
  });
});

// ---------------------------------------------------------------- latencies

describe('reload latencies measured above', { skip: SKIP }, () => {
  // A bound that only a reload that never came breaks: the figures are printed, and the speed
  // target lives in scripts/bench.sh (a loaded CI machine once took 1,066 ms, against about 200 ms idle).
  test('every reload was logged within 5 s of the write', (t) => {
    for (const [what, ms] of latencies) t.diagnostic(`${what}: ${ms.toFixed(1)} ms`);
    assert.ok(latencies.length >= 6, `${latencies.length} latencies measured`);
    for (const [what, ms] of latencies) assert.ok(ms < 5000, `${what}: ${ms} ms`);
  });
});
