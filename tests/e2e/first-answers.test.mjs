// First answers a model can act on (docs/protocol.md 2.3 "Breadth before depth", 2.4, 5.6): the
// questions a new user asks of large results, each answered from ctxguard's first answer (or the
// first answer and one aggregate), with the real SDK client and real servers, and checked against
// the truth computed from the data itself:
//   - server-filesystem over a generated tree of 3,000 files: "what are the top folders and their
//     subfolders?" — the first answer of directory_tree names every folder of the first two
//     levels, and every folder it does not open says how many entries it holds;
//   - server-postgres over a PostgreSQL started here (lib/postgres.mjs) holding 4,000 orders:
//     "how many orders are cancelled?" from the first answer's digest (its summary leads with
//     the status column, not the channel before it), and "what is the revenue of the refunded
//     orders?" in one aggregate, summed exactly over PostgreSQL's numeric strings ("213.80").
// (The log's error count and time span, and the bookings' statuses, are answered the same way in
// summarize.test.mjs.)

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  closeAllSessions,
  connectDirect,
  connectProxied,
  makeTempDir,
  prng,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
} from './lib/harness.mjs';
import { ORDERS_TABLE_SQL, ORDER_STATUSES as STATUSES, decimalOfCents as decimal, makeOrders } from './lib/corpus.mjs';
import { parseCollapsed, resolveSummarized, splitMeta, textOf } from './lib/reconstruct.mjs';
import { postgresBinDir, startPostgres } from './lib/postgres.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 90_000 };
const BUDGET = 4000; // ctxguard's default --token-budget
const FETCH = 'ctxguard_fetch';

const call = (session, name, args = {}) => session.client.callTool({ name, arguments: args });

function assertWithinBudget(meta, what) {
  assert.ok(meta.estimatedTokens > 0 && meta.estimatedTokens <= BUDGET, `estimatedTokens ${meta.estimatedTokens} ${what}`);
}

// ---------------------------------------------------------------- a directory tree

/**
 * 12 top folders of 2 or 3 subfolders each (38 folders at depth 1-2), files spread over the
 * subfolders and some folders a level deeper: 3,000 files in all. Returns the folder paths
 * (relative, depth 1 and 2) and the number of entries each holds.
 */
function makeProjectTree(root) {
  const rnd = prng(2026);
  const folders = new Map(); // relative path -> entries it holds
  const leaves = [];
  // More top folders than the 10 items an array keeps at the least: showing fewer of them is
  // what the levels after breadth would do, depth first.
  const tops = ['api', 'auth', 'billing', 'docs', 'frontend', 'infra', 'jobs', 'mobile', 'search', 'shared', 'tools', 'web'];
  const subfolders = [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3];
  for (const [t, top] of tops.entries()) {
    const subs = subfolders[t];
    folders.set(top, subs);
    for (let s = 0; s < subs; s++) {
      const rel = path.join(top, `module_${s}`);
      fs.mkdirSync(path.join(root, rel), { recursive: true });
      leaves.push(rel);
      folders.set(rel, 0);
    }
  }
  assert.equal(folders.size, 38);
  // A folder one level deeper in every third leaf: it holds files of its own.
  const deeper = leaves.filter((_, i) => i % 3 === 0).map((leaf) => {
    fs.mkdirSync(path.join(root, leaf, 'generated'));
    folders.set(leaf, folders.get(leaf) + 1);
    return path.join(leaf, 'generated');
  });
  const places = [...leaves, ...deeper];
  for (let i = 0; i < 3000; i++) {
    const place = places[Math.floor(rnd() * places.length)];
    fs.writeFileSync(path.join(root, place, `file_${String(i).padStart(4, '0')}.ts`), '');
    if (folders.has(place)) folders.set(place, folders.get(place) + 1);
  }
  return folders;
}

/** Every folder of `entries` (directory_tree's shape) down to `levels` levels, as relative paths. */
function shownFolders(entries, levels, prefix = '') {
  const out = new Map(); // relative path -> the entry as shown
  for (const entry of Array.isArray(entries) ? entries : []) {
    if (entry.type !== 'directory') continue;
    const rel = prefix ? path.join(prefix, entry.name) : entry.name;
    out.set(rel, entry);
    if (levels > 1) for (const [k, v] of shownFolders(entry.children, levels - 1, rel)) out.set(k, v);
  }
  return out;
}

describe('first answers over a 3,000-file tree (server-filesystem directory_tree)', { skip: SKIP, timeout: 180_000 }, () => {
  let tmp;
  let root;
  let folders;
  let direct;
  let proxied;

  before(async () => {
    tmp = makeTempDir('ctxguard-first-answers-');
    root = path.join(tmp, 'project');
    folders = makeProjectTree(root);
    const cmd = serverCommand('filesystem', tmp);
    [direct, proxied] = await Promise.all([connectDirect(cmd), connectProxied(cmd)]);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(tmp);
  });

  test('"what are the top folders and their subfolders?": one call names all 38, each unopened folder with its size', T, async (t) => {
    const directTree = JSON.parse(textOf(await call(direct, 'directory_tree', { path: root })));
    const first = await call(proxied, 'directory_tree', { path: root });
    assert.ok(!first.isError);
    const { value: shown, meta } = splitMeta(JSON.parse(textOf(first)));
    assertWithinBudget(meta, 'of the first answer');
    const tree = Array.isArray(shown) ? shown : shown.items;
    const named = shownFolders(tree, 2);
    assert.deepEqual([...named.keys()].sort(), [...folders.keys()].sort(), 'every folder of the first two levels is named');
    // A subfolder whose entries are not shown says how many it holds, and where to fetch them.
    let collapsed = 0;
    for (const [rel, entry] of named) {
      if (typeof entry.children !== 'string') continue;
      const pointer = entry.children.slice(entry.children.lastIndexOf(': ') + 2, -1);
      const fold = parseCollapsed(entry.children, pointer);
      assert.ok(fold, `${rel}: ${entry.children}`);
      assert.equal(fold.size, folders.get(rel), `${rel} holds ${folders.get(rel)} entries`);
      collapsed += 1;
    }
    assert.ok(collapsed > 0, 'the tree is over the budget: its third level is collapsed');
    assert.equal(collapsed, meta.valuesCollapsed);
    assert.match(meta.hint, /\[array of N items: PATH\]/);
    // Every entry stays reachable from that one answer.
    const rebuilt = await resolveSummarized(proxied.client, first, {
      onAnswer: ({ meta: m }) => assertWithinBudget(m, 'of a fetch'),
    });
    assert.deepEqual(rebuilt.value, directTree);
    t.diagnostic(`${named.size} folders named, ${collapsed} collapsed with their sizes, ${meta.estimatedTokens} tokens; whole tree rebuilt in ${rebuilt.fetches} fetches`);
  });
});

// ---------------------------------------------------------------- PostgreSQL rows

// Skipped on a developer machine without PostgreSQL; never in CI, where scripts/setup.sh installs it.
const PG_SKIP = SKIP || (postgresBinDir() || process.env.CI ? false : 'no PostgreSQL server binaries (/usr/lib/postgresql/N/bin)');

describe('first answers over 4,000 PostgreSQL rows (server-postgres)', { skip: PG_SKIP, timeout: 180_000 }, () => {
  let pg;
  let direct;
  let proxied;
  const { orders, csv } = makeOrders();
  const SQL = 'SELECT id, channel, status, customer, total, created_at FROM orders ORDER BY id';
  let first;
  let meta;

  before(async () => {
    pg = await startPostgres();
    assert.ok(pg, 'PostgreSQL server binaries are installed (scripts/setup.sh)');
    pg.psql(ORDERS_TABLE_SQL);
    pg.copyCsv('orders', csv);
    const cmd = serverCommand('postgres', pg.url);
    [direct, proxied] = await Promise.all([connectDirect(cmd), connectProxied(cmd)]);
    first = await call(proxied, 'query', { sql: SQL });
    assert.ok(!first.isError, JSON.stringify(first).slice(0, 300));
    meta = splitMeta(JSON.parse(textOf(first))).meta;
  });

  after(async () => {
    await closeAllSessions();
    await pg?.stop();
  });

  test('the server answers rows with numeric columns as decimal strings, as ctxguard must sum them', T, async () => {
    const rows = JSON.parse(textOf(await call(direct, 'query', { sql: `${SQL} LIMIT 3` })));
    assert.deepEqual(rows.map((r) => r.total), orders.slice(0, 3).map((o) => decimal(o.cents)));
  });

  test('"how many orders are cancelled?": the first answer\'s summary leads with status and its digest counts every status', T, () => {
    assertWithinBudget(meta, 'of the first answer');
    assert.equal(meta.totalCount, orders.length);
    assert.match(meta.summary, new RegExp(`^${orders.length} \\w+; status: `), meta.summary);
    for (const [name] of STATUSES) {
      const truth = orders.filter((o) => o.status === name).length;
      assert.equal(meta.digest.status.top[name], truth, `${name}: ${JSON.stringify(meta.digest.status)}`);
    }
    // The hint names the aggregate, once, on this first answer of records.
    assert.match(meta.hint, /"aggregate": \{"groupBy": FIELD, "sum": FIELD\}/);
  });

  test('"what is the revenue of the refunded orders?": one aggregate, exact to the cent', T, async (t) => {
    const ask = async (args) => {
      const result = await call(proxied, FETCH, { cursor: meta.nextCursor, ...args });
      assert.ok(!result.isError, JSON.stringify(result.content).slice(0, 300));
      const answer = splitMeta(JSON.parse(textOf(result)));
      assertWithinBudget(answer.meta, `of ${JSON.stringify(args)}`);
      return answer.value;
    };
    const sum = (rows) => rows.reduce((total, o) => total + o.cents, 0n);
    const refunded = orders.filter((o) => o.status === 'refunded');
    const revenue = await ask({ query: 'status=refunded', aggregate: { sum: 'total' } });
    assert.equal(revenue.items, refunded.length);
    assert.equal(revenue.groups.length, 1);
    assert.equal(revenue.groups[0].count, refunded.length);
    assert.equal(revenue.groups[0].sum.total, decimal(sum(refunded)));
    assert.equal(revenue.skipped, undefined, 'every total is a number');

    // Every status at once: count, sum, min, max and the average, as PostgreSQL computes them.
    const byStatus = await ask({ aggregate: { groupBy: 'status', sum: 'total', min: 'total', max: 'total', avg: 'total' } });
    assert.equal(byStatus.groups.length, STATUSES.length);
    const truth = pg.psql("COPY (SELECT status, count(*), sum(total), min(total), max(total), round(avg(total), 8) FROM orders GROUP BY status) TO STDOUT WITH (FORMAT csv)")
      .trim().split('\n').map((line) => line.split(','));
    for (const [status, count, total, min, max, avg] of truth) {
      const group = byStatus.groups.find((g) => g.status === status);
      assert.ok(group, status);
      assert.equal(group.count, Number(count));
      assert.equal(group.sum.total, total, `${status} sum`);
      assert.equal(group.min.total, min);
      assert.equal(group.max.total, max);
      assert.equal(group.avg.total, avg, `${status} avg`);
    }
    t.diagnostic(`refunded: ${revenue.groups[0].count} orders, ${revenue.groups[0].sum.total}`);
  });
});
