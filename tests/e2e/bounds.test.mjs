// Resource bounds (issue 7, part 4) on raw pipes, with lib/raw-server.mjs generating the answers
// (params._meta["raw-server/generate"]) and ctxguard's memory read from /proc/<pid>/status:
//   - a flood of 1,000 answers of 1 MiB through --cache-size 64M: ctxguard_cache_bytes, sampled
//     on /metrics all along, never exceeds 64 MiB; every answer was cached and all but the last
//     few evicted (evictions + entries = 1,000, nothing expired or rejected); the cursors of the
//     answers still held fetch pages, those of the evicted ones answer "no longer cached"; and
//     ctxguard's peak RSS stays within its size at start + the cache's 64 MiB + 32 MiB, however
//     many answers passed;
//   - one answer of 100 MiB of JSON records with the default cache: peak RSS (VmHWM) under
//     4 x the answer + the bytes the cache charges for it, and the answer is still paginated
//     with cursors that work.
// Figures are printed as diagnostics. Under AddressSanitizer (CTXGUARD_SANITIZED=1, or a virtual
// size in terabytes: its shadow memory) RSS means something else (quarantine, shadow), so only
// the figures are printed.
// scripts/bench-memory.mjs measures the same peak for 10 and 100 MiB, records and text. About
// 20 s; under AddressSanitizer, where the flood is 300 answers, about a minute.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';

import { killAllRaw, rawProxy, rawServerCommand, skipWithoutCtxguard, within } from './lib/harness.mjs';
import { ctxguardOf, generated, memoryOf, metricsBase, MiB, mib, rawClient, scrape } from './lib/raw-client.mjs';

const SKIP = skipWithoutCtxguard();

const NO_LONGER_CACHED =
  'The result this cursor belongs to is no longer cached (it expired or was evicted to free memory). Call the original tool again.';

// scripts/test-sanitized.sh says so (CTXGUARD_SANITIZED=1); run by hand, ASan shows in the
// terabytes of virtual memory it reserves for its shadow (a real build: a few hundred MiB).
function sanitized(pid) {
  if (process.env.CTXGUARD_SANITIZED === '1') return true;
  const kib = Number(/^VmSize:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return kib > 1024 ** 3; // 1 TiB
}

function textOfResult(message) {
  assert.ok(message.result, `a result: ${JSON.stringify(message).slice(0, 300)}`);
  return message.result.content.map((c) => c.text ?? '').join('\n');
}

/** A fetched page: not an error, items from the original array, within the budget. */
function assertPage(message, what) {
  assert.notEqual(message.result?.isError, true, `${what}: ${textOfResult(message).slice(0, 200)}`);
  const page = JSON.parse(message.result.content[0].text);
  assert.ok(Array.isArray(page.items) && page.items.length > 0, `${what}: a page of items`);
  assert.equal(page._ctxguard.path, '/records');
  return page;
}

function assertEvicted(message, what) {
  assert.equal(message.result?.isError, true, `${what}: an isError result`);
  assert.deepEqual(message.result.content, [{ type: 'text', text: NO_LONGER_CACHED }], what);
}

// Under AddressSanitizer RSS is not asserted, so the flood need not be long enough to show
// that memory does not grow with it: 300 MiB through the 64 MiB cache still fills it and evicts
// all but the newest, in a third of the time (the flood was 100 of the sanitized run's 128 s).
const FLOOD_ANSWERS = process.env.CTXGUARD_SANITIZED === '1' ? 300 : 1000;

describe('resource bounds: the cache under a flood, peak memory for a large answer', { skip: SKIP, timeout: 540_000 }, () => {
  after(() => killAllRaw());

  test(`${FLOOD_ANSWERS.toLocaleString('en')} answers of 1 MiB through --cache-size 64M: the cache stays within 64 MiB, evicts the oldest, and RSS does not grow with the flood`, { timeout: 360_000 }, async (t) => {
    const CACHE = 64 * MiB;
    const CALLS = FLOOD_ANSWERS;
    const WINDOW = 4; // requests in flight: enough to keep ctxguard busy, few enough to sample often
    const g = rawProxy(rawServerCommand(), ['--cache-size', '64M', '--metrics-listen', '0']);
    const client = rawClient(g);
    const base = await metricsBase(g);
    const asan = sanitized(g.pid);
    const start = memoryOf(g.pid);
    const cursors = new Array(CALLS);
    const lineBytes = new Array(CALLS);
    const samples = [];
    const sample = async (after) => {
      const metrics = await scrape(base);
      samples.push({ after, bytes: metrics.ctxguard_cache_bytes, entries: metrics.ctxguard_cache_entries, ...memoryOf(g.pid) });
      assert.equal(metrics.ctxguard_cache_max_bytes, CACHE);
      return metrics;
    };
    const started = Date.now();
    const inFlight = [];
    for (let i = 0; i < CALLS; i++) {
      // Each answer is the same 1 MiB but for its tag, so each is a result of its own.
      inFlight.push(client.call('flood', {}, generated('records', MiB, `answer-${i}`)).then((message) => {
        const meta = ctxguardOf(message.result);
        assert.ok(meta?.nextCursor, `answer ${i} paginated: ${JSON.stringify(message).slice(0, 300)}`);
        cursors[i] = meta.nextCursor;
      }));
      if (inFlight.length >= WINDOW) await inFlight.shift();
      if (i % 25 === 24) await sample(i + 1);
    }
    await Promise.all(inFlight);
    const end = await sample(CALLS);
    const seconds = (Date.now() - started) / 1000;

    // The flood really was CALLS answers of about 1 MiB each, as the server sent them.
    const original = (await scrape(base)).ctxguard_original_answer_tokens_count;
    assert.equal(original, CALLS);
    const maxBytes = Math.max(...samples.map((s) => s.bytes));
    const maxRss = Math.max(...samples.map((s) => s.rss));
    const hwm = memoryOf(g.pid).hwm;
    t.diagnostic(`flood: ${CALLS} answers of ${mib(MiB)} in ${seconds.toFixed(1)} s; ${samples.length} samples of /metrics`);
    t.diagnostic(`cache bytes: max seen ${end.ctxguard_cache_bytes === maxBytes ? '(= at the end) ' : ''}${maxBytes} (${mib(maxBytes)}) of ${CACHE} (64 MiB); entries ${end.ctxguard_cache_entries} (${mib(maxBytes / end.ctxguard_cache_entries)} each); evictions ${end.ctxguard_cache_evictions_total}`);
    t.diagnostic(`RSS: at start ${mib(start.rss)}, max sampled ${mib(maxRss)}, peak (VmHWM) ${mib(hwm)}${asan ? ' (AddressSanitizer build: not bounded here)' : ''}`);

    // The cache never held more than its budget, at any sample.
    for (const s of samples) assert.ok(s.bytes <= CACHE, `cache bytes ${s.bytes} after ${s.after} answers: over 64 MiB`);
    assert.ok(maxBytes > CACHE / 2, `the cache filled up (max ${maxBytes})`);
    // Every answer was cached, and all but those still held were evicted for room.
    assert.equal(end.ctxguard_cache_evictions_total + end.ctxguard_cache_entries, CALLS);
    assert.ok(end.ctxguard_cache_evictions_total >= CALLS - 64, `evictions: ${end.ctxguard_cache_evictions_total}`);
    assert.equal(end.ctxguard_cache_rejected_total, 0);
    assert.equal(end.ctxguard_cache_expirations_total, 0);

    // The entries held are the newest answers: their cursors work; the one just before them,
    // and the oldest, were evicted (misses touch nothing, so they go first).
    const held = end.ctxguard_cache_entries;
    assertEvicted(await client.fetch(cursors[0]), 'the oldest answer');
    assertEvicted(await client.fetch(cursors[CALLS - held - 1]), `answer ${CALLS - held - 1}, the newest evicted`);
    for (const i of [CALLS - held, CALLS - 2, CALLS - 1]) {
      const page = assertPage(await client.fetch(cursors[i]), `answer ${i}`);
      assert.equal(page._ctxguard.offset, 50);
    }

    // Memory is bounded by the cache, not by the gigabyte that went through (unsanitized).
    if (!asan) {
      const bound = start.rss + CACHE + 32 * MiB;
      assert.ok(hwm < bound, `peak RSS ${mib(hwm)} over ${mib(bound)} (start + 64 MiB cache + 32 MiB)`);
    }
    g.end();
    assert.equal((await within(g.exited, 10_000, 'ctxguard exit')).code, 0);
  });

  test('one answer of 100 MiB of JSON records: peak RSS under 4 x the answer + what the cache charges for it', { timeout: 170_000 }, async (t) => {
    const g = rawProxy(rawServerCommand(), ['--metrics-listen', '0']);
    const client = rawClient(g);
    const base = await metricsBase(g);
    const asan = sanitized(g.pid);
    const start = memoryOf(g.pid);
    const started = Date.now();
    const message = await client.call('big', {}, generated('records', 100 * MiB, 'the-big-one'));
    const seconds = (Date.now() - started) / 1000;
    const { hwm, rss } = memoryOf(g.pid);
    const metrics = await scrape(base);
    // The server's line, as ctxguard counted it (a labelled sample).
    const text = await (await fetch(`${base}/metrics`)).text();
    const original = Number(/^ctxguard_original_bytes_total\{[^}]*tool="big"[^}]*\} (\d+)/m.exec(text)?.[1]);
    assert.ok(original >= 100 * MiB && original < 101 * MiB, `the server's line: ${original} bytes`);
    const charged = metrics.ctxguard_cache_bytes;
    const bound = 4 * original + charged;
    t.diagnostic(`100 MiB answer: ${original} bytes in ${seconds.toFixed(1)} s (server and ctxguard); cache charged ${charged} (${mib(charged)}) of ${mib(metrics.ctxguard_cache_max_bytes)}`);
    t.diagnostic(`RSS: at start ${mib(start.rss)}, after ${mib(rss)}, peak (VmHWM) ${mib(hwm)} = ${(hwm / original).toFixed(2)} x the answer; bound 4 x answer + cache = ${mib(bound)}${asan ? ' (AddressSanitizer build: not asserted)' : ''}`);

    const meta = ctxguardOf(message.result);
    assert.equal(meta?.path, '/records');
    assert.ok(meta.totalCount > 250_000, `records: ${meta.totalCount}`);
    assert.equal(charged > 0, true, 'the result is cached');
    assertPage(await client.fetch(meta.nextCursor), 'the second page');
    if (!asan) assert.ok(hwm < bound, `peak RSS ${mib(hwm)} over 4 x ${mib(original)} + ${mib(charged)}`);
    g.end();
    assert.equal((await within(g.exited, 10_000, 'ctxguard exit')).code, 0);
  });
});
