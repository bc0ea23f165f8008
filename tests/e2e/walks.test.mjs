// Reading a whole result back through ctxguard_fetch, exactly as docs/protocol.md section 7 says
// (`fields: []` with every cursor, markers replaced from `resultCursor`), costs no more tokens
// than the server's direct answer and never one fetch per item of an array; and the same call
// gives the same first answer in every fresh session (docs/protocol.md 2.3, 6).
//
// Fixtures, each called directly and through ctxguard with the real SDK client:
//   - 2,000 bookings from server-postgres (a PostgreSQL started here), each row with a jsonb
//     `notes` holding a one-item `history`: small nested arrays that fit where the row fits;
//   - 4,000 bookings as a 2 MB JSON file, and a deep JSON document (long strings, nesting past
//     depth 10, arrays at several depths), both read by server-filesystem;
//   - a directory tree of 3,600 files (server-filesystem's directory_tree).
// Tokens are ctxguard's own estimates, from its call records (--telemetry-file): the direct
// answer is the first call's `original_tokens`, the walk the sum of `final_tokens` of that call
// and of every fetch.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  closeAllSessions,
  connectDirect,
  connectProxied,
  makeTempDir,
  makeWideTree,
  readJsonLines,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
  within,
} from './lib/harness.mjs';
import { makeBookings, makeNestedDocument } from './lib/corpus.mjs';
import { resolveSummarized, textOf } from './lib/reconstruct.mjs';
import { postgresBinDir, startPostgres } from './lib/postgres.mjs';

const SKIP = skipWithoutCtxguard();
const PG_SKIP = SKIP || (postgresBinDir() || process.env.CI ? false : 'no PostgreSQL server binaries (/usr/lib/postgresql/N/bin)');
const T = { timeout: 240_000 };
const SESSIONS = 10;

const call = (session, name, args = {}) => session.client.callTool({ name, arguments: args });

/** Items of every array in `value`, nested ones too. */
function arrayItems(value) {
  if (Array.isArray(value)) return value.length + value.reduce((n, v) => n + arrayItems(v), 0);
  if (value && typeof value === 'object') return Object.values(value).reduce((n, v) => n + arrayItems(v), 0);
  return 0;
}

/** The answer's JSON with every cursor replaced: what must not differ between sessions. */
function withoutCursors(text) {
  return JSON.stringify(JSON.parse(text), (key, v) => (/cursor$/i.test(key) && typeof v === 'string' ? '<cursor>' : v));
}

/**
 * One walk: a fresh ctxguard session with a telemetry file, the first answer, and the whole
 * result rebuilt from it by following every cursor. Returns the rebuilt value, the first
 * answer, and the figures.
 */
async function walk(cmd, tool, args, tmp, name) {
  const records = path.join(tmp, `${name}.jsonl`);
  const session = await connectProxied(cmd, ['--telemetry-file', records]);
  const first = await call(session, tool, args);
  assert.ok(!first.isError, JSON.stringify(first).slice(0, 300));
  const rebuilt = await resolveSummarized(session.client, first);
  await session.client.close();
  await within(session.exited, 10_000, 'ctxguard exit after the client closed');
  const calls = readJsonLines(records).filter((r) => r.kind !== 'tools_list');
  const direct = calls.find((r) => r.kind === 'call');
  const walked = calls.reduce((sum, r) => sum + r.final_tokens, 0);
  return {
    first,
    value: rebuilt.value,
    fetches: calls.filter((r) => r.kind === 'fetch').length,
    directTokens: direct.original_tokens,
    walkTokens: walked,
    fill: direct.fill_pct,
  };
}

/** Checks a walk against the direct answer: equal, no dearer, never a fetch per item. */
function checkWalk(t, result, directValue, what) {
  assert.deepEqual(result.value, directValue, `${what}: the walk rebuilds the direct answer`);
  const items = arrayItems(directValue);
  const ratio = result.walkTokens / result.directTokens;
  t.diagnostic(`${what}: first answer fill ${result.fill}%; walk ${result.fetches} fetches for ${items} array items, ` +
    `${result.walkTokens} tokens against ${result.directTokens} direct (${ratio.toFixed(2)}x)`);
  assert.ok(result.walkTokens <= result.directTokens, `${what}: the walk costs ${ratio.toFixed(2)}x the direct answer`);
  assert.ok(result.fetches * 4 <= items, `${what}: ${result.fetches} fetches for ${items} array items`);
}

/** The first answer of `SESSIONS` fresh sessions: one, cursors aside. */
async function sameInEverySession(cmd, tool, args) {
  const answers = [];
  for (let round = 0; round < SESSIONS; round += 5) {
    const batch = await Promise.all(Array.from({ length: Math.min(5, SESSIONS - round) }, async () => {
      const session = await connectProxied(cmd);
      const answer = await call(session, tool, args);
      await session.client.close();
      return withoutCursors(textOf(answer));
    }));
    answers.push(...batch);
  }
  return new Set(answers);
}

// ---------------------------------------------------------------- PostgreSQL rows

const BOOKINGS_TABLE_SQL =
  'CREATE TABLE bookings (id integer PRIMARY KEY, status text NOT NULL, guest text NOT NULL, ' +
  'amount numeric(10,2) NOT NULL, check_in date NOT NULL, notes jsonb NOT NULL)';

/** `count` rows for BOOKINGS_TABLE_SQL as CSV: notes {text, history: [one small object]}. */
function bookingRowsCsv(count) {
  const { bookings } = makeBookings({ count });
  const quote = (s) => `"${s.replaceAll('"', '""')}"`;
  const rows = bookings.map((b, i) => {
    const notes = {
      text: b.notes.slice(0, 120),
      history: [{ at: b.createdAt, by: 'front-desk', what: `booked ${b.nights} nights` }],
    };
    const amount = Number(b.amount).toFixed(2);
    return [i + 1, b.status, quote(b.customer.name), amount, b.checkIn, quote(JSON.stringify(notes))].join(',');
  });
  return ['id,status,guest,amount,check_in,notes', ...rows].join('\n');
}

describe('walks over 2,000 PostgreSQL rows with a small nested array (server-postgres)', { skip: PG_SKIP, timeout: 300_000 }, () => {
  let pg;
  let cmd;
  let tmp;
  let directRows;
  const SQL = 'SELECT * FROM bookings ORDER BY id LIMIT 2000';

  before(async () => {
    tmp = makeTempDir('ctxguard-walks-pg-');
    pg = await startPostgres();
    assert.ok(pg, 'PostgreSQL server binaries are installed (scripts/setup.sh)');
    pg.psql(BOOKINGS_TABLE_SQL);
    pg.copyCsv('bookings', bookingRowsCsv(2000));
    cmd = serverCommand('postgres', pg.url);
    const direct = await connectDirect(cmd);
    directRows = JSON.parse(textOf(await call(direct, 'query', { sql: SQL })));
    await direct.client.close();
  });

  after(async () => {
    await closeAllSessions();
    await pg?.stop();
    removeDir(tmp);
  });

  test('rows that fit show their history whole; the walk is no dearer than the direct answer', T, async (t) => {
    const result = await walk(cmd, 'query', { sql: SQL }, tmp, 'postgres');
    const shown = JSON.parse(textOf(result.first));
    const rows = Array.isArray(shown) ? shown : shown.items;
    const collapsed = rows.filter((row) => !Array.isArray(row.notes.history)).map((row) => row.id);
    t.diagnostic(`${rows.length} rows shown, ${result.fill}% of the budget; history collapsed in rows ${collapsed.join(', ') || 'none'}`);
    assert.ok(rows.length > 1, `${rows.length} rows shown`);
    assert.deepEqual(collapsed, [], 'rows that fit show their history whole');
    checkWalk(t, result, directRows, '2,000 rows');
  });

  test(`the same first answer in ${SESSIONS} fresh sessions`, T, async () => {
    const answers = await sameInEverySession(cmd, 'query', { sql: SQL });
    assert.equal(answers.size, 1, `${answers.size} different first answers`);
  });
});

// ---------------------------------------------------------------- files and trees

describe('walks over JSON files and a directory tree (server-filesystem)', { skip: SKIP, timeout: 300_000 }, () => {
  let tmp;
  let cmd;
  const files = {};

  before(() => {
    tmp = makeTempDir('ctxguard-walks-fs-');
    const root = path.join(tmp, 'root');
    fs.mkdirSync(root);
    files.bookings = path.join(root, 'bookings.json');
    fs.writeFileSync(files.bookings, JSON.stringify(makeBookings({ count: 4000 }).bookings, null, 2));
    files.nested = path.join(root, 'nested.json');
    fs.writeFileSync(files.nested, JSON.stringify(makeNestedDocument().value, null, 2));
    files.tree = path.join(root, 'tree');
    makeWideTree(files.tree, { dirs: 30, filesPerDir: 90, nested: 3, nestedFiles: 300 });
    cmd = serverCommand('filesystem', root);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(tmp);
  });

  async function directValue(tool, args) {
    const direct = await connectDirect(cmd);
    const answer = await call(direct, tool, args);
    await direct.client.close();
    return JSON.parse(textOf(answer));
  }

  test('4,000 bookings (2 MB of JSON): the walk is no dearer than the direct answer', T, async (t) => {
    const args = { path: files.bookings };
    checkWalk(t, await walk(cmd, 'read_text_file', args, tmp, 'bookings'), await directValue('read_text_file', args), '4,000 bookings');
  });

  test('a deep JSON document: the walk is no dearer, and the first answer is one in every session', T, async (t) => {
    const args = { path: files.nested };
    checkWalk(t, await walk(cmd, 'read_text_file', args, tmp, 'nested'), await directValue('read_text_file', args), 'the deep document');
    const answers = await sameInEverySession(cmd, 'read_text_file', args);
    assert.equal(answers.size, 1, `${answers.size} different first answers`);
  });

  test('a directory tree of 3,600 files: the walk is no dearer than the direct answer', T, async (t) => {
    const args = { path: files.tree };
    checkWalk(t, await walk(cmd, 'directory_tree', args, tmp, 'tree'), await directValue('directory_tree', args), 'the tree');
  });
});
