// Summarization, chunking and search inside cached results (issue 4) end to end: the real SDK
// client, the real server-filesystem and the real ctxguard binary with its default settings,
// over generated files (lib/corpus.mjs). Every check compares ctxguard's answers with a direct
// session to the same server over the same files:
//   - a 2 MB application log with multi-line stack traces comes in chunks that rebuild it byte
//     for byte and never start inside an entry; startLine/endLine ranges and line queries give
//     exactly the lines (and line numbers) of the direct text;
//   - a 300 KB Markdown document comes in chunks cut at paragraphs and headings;
//   - search_files and list_directory over thousands of files come in chunks that rebuild them;
//   - a JSON document with deep nesting and long strings is summarized (cut strings, collapsed
//     values, projections, pages) and everything stays reachable: lib/reconstruct.mjs's
//     resolveSummarized rebuilds the whole value from the stand-ins;
//   - 20,000 bookings: projected records, a digest whose counts and ranges are the data's,
//     --project rules, `fields`, and queries whose matches are those of a JS filter;
//   - bad cursors and bad arguments are one-line isError results that leave the session usable.
// Every ctxguard_fetch answer is checked against the budget on the way.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import {
  alterCursor,
  closeAllSessions,
  connectDirect,
  connectProxied,
  makeFiles,
  makeTempDir,
  makeWideTree,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
} from './lib/harness.mjs';
import { BOOKING_STATUSES, makeAppLog, makeBookings, makeMarkdown, makeNestedDocument } from './lib/corpus.mjs';
import {
  META_KEY,
  getAt,
  parseCollapsed,
  parseCutString,
  parsePointer,
  reconstructText,
  resolveSummarized,
  splitMeta,
  splitTextPiece,
  textOf,
} from './lib/reconstruct.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 60_000 };

// ctxguard's defaults (ctxguard --help).
const BUDGET = 4000; // --token-budget
const CHUNK = 2000; // --chunk-size
const MAX_STRING = 500; // --max-string
const MAX_DEPTH = 4; // --max-depth
const GIVE_BACK_ROUNDS = 4; // kGiveBackRounds (lib/pipeline/fit/fitter.hpp): levels given back after the fit
const MAX_PAGE_SIZE = 200; // --max-page-size
const FETCH = 'ctxguard_fetch';
// Direct answers carry a file twice (text and structuredContent), escaped: over the SDK's 10 MB default.
const BIG_MESSAGES = { transportOptions: { maxBufferSize: 256 * 1024 * 1024 } };

// ---------------------------------------------------------------- helpers

const call = (session, name, args = {}) => session.client.callTool({ name, arguments: args });
const fetchRaw = (session, args) => call(session, FETCH, args);

/** ASCII-only lower case: how ctxguard's queries fold case (UTF-8 bytes compare as they are). */
const asciiLower = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** Code points of a string. */
const codePoints = (s) => [...s].length;

/** The `_ctxguard` of any ctxguard answer: a JSON answer's member, or a text answer's trailing item. */
function metaOf(result) {
  if (result.content?.length === 2) return splitTextPiece(result).meta;
  return JSON.parse(textOf(result))[META_KEY];
}

/** estimatedTokens is a positive integer within the default budget, and tokenBudget says so. */
function assertWithinBudget(meta, what = '') {
  assert.equal(meta.tokenBudget, BUDGET, `tokenBudget ${what}`);
  assert.ok(Number.isInteger(meta.estimatedTokens) && meta.estimatedTokens > 0, `estimatedTokens ${meta.estimatedTokens} ${what}`);
  assert.ok(meta.estimatedTokens <= BUDGET, `estimatedTokens ${meta.estimatedTokens} > ${BUDGET} ${what}`);
}

/** A log digest counts and spans exactly `entries` ({first, level}) of the log's `lines`. */
function assertLogDigest(digest, entries, lines) {
  assert.equal(digest.kind, 'log');
  assert.equal(digest.entries, entries.length);
  const stampOf = (entry) => lines[entry.first - 1].split(' ').slice(0, 2).join(' ');
  assert.deepEqual(digest.span, { first: stampOf(entries[0]), last: stampOf(entries.at(-1)) });
  const levels = {};
  for (const e of entries) levels[e.level] = (levels[e.level] ?? 0) + 1;
  assert.deepEqual(digest.levels, levels);
}

/** A ctxguard_fetch that must succeed and be within the budget. */
async function fetchOk(session, args) {
  const result = await fetchRaw(session, args);
  assert.ok(!result.isError, `${FETCH} ${JSON.stringify(args).slice(0, 200)} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
  assertWithinBudget(metaOf(result), `answering ${JSON.stringify({ ...args, cursor: undefined })}`);
  return result;
}

/** An isError result with one line of text (never a JSON-RPC error: callTool resolved). */
function assertOneLineError(result, pattern) {
  assert.equal(result.isError, true, `expected isError, got ${JSON.stringify(result).slice(0, 300)}`);
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, 'text');
  const { text } = result.content[0];
  assert.ok(text.length > 0 && !text.includes('\n'), `not one line: ${JSON.stringify(text)}`);
  if (pattern) assert.match(text, pattern);
  return text;
}

/** Lines a..b (1-based, inclusive, b clamped to the last line) of `lines`, each with its "\n". */
const linesText = (lines, a, b) => lines.slice(a - 1, Math.min(b, lines.length)).map((l) => `${l}\n`).join('');

/**
 * `ctxguard_fetch {cursor, ...range}` and the continuations its nextCursor gives, until
 * hasMore is false. Checks each answer's budget, `bytes`, and that pieces continue each other.
 * @returns {Promise<{text: string, pieces: string[], metas: object[]}>}
 */
async function fetchLines(session, cursor, range) {
  let result = await fetchOk(session, { cursor, ...range });
  const pieces = [];
  const metas = [];
  for (;;) {
    const { text, meta } = splitTextPiece(result);
    assert.equal(meta.bytes, Buffer.byteLength(text), 'bytes is the piece size');
    const previous = metas.at(-1);
    if (previous) {
      const continues = meta.startLine === previous.endLine + 1 || (!pieces.at(-1).endsWith('\n') && meta.startLine === previous.endLine);
      assert.ok(continues, `a piece starts at line ${meta.startLine} after one that ended at ${previous.endLine}`);
      // A piece that repeats the one before (same lines, same text) means the cursor does not move on.
      assert.ok(!(text === pieces.at(-1) && meta.startLine === previous.startLine), `the continuation of lines ${previous.startLine}-${previous.endLine} repeats them`);
    }
    pieces.push(text);
    metas.push(meta);
    if (!meta.hasMore) {
      assert.equal(meta.nextCursor, undefined);
      break;
    }
    result = await fetchOk(session, { cursor: meta.nextCursor });
  }
  return { text: pieces.join(''), pieces, metas };
}

/**
 * A line query over a cached text, every page: returns the [lineNumber, text] rows and the
 * metas. Checks each page's budget, query, totalMatches (the same on every page) and
 * shownMatches.
 */
async function queryLines(session, cursor, query) {
  let result = await fetchOk(session, { cursor, query });
  const rows = [];
  const metas = [];
  for (;;) {
    const { text, meta } = splitTextPiece(result);
    assert.equal(meta.query, query);
    if (metas.length > 0) assert.equal(meta.totalMatches, metas[0].totalMatches, 'totalMatches stays the same on every page');
    let page = [];
    if (meta.shownMatches > 0) {
      assert.ok(text.endsWith('\n'), 'a page of matches ends with a line break');
      page = text.slice(0, -1).split('\n').map((row) => {
        const m = /^(\d+): (.*)$/su.exec(row);
        assert.ok(m, `not a "LINE: text" row: ${JSON.stringify(row.slice(0, 100))}`);
        return [Number(m[1]), m[2]];
      });
    }
    assert.equal(page.length, meta.shownMatches, 'shownMatches is the rows on the page');
    rows.push(...page);
    metas.push(meta);
    if (!meta.hasMore) break;
    result = await fetchOk(session, { cursor: meta.nextCursor });
  }
  return { rows, metas };
}

/** [lineNumber, text] of every line holding all `terms` (ASCII case-insensitively): grep -iF, term by term. */
function grepLines(lines, terms) {
  const lowered = terms.map(asciiLower);
  const out = [];
  lines.forEach((line, i) => {
    const l = asciiLower(line);
    if (lowered.every((t) => l.includes(t))) out.push([i + 1, line]);
  });
  return out;
}

/**
 * An array query over a cached array, every page: returns the matched indices and items, and
 * the metas. Checks each page's budget, `indices` against the items and totalMatches.
 */
async function queryItems(session, args) {
  let result = await fetchOk(session, args);
  const indices = [];
  const items = [];
  const metas = [];
  for (;;) {
    assert.equal(result.content.length, 1, `a query page is one JSON item: ${JSON.stringify(result).slice(0, 200)}`);
    const json = JSON.parse(textOf(result));
    const meta = json[META_KEY];
    assert.equal(meta.query, args.query);
    assert.ok(Array.isArray(json.items) && Array.isArray(meta.indices));
    assert.equal(meta.indices.length, json.items.length, 'one index per item shown');
    if (metas.length > 0) assert.equal(meta.totalMatches, metas[0].totalMatches, 'totalMatches stays the same on every page');
    indices.push(...meta.indices);
    items.push(...json.items);
    metas.push(meta);
    if (!meta.hasMore) {
      assert.equal(meta.nextCursor, undefined);
      break;
    }
    result = await fetchOk(session, { cursor: meta.nextCursor });
  }
  return { indices, items, metas };
}

/** Whether any scalar in `value` contains `needle` (lowered), as ctxguard's plain-word query reads it. */
function anywhere(value, needle) {
  if (typeof value === 'string') return asciiLower(value).includes(needle);
  if (Array.isArray(value)) return value.some((v) => anywhere(v, needle));
  if (value && typeof value === 'object') return Object.values(value).some((v) => anywhere(v, needle));
  return asciiLower(JSON.stringify(value)).includes(needle);
}

/** The top `n` [value, count] pairs: by count descending, then by value ascending (`cmp`). */
function topCounts(values, n, cmp) {
  const counts = new Map();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || cmp(a[0], b[0])).slice(0, n);
}

/** `record` with only `fields` (dotted fields keep part of a nested object), in the record's key order. */
function project(record, fields) {
  const out = {};
  for (const [k, v] of Object.entries(record)) {
    if (fields.includes(k)) out[k] = v;
    const sub = fields.filter((f) => f.startsWith(`${k}.`)).map((f) => f.slice(k.length + 1));
    if (sub.length > 0 && !fields.includes(k) && v && typeof v === 'object') out[k] = project(v, sub);
  }
  return out;
}

/** Every string of `value` with its JSON Pointer. */
function stringsWithPointers(value, pointer = '', out = []) {
  if (typeof value === 'string') out.push({ pointer, value });
  else if (Array.isArray(value)) value.forEach((v, i) => stringsWithPointers(v, `${pointer}/${i}`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) stringsWithPointers(v, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`, out);
  }
  return out;
}

const HEADING_RE = /^#{1,6}[ \t]/;

/** How many arrays stand around the value at `pointer` in `root`. */
function arraysAbove(root, pointer) {
  let count = 0;
  let value = root;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(value)) count += 1;
    value = Array.isArray(value) ? value[Number(token)] : value[token];
  }
  return count;
}

// ---------------------------------------------------------------- the suite

describe('summarization, chunking and search through ctxguard (server-filesystem)', { skip: SKIP, timeout: 300_000 }, () => {
  let tmp;
  let direct;
  let proxied; // default settings
  let ruled; // --project 'read_*=id,status'
  let tabled; // --tables
  const data = {}; // generated corpora
  const files = {}; // file paths
  const directText = {}; // the direct read_text_file texts

  const read = (session, file) => call(session, 'read_text_file', { path: file });

  before(async () => {
    tmp = makeTempDir('ctxguard-summarize-');
    data.log = makeAppLog();
    data.markdown = makeMarkdown();
    data.nested = makeNestedDocument();
    data.bookings = makeBookings();
    files.log = path.join(tmp, 'app.log');
    files.markdown = path.join(tmp, 'handbook.md');
    files.smallMarkdown = path.join(tmp, 'small.md');
    files.nested = path.join(tmp, 'nested.json');
    files.bookings = path.join(tmp, 'bookings.json');
    files.rows = path.join(tmp, 'rows.json');
    fs.writeFileSync(files.log, data.log.text);
    fs.writeFileSync(files.markdown, data.markdown.text);
    fs.writeFileSync(files.smallMarkdown, data.markdown.text.slice(0, data.markdown.text.indexOf('\n\n', 2000) + 2));
    fs.writeFileSync(files.nested, JSON.stringify(data.nested.value, null, 2));
    fs.writeFileSync(files.bookings, JSON.stringify({ generatedAt: '2024-06-01T00:00:00Z', bookings: data.bookings.bookings }));
    // Flat uniform records: what --tables writes as {columns, rows}.
    data.rows = data.bookings.bookings.slice(0, 5000).map((b) => ({ id: b.id, status: b.status, amount: b.amount, checkIn: b.checkIn, nights: b.nights }));
    fs.writeFileSync(files.rows, JSON.stringify({ rows: data.rows }));
    data.treeFiles = makeWideTree(path.join(tmp, 'tree'));
    data.flatFiles = makeFiles(path.join(tmp, 'flat'), 3000, (i) => `entry_${String(i).padStart(5, '0')}_${'x'.repeat(i % 17)}.txt`);

    const cmd = serverCommand('filesystem', tmp);
    [direct, proxied, ruled, tabled] = await Promise.all([
      connectDirect(cmd, BIG_MESSAGES),
      connectProxied(cmd),
      connectProxied(cmd, ['--project', 'read_*=id,status']),
      connectProxied(cmd, ['--tables']),
    ]);
    for (const key of ['log', 'markdown', 'nested', 'bookings']) {
      const r = await read(direct, files[key]);
      assert.ok(!r.isError, JSON.stringify(r).slice(0, 300));
      directText[key] = textOf(r);
    }
    // The server reads what was written.
    assert.equal(directText.log, data.log.text);
    assert.equal(directText.markdown, data.markdown.text);
  });

  after(async () => {
    await closeAllSessions();
    removeDir(tmp);
  });

  // ---------------------------------------------------------------- the log

  describe('a 2 MB application log with stack traces (read_text_file)', () => {
    let first;
    let cursor; // any cursor into the cached log

    before(async () => {
      first = await read(proxied, files.log);
      cursor = splitTextPiece(first).meta.nextCursor;
    });

    test('the first answer is the log\'s first chunk and a trailer saying where it stands; structuredContent says the same', T, () => {
      assert.ok(!first.isError);
      const { text, meta } = splitTextPiece(first);
      assert.ok(directText.log.startsWith(text), 'chunk 0 is the start of the direct text');
      assert.equal(meta.chunkIndex, 0);
      assert.equal(meta.offset, 0);
      assert.equal(meta.startLine, 1);
      assert.equal(meta.totalLines, data.log.lines.length);
      assert.equal(meta.totalBytes, Buffer.byteLength(directText.log));
      assert.equal(meta.bytesInChunk, Buffer.byteLength(text));
      assert.equal(meta.endLine, (text.match(/\n/g) ?? []).length);
      assert.ok(meta.totalChunks > 1 && meta.hasMore && typeof meta.nextCursor === 'string');
      assert.ok(meta.hint.includes(FETCH) && !meta.hint.includes('\n'), meta.hint);
      // server-filesystem's {content: text} wrapper holds the chunk and the same _ctxguard.
      assert.equal(first.structuredContent.content, text);
      assert.deepEqual(first.structuredContent[META_KEY], meta);
    });

    test('the first answer is within the token budget', T, () => {
      assertWithinBudget(splitTextPiece(first).meta, 'of the first answer');
    });

    test('the first answer\'s digest: the span, the entries per level and the most frequent messages of the whole log', T, () => {
      const { meta } = splitTextPiece(first);
      const { digest } = meta;
      const { lines, entries } = data.log;
      assertLogDigest(digest, entries, lines);
      assert.ok(digest.messages.length >= 1 && digest.messages.every((m, i, all) => i === 0 || all[i - 1].count >= m.count));
      for (const m of digest.messages) assert.ok(m.firstLine >= 1 && m.firstLine <= lines.length && m.template.includes('<*>'), JSON.stringify(m));
      assert.ok(JSON.stringify(digest).length <= 700);
      // "How many errors, over what span?" answered by the first answer alone.
      assert.equal(digest.levels.ERROR, entries.filter((e) => e.level === 'ERROR').length);
    });

    test('walking nextCursor rebuilds the log byte for byte; every chunk is within the budget and starts a log entry', T, async (t) => {
      const chunks = [];
      const rec = await reconstructText(proxied.client, first, {
        onPiece: ({ text, meta }) => {
          if (meta.chunkIndex > 0) assertWithinBudget(meta, `of chunk ${meta.chunkIndex}`);
          chunks.push({ text, meta });
        },
      });
      assert.equal(rec.text, directText.log);
      assert.equal(chunks.length, chunks[0].meta.totalChunks);
      const { entries, entryOfLine, giantEntry } = data.log;
      let insideGiant = 0;
      for (let k = 1; k < chunks.length; k++) {
        const { text: prevText, meta: prev } = chunks[k - 1];
        const line = chunks[k].meta.startLine;
        const entry = entryOfLine[line];
        if (prevText.endsWith('\n') && entries[entry].first === line) continue; // the first line of an entry
        // Only an entry longer than a chunk may be split: the chunk before lies wholly inside it
        // and ends at a line end or a word boundary. Besides the 40 KB entry, a stack trace or a
        // long line of about 3 KB can be (a chunk is about 1,000 tokens); one under 2 KB never is.
        const where = `chunk ${k} starts inside entry ${entry} (lines ${entries[entry].first}-${entries[entry].last}, ${entries[entry].bytes} bytes) at line ${line}: ${JSON.stringify(chunks[k].text.slice(0, 80))}`;
        assert.ok(entries[entry].bytes >= 2000, where);
        assert.equal(entryOfLine[prev.startLine], entry, `chunk ${k - 1} holds more than the entry it splits`);
        assert.match(prevText, /[ \t\n]$/, `chunk ${k - 1} ends inside a word: ${JSON.stringify(prevText.slice(-40))}`);
        if (entry === giantEntry) insideGiant += 1;
      }
      assert.ok(insideGiant >= 1, 'the 40 KB entry is longer than a chunk and is split');
      t.diagnostic(`${chunks.length} chunks; the ${entries[giantEntry].bytes}-byte entry spans ${insideGiant + 1}`);
    });

    test('startLine/endLine give exactly those lines of the direct text, across stack traces and the end of the file', T, async () => {
      const { lines, entries, traceEntries, giantEntry } = data.log;
      const total = lines.length;
      const trace = traceEntries.map((i) => entries[i]).reduce((a, b) => (b.last - b.first > a.last - a.first ? b : a));
      const cases = [
        { startLine: trace.first - 1, endLine: trace.last + 1 }, // a whole entry with its trace, and its neighbours
        { startLine: trace.first + 3, endLine: trace.last - 1 }, // from inside a trace
        { startLine: total - 24, endLine: total }, // the end of the file
        { startLine: total - 2, endLine: total + 50 }, // past the end: up to the last line
        { startLine: total - 5 }, // no endLine: to the end
        { endLine: 12 }, // no startLine: from the first line
        { startLine: 7, endLine: 7 }, // one line
      ];
      for (const range of cases) {
        const a = range.startLine ?? 1;
        const b = Math.min(range.endLine ?? total, total);
        const got = await fetchLines(proxied, cursor, range);
        assert.equal(got.text, linesText(lines, a, b), `lines ${JSON.stringify(range)}`);
        assert.equal(got.metas[0].startLine, a);
        assert.equal(got.metas.at(-1).endLine, b);
        for (const m of got.metas) assert.equal(m.totalLines, total);
      }
      assert.match(linesText(lines, trace.first, trace.last), /\n\tat [^\n]+\nCaused by: /, 'the trace case spans frames and a cause');

      // A range larger than the budget comes in pieces of whole lines.
      const wide = await fetchLines(proxied, cursor, { startLine: 1000, endLine: 6000 });
      assert.equal(wide.text, linesText(lines, 1000, 6000));
      assert.ok(wide.pieces.length > 1, 'a 5000-line range is over the budget');
      for (const piece of wide.pieces) assert.ok(piece.endsWith('\n'), 'pieces of a range hold whole lines');
    });

    test('a range over one line longer than the budget comes in pieces of that line', T, async () => {
      const { lines, entries, giantEntry } = data.log;
      const giant = entries[giantEntry].first;
      for (const range of [{ startLine: giant, endLine: giant }, { startLine: giant - 1, endLine: giant + 1 }]) {
        const long = await fetchLines(proxied, cursor, range);
        assert.equal(long.text, linesText(lines, range.startLine, range.endLine));
        assert.ok(long.pieces.length > 1, 'the 40 KB line is over the budget');
      }
    });

    test('a range past the last line is not an error: no text, and the hint says how many lines there are', T, async () => {
      const total = data.log.lines.length;
      const result = await fetchOk(proxied, { cursor, startLine: total + 1, endLine: total + 10 });
      const { text, meta } = splitTextPiece(result);
      assert.equal(text, '');
      assert.equal(meta.startLine, total + 1);
      assert.equal(meta.endLine, total, 'endLine: the last line there is');
      assert.equal(meta.totalLines, total);
      assert.equal(meta.hasMore, false);
      assert.ok(meta.hint.includes(String(total)), meta.hint);
    });

    test('bad ranges are one-line isError results', T, async () => {
      assertOneLineError(await fetchRaw(proxied, { cursor, startLine: 0, endLine: 3 }), /startLine/);
      assertOneLineError(await fetchRaw(proxied, { cursor, startLine: 20, endLine: 10 }), /endLine/);
      assertOneLineError(await fetchRaw(proxied, { cursor, startLine: '5' }), /startLine/);
      assertOneLineError(await fetchRaw(proxied, { cursor, endLine: 2.5 }), /endLine/);
    });

    test('query gives exactly the matching lines with their numbers, as grep -i of the direct text, across pages', T, async (t) => {
      const { lines } = data.log;
      const queries = [
        { query: 'ERROR', terms: ['ERROR'] }, // also "ErrorHandler" frames: case-insensitive
        { query: '"connection reset"', terms: ['connection reset'] }, // a phrase
        { query: 'gateway 502', terms: ['gateway', '502'] }, // every term
        { query: '東京支店', terms: ['東京支店'] }, // multi-byte
        { query: 'no-such-words-here', terms: ['no-such-words-here'] },
      ];
      for (const { query, terms } of queries) {
        const expected = grepLines(lines, terms);
        const { rows, metas } = await queryLines(proxied, cursor, query);
        assert.deepEqual(rows, expected, `query ${query}`);
        assert.equal(metas[0].totalMatches, expected.length);
        assert.equal(metas[0].totalLines, lines.length);
        t.diagnostic(`${query}: ${expected.length} lines in ${metas.length} pages`);
      }
      assert.ok(grepLines(lines, ['ERROR']).length > 1000, 'ERROR matches enough lines to need pages');
    });

    test('a search\'s first page digests the matching entries: "which errors, since when?" in one call', T, async () => {
      const { lines, entries } = data.log;
      const result = await fetchOk(proxied, { cursor, query: 'ERROR' });
      const { digest, hint } = splitTextPiece(result).meta;
      // Entries whose first line matches (stack lines that match are no entries of their own).
      const matched = entries.filter((e) => asciiLower(lines[e.first - 1]).includes('error'));
      assertLogDigest(digest, matched, lines);
      for (const m of digest.messages) assert.ok(asciiLower(lines[m.firstLine - 1]).includes('error'), JSON.stringify(m));
      assert.ok(hint.endsWith(' _ctxguard.digest describes every matching entry.'), hint);
    });
  });

  // ---------------------------------------------------------------- Markdown

  describe('a 300 KB Markdown document (read_text_file)', () => {
    test('chunks rebuild it byte for byte and end at paragraph ends or before headings, each at least half full', T, async (t) => {
      const first = await read(proxied, files.markdown);
      const chunks = [];
      const rec = await reconstructText(proxied.client, first, {
        onPiece: ({ text, meta }) => {
          if (meta.chunkIndex > 0) assertWithinBudget(meta, `of chunk ${meta.chunkIndex}`);
          chunks.push({ text, meta });
        },
      });
      assert.equal(rec.text, directText.markdown);
      assert.ok(chunks.length > 10);
      // The first answer's digest: the document's outline from its first heading on, as many as fit.
      const { digest } = chunks[0].meta;
      assert.equal(digest.kind, 'markdown');
      const headings = directText.markdown.split('\n').map((line, i) => ({ line: i + 1, heading: line }))
        .filter(({ heading }) => /^#{1,6} /.test(heading));
      assert.ok(digest.outline.length >= 3, JSON.stringify(digest));
      digest.outline.forEach((entry, i) => {
        assert.equal(entry.line, headings[i].line);
        assert.ok(headings[i].heading.startsWith(entry.heading), JSON.stringify(entry));
      });
      let beforeHeading = 0;
      for (let k = 0; k + 1 < chunks.length; k++) {
        const { text } = chunks[k];
        const next = chunks[k + 1].text;
        const atParagraph = text.endsWith('\n\n');
        const atHeading = text.endsWith('\n') && HEADING_RE.test(next);
        assert.ok(atParagraph || atHeading, `chunk ${k} ends ${JSON.stringify(text.slice(-60))}, the next starts ${JSON.stringify(next.slice(0, 60))}`);
        if (!atParagraph) beforeHeading += 1;
        // The boundary is in the latter half of the window: the chunk costs more than half a chunk.
        // (read_text_file repeats its text in structuredContent, so its chunks are half the size.)
        if (k > 0) assert.ok(chunks[k].meta.estimatedTokens > CHUNK / 4, `chunk ${k} is ${chunks[k].meta.estimatedTokens} tokens with its trailer`);
      }
      t.diagnostic(`${chunks.length} chunks, ${beforeHeading} ending right before a heading that follows a paragraph line`);
    });

    test('a Markdown file under the chunk size passes unchanged', T, async () => {
      const [d, p] = await Promise.all([read(direct, files.smallMarkdown), read(proxied, files.smallMarkdown)]);
      assert.deepEqual(p, d);
    });
  });

  // ---------------------------------------------------------------- listings

  describe('listings with thousands of lines (search_files, list_directory)', () => {
    for (const { name, args, count } of [
      { name: 'search_files', args: () => ({ path: path.join(tmp, 'tree'), pattern: '**/*file*' }), count: () => data.treeFiles },
      { name: 'list_directory', args: () => ({ path: path.join(tmp, 'flat') }), count: () => data.flatFiles.length },
    ]) {
      test(`${name}: the chunks rebuild the direct listing; chunks end at line ends`, T, async () => {
        const [d, p] = await Promise.all([call(direct, name, args()), call(proxied, name, args())]);
        const expected = textOf(d);
        assert.equal(expected.split('\n').length, count(), 'the direct listing has a line per file');
        assert.equal(p.content.length, 2, 'chunked');
        const chunks = [];
        const rec = await reconstructText(proxied.client, p, {
          onPiece: ({ text, meta }) => {
            if (meta.chunkIndex > 0) assertWithinBudget(meta, `of chunk ${meta.chunkIndex}`);
            chunks.push(text);
          },
        });
        assert.equal(rec.text, expected);
        for (const c of chunks.slice(0, -1)) assert.ok(c.endsWith('\n'), `a chunk ends inside a line: ${JSON.stringify(c.slice(-40))}`);
      });
    }
  });

  // ---------------------------------------------------------------- nested JSON

  describe('a JSON document nested 10+ deep with 5-50 KB strings (read_text_file)', () => {
    let first;
    let shown;
    let meta;
    let original;

    before(async () => {
      first = await read(proxied, files.nested);
      ({ value: shown, meta } = splitMeta(JSON.parse(textOf(first))));
      original = JSON.parse(directText.nested);
    });

    test('the first answer cuts long strings at a word boundary and collapses values deeper than the limit, and says so', T, (t) => {
      assert.ok(!first.isError);
      assert.equal(first.content.length, 1);
      assert.ok(meta.stringsCut > 0 && meta.valuesCollapsed > 0, JSON.stringify({ ...meta, hint: undefined }).slice(0, 300));
      assert.equal(typeof meta.resultCursor, 'string');
      assert.ok(meta.hint.includes(FETCH) && meta.hint.includes('resultCursor'), meta.hint);
      let strings = 0;
      let collapsed = 0;
      let keptMost = 0;
      const folds = [];
      for (const { pointer, value } of stringsWithPointers(shown)) {
        const cut = parseCutString(value, pointer);
        const fold = cut ? null : parseCollapsed(value, pointer);
        if (cut) {
          strings += 1;
          const full = getAt(original, pointer);
          assert.ok(full.startsWith(cut.prefix), `${pointer}: the prefix is the string's start`);
          const kept = codePoints(cut.prefix);
          // At most the limit (tighter when the configured one is not enough: down to 40
          // characters); backing off to a word boundary keeps most of it.
          assert.ok(kept <= MAX_STRING && kept >= 20, `${pointer}: ${kept} characters kept`);
          keptMost = Math.max(keptMost, kept);
          assert.ok(codePoints(full) > kept, `${pointer} of ${codePoints(full)} characters was cut to ${kept}`);
          assert.equal(cut.left, codePoints(full) - kept, `${pointer}: +N chars counts what is left out`);
          // At a word boundary: blanks follow the prefix (or no blank was near the limit).
          assert.ok(/^\s/u.test(full.slice(cut.prefix.length)) || kept === MAX_STRING, `${pointer}: cut inside a word: ${JSON.stringify(full.slice(cut.prefix.length - 10, cut.prefix.length + 10))}`);
        } else if (fold) {
          collapsed += 1;
          folds.push(pointer);
          // Deeper than the limit only inside values given back after the levels, a level a round.
          assert.ok(parsePointer(pointer).length <= MAX_DEPTH + 1 + GIVE_BACK_ROUNDS, `${pointer} is collapsed deeper than ${MAX_DEPTH + 1 + GIVE_BACK_ROUNDS}`);
          const full = getAt(original, pointer);
          assert.equal(fold.size, fold.kind === 'array' ? full.length : Object.keys(full).length);
          assert.equal(fold.kind, Array.isArray(full) ? 'array' : 'object');
        }
      }
      assert.equal(strings, meta.stringsCut);
      assert.equal(collapsed, meta.valuesCollapsed);
      // Values collapse at one depth for all (the configured one or tighter), or deeper inside
      // values given back; above it, only arrays of objects or arrays, all inside the same number
      // of arrays (breadth before depth).
      const isArrayOfContainers = (v) => Array.isArray(v) && v.some((x) => x !== null && typeof x === 'object');
      const depth = Math.min(...folds.filter((p) => !isArrayOfContainers(getAt(original, p))).map((p) => parsePointer(p).length));
      const nestings = new Set();
      const above = folds.filter((p) => parsePointer(p).length < depth);
      for (const pointer of above) {
        const full = getAt(original, pointer);
        assert.ok(isArrayOfContainers(full), `${pointer} above depth ${depth} is an array of containers`);
      }
      // One nesting for all, but inside an array given back (shown where the rule collapsed it).
      const least = Math.min(...above.map((p) => arraysAbove(original, p)));
      for (const pointer of above) {
        const nesting = arraysAbove(original, pointer);
        const tokens = parsePointer(pointer);
        const givenBack = tokens.some((_, k) => {
          const prefix = tokens.slice(0, k).map((x) => `/${x.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
          return arraysAbove(original, prefix) === least && isArrayOfContainers(getAt(original, prefix)) && Array.isArray(getAt(shown, prefix));
        });
        if (nesting === least || !givenBack) nestings.add(nesting);
      }
      assert.ok(nestings.size <= 1, `arrays collapsed inside ${[...nestings]} arrays`);
      t.diagnostic(`strings cut to at most ${keptMost} characters, values collapsed at depth ${depth}, arrays inside ${[...nestings]} arrays`);
    });

    test('the first answer is within the token budget', T, () => {
      assertWithinBudget(meta, 'of the first answer');
    });

    test('everything is reachable: resolveSummarized rebuilds the direct JSON, every answer on the way within the budget', T, async (t) => {
      let answers = 0;
      const rec = await resolveSummarized(proxied.client, first, {
        onAnswer: ({ args, meta: m }) => {
          answers += 1;
          assertWithinBudget(m, `answering ${JSON.stringify({ ...args, cursor: undefined })}`);
        },
      });
      assert.deepEqual(rec.value, original);
      assert.ok(rec.counts.strings > 0 && rec.counts.collapsed > 0 && rec.counts.pages > 0);
      t.diagnostic(`${answers} fetches: ${JSON.stringify(rec.counts)}`);
    });

    test('a path that is not there, or not a pointer, is a one-line isError', T, async () => {
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.resultCursor, path: '/no/such/member' }), /path/);
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.resultCursor, path: 'blobs' }), /pointer/i);
      // ...and the session goes on.
      const r = await fetchOk(proxied, { cursor: meta.resultCursor, path: '/version' });
      const scalar = JSON.parse(textOf(r));
      assert.equal(scalar.value, original.version, 'a scalar comes as {"value": ...}');
      assert.equal(scalar._ctxguard.wrapped, true);
    });
  });

  // ---------------------------------------------------------------- bookings

  describe('20,000 bookings (read_text_file of a JSON array of records)', () => {
    let bookings; // JSON.parse of the direct text
    let first;
    let shown;
    let meta;

    before(async () => {
      bookings = JSON.parse(directText.bookings).bookings;
      first = await read(proxied, files.bookings);
      ({ value: shown, meta } = splitMeta(JSON.parse(textOf(first))));
    });

    test('the first answer shows the first bookings projected, within the budget, and says which fields were kept', T, () => {
      assert.ok(!first.isError);
      assertWithinBudget(meta, 'of the first answer');
      assert.equal(meta.path, '/bookings');
      assert.equal(meta.totalCount, bookings.length);
      assert.equal(shown.bookings.length, meta.pageSize);
      assert.equal(meta.projections?.length, 1, JSON.stringify({ ...meta, hint: undefined, digest: undefined }).slice(0, 400));
      const [projection] = meta.projections;
      const keys = Object.keys(bookings[0]);
      assert.equal(projection.path, '/bookings');
      assert.equal(projection.totalFields, keys.length);
      assert.deepEqual([...projection.projectedFields, ...projection.omittedFields].sort(), [...keys].sort());
      assert.ok(projection.omittedFields.length > 0);
      // Identifiers and status first; the nested blob goes before them.
      assert.ok(projection.projectedFields.includes('id') && projection.projectedFields.includes('status'), projection.projectedFields.join());
      assert.ok(projection.omittedFields.includes('customer'), projection.omittedFields.join());
      shown.bookings.forEach((b, i) => {
        assert.deepEqual(Object.keys(b), keys.filter((k) => projection.projectedFields.includes(k)), `keys of booking ${i}`);
        for (const k of Object.keys(b)) {
          const cut = typeof b[k] === 'string' ? parseCutString(b[k], `/bookings/${i}/${k}`) : null;
          if (cut) assert.ok(bookings[i][k].startsWith(cut.prefix));
          else assert.deepEqual(b[k], bookings[i][k], `booking ${i}.${k}`);
        }
      });
      assert.equal(typeof meta.resultCursor, 'string');
    });

    test('aggregate: counts and exact sums over all 20,000, grouped and filtered, as the data says', T, async () => {
      // Exact cents: amounts are JSON numbers with at most 2 decimals.
      const cents = (v) => BigInt(Math.round(Number(v) * 100));
      const answerCents = (v) => {
        const [whole, fraction = ''] = String(v).split('.');
        const sign = whole.startsWith('-') ? -1n : 1n;
        return sign * (BigInt(whole.replace('-', '')) * 100n + BigInt((fraction + '00').slice(0, 2)));
      };
      const truth = new Map();
      for (const b of bookings) {
        const t = truth.get(b.status) ?? { count: 0, amount: 0n };
        t.count += 1;
        t.amount += cents(b.amount);
        truth.set(b.status, t);
      }
      const { value, meta: m } = splitMeta(JSON.parse(textOf(await fetchOk(proxied, {
        cursor: meta.nextCursor, aggregate: { groupBy: 'status', sum: 'amount', max: 'nights' },
      }))));
      assertWithinBudget(m, 'of the aggregate');
      assert.equal(value.items, bookings.length);
      assert.equal(m.groupsTotal, truth.size);
      for (const group of value.groups) {
        const t = truth.get(group.status);
        assert.equal(group.count, t.count, group.status);
        assert.equal(answerCents(group.sum.amount), t.amount, `${group.status}: ${group.sum.amount}`);
        assert.equal(group.max.nights, Math.max(...bookings.filter((b) => b.status === group.status).map((b) => b.nights)));
      }
      assert.ok(value.groups.every((g, i, all) => i === 0 || all[i - 1].count >= g.count), 'largest first');

      // Filtered by a query, grouped by a nested field and the status.
      const { value: filtered } = splitMeta(JSON.parse(textOf(await fetchOk(proxied, {
        cursor: meta.nextCursor, query: 'status=cancelled', aggregate: { groupBy: ['customer.tier', 'status'] },
      }))));
      const cancelled = bookings.filter((b) => b.status === 'cancelled');
      assert.equal(filtered.items, cancelled.length);
      for (const group of filtered.groups) {
        assert.equal(group.status, 'cancelled');
        assert.equal(group.count, cancelled.filter((b) => b.customer.tier === group['customer.tier']).length);
      }
    });

    test('the summary line and the digest count and range the direct data', T, () => {
      const n = bookings.length;
      assert.ok(codePoints(meta.summary) <= 100, `summary of ${codePoints(meta.summary)} characters`);
      assert.ok(meta.summary.startsWith(`${n} bookings`), meta.summary);
      const statusTop = topCounts(bookings.map((b) => b.status), 5, (a, b) => (a < b ? -1 : a > b ? 1 : 0));
      // "…; status: confirmed 9208, cancelled 3427, …": the pairs shown are the top ones, in order.
      const m = /; status: (.*)$/u.exec(meta.summary);
      assert.ok(m, `the summary names the status counts: ${meta.summary}`);
      const pairs = m[1].split(', ').filter((p) => p !== '…').map((p) => p.split(' '));
      assert.ok(pairs.length >= 1);
      assert.deepEqual(pairs, statusTop.slice(0, pairs.length).map(([v, c]) => [v, String(c)]));

      const { digest } = meta;
      assert.deepEqual(Object.entries(digest.status.top), statusTop, 'status: the top 5 counts, largest first');
      assert.equal(digest.status.distinct, new Set(bookings.map((b) => b.status)).size);
      assert.equal(digest.status.distinct, BOOKING_STATUSES.length);
      const amounts = bookings.map((b) => b.amount);
      assert.deepEqual(digest.amount, { min: Math.min(...amounts), max: Math.max(...amounts) });
      for (const field of ['createdAt', 'checkIn', 'checkOut']) {
        const values = bookings.map((b) => b[field]).sort();
        assert.deepEqual(digest[field], { min: values[0], max: values.at(-1) }, field);
      }
      if (digest.nights) {
        // (JSON.parse puts integer-like keys in ascending order: the wire order cannot be checked here.)
        const nightsTop = topCounts(bookings.map((b) => b.nights), 5, (a, b) => a - b);
        assert.deepEqual(digest.nights.top, Object.fromEntries(nightsTop.map(([v, c]) => [String(v), c])));
        assert.equal(digest.nights.distinct, new Set(bookings.map((b) => b.nights)).size);
      }
      for (const key of Object.keys(digest)) assert.ok(!['id', 'notes', 'customer'].includes(key), `digest of ${key}`);
    });

    test('ctxguard_fetch with `fields` returns exactly those fields (dotted ones reach into the customer)', T, async () => {
      const start = meta.pageSize;
      const fields = ['id', 'amount', 'customer.name'];
      const page = JSON.parse(textOf(await fetchOk(proxied, { cursor: meta.nextCursor, fields })));
      assert.equal(page[META_KEY].offset, start);
      assert.deepEqual(page[META_KEY].fields, fields);
      assert.equal(page[META_KEY].projections, undefined, 'fields chosen: nothing else projected');
      assert.deepEqual(page.items, bookings.slice(start, start + page.items.length).map((b) => project(b, fields)));
      assert.ok(page.items.length >= 1);

      const statuses = JSON.parse(textOf(await fetchOk(proxied, { cursor: meta.nextCursor, fields: ['status'], limit: MAX_PAGE_SIZE })));
      assert.deepEqual(statuses.items, bookings.slice(start, start + MAX_PAGE_SIZE).map((b) => ({ status: b.status })));
      // The next page goes on with the same fields.
      const more = JSON.parse(textOf(await fetchOk(proxied, { cursor: statuses[META_KEY].nextCursor })));
      assert.equal(more[META_KEY].offset, start + MAX_PAGE_SIZE);
      assert.deepEqual(more.items, bookings.slice(start + MAX_PAGE_SIZE, start + 2 * MAX_PAGE_SIZE).map((b) => ({ status: b.status })));
    });

    test('pages fetched without `fields` are projected too, and say so', T, async () => {
      const page = JSON.parse(textOf(await fetchOk(proxied, { cursor: meta.nextCursor })));
      const pm = page[META_KEY];
      assert.equal(pm.offset, meta.pageSize);
      const keys = Object.keys(bookings[0]);
      if (pm.projections) {
        assert.equal(pm.projections[0].path, '/bookings');
        for (const b of page.items) assert.deepEqual(Object.keys(b), keys.filter((k) => pm.projections[0].projectedFields.includes(k)));
      } else {
        for (const b of page.items) assert.deepEqual(Object.keys(b), keys, 'unprojected items are whole');
      }
      page.items.forEach((b, i) => assert.equal(b.id, bookings[pm.offset + i].id));
    });

    test('--project \'read_*=id,status\' keeps exactly id and status', T, async (t) => {
      const r = await read(ruled, files.bookings);
      const { value, meta: m } = splitMeta(JSON.parse(textOf(r)));
      assertWithinBudget(m, 'of the first answer');
      assert.equal(m.projections?.length, 1);
      const [projection] = m.projections;
      assert.deepEqual(projection.projectedFields, ['id', 'status']);
      assert.deepEqual([...projection.omittedFields].sort(), Object.keys(bookings[0]).filter((k) => k !== 'id' && k !== 'status').sort());
      assert.equal(projection.totalFields, Object.keys(bookings[0]).length);
      assert.deepEqual(value.bookings, bookings.slice(0, m.pageSize).map((b) => ({ id: b.id, status: b.status })));
      assert.ok(m.pageSize >= meta.pageSize, `two fields show no fewer records (${m.pageSize} vs ${meta.pageSize})`);
      t.diagnostic(`${m.pageSize} records shown with the rule, ${meta.pageSize} without`);
      // Fetched pages follow the rule too.
      const page = JSON.parse(textOf(await fetchOk(ruled, { cursor: m.nextCursor })));
      if (page[META_KEY].projections) assert.deepEqual(page[META_KEY].projections[0].projectedFields, ['id', 'status']);
      page.items.forEach((b, i) => assert.equal(b.id, bookings[m.pageSize + i].id));
    });

    const QUERIES = [
      { query: 'status=cancelled', match: (b) => asciiLower(b.status) === 'cancelled' },
      { query: 'customer.name~smith', match: (b) => asciiLower(b.customer.name).includes('smith') },
      { query: 'balcony', match: (b) => anywhere(b, 'balcony') },
      { query: 'status!=confirmed nights=3 customer.tier=GOLD', match: (b) => b.status !== 'confirmed' && b.nights === 3 && b.customer.tier === 'gold' },
      { query: 'customer.address.city=québec', match: (b) => b.customer.address.city === 'Québec' },
      { query: 'status=archived', match: () => false },
    ];
    for (const { query, match } of QUERIES) {
      test(`query ${JSON.stringify(query)} finds exactly the bookings a JS filter of the direct data finds`, T, async (t) => {
        const expected = [];
        bookings.forEach((b, i) => { if (match(b)) expected.push(i); });
        const got = await queryItems(proxied, { cursor: meta.nextCursor, query, limit: MAX_PAGE_SIZE });
        assert.equal(got.metas[0].totalMatches, expected.length);
        assert.deepEqual(got.indices, expected);
        got.items.forEach((item, k) => assert.equal(item.id, bookings[got.indices[k]].id, `item ${k} is booking ${got.indices[k]}`));
        for (const m of got.metas) assert.equal(m.path, '/bookings');
        t.diagnostic(`${expected.length} matches in ${got.metas.length} pages`);
      });
    }

    test('a query on a string value searches it or says it cannot; it is never silently ignored', T, async () => {
      const result = await fetchRaw(proxied, { cursor: meta.resultCursor, path: '/generatedAt', query: 'no-such-text' });
      if (result.isError) {
        assertOneLineError(result, /query/);
      } else {
        const { text, meta: m } = splitTextPiece(result);
        assert.equal(m.query, 'no-such-text', `the answer does not say it searched: ${JSON.stringify(m)}`);
        assert.ok(!text.includes('2024-06-01'), 'nothing matches, nothing is shown');
      }
    });

    test('a bad query is a one-line isError and the session goes on', T, async () => {
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.nextCursor, query: 'status=' }), /empty field or value/);
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.nextCursor, query: '"open' }), /quote/);
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.nextCursor, query: '   ' }), /empty/);
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.nextCursor, query: 42 }), /query/);
      // A query needs an array or a text: an object is neither.
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.resultCursor, query: 'x' }), /query/);
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.resultCursor, path: '/bookings/3/customer', query: 'x' }), /query/);
      const ok = await queryItems(proxied, { cursor: meta.nextCursor, query: 'status=no_show', limit: 5 });
      assert.equal(ok.metas[0].totalMatches, bookings.filter((b) => b.status === 'no_show').length);
    });
  });

  // ---------------------------------------------------------------- bad cursors

  describe('--tables: 5,000 flat records (read_text_file)', () => {
    test('they go out as {columns, rows}, more per answer, and resolveSummarized rebuilds them exactly', T, async (t) => {
      const [plainFirst, tableFirst] = [await read(proxied, files.rows), await read(tabled, files.rows)];
      const plain = splitMeta(JSON.parse(textOf(plainFirst)));
      const table = splitMeta(JSON.parse(textOf(tableFirst)));
      assert.ok(Array.isArray(plain.value.rows), 'without --tables the records are objects');
      assert.deepEqual(table.meta.tables, ['/rows']);
      assert.deepEqual(table.value.rows.columns, ['id', 'status', 'amount', 'checkIn', 'nights']);
      assert.equal(table.value.rows.rows.length, table.meta.pageSize);
      assertWithinBudget(table.meta, 'of the first answer with --tables');
      assert.ok(table.meta.pageSize > plain.meta.pageSize, `${table.meta.pageSize} rows as a table, ${plain.meta.pageSize} as objects`);
      const rec = await resolveSummarized(tabled.client, tableFirst, {
        onAnswer: ({ meta }) => assertWithinBudget(meta, 'of a page with --tables'),
      });
      assert.deepEqual(rec.value, JSON.parse(textOf(await read(direct, files.rows))));
      t.diagnostic(`${table.meta.pageSize} rows per answer as a table, ${plain.meta.pageSize} as objects; ${rec.fetches} fetches`);
    });
  });

  describe('tampered and misplaced cursors', () => {
    test('a tampered or garbled cursor with startLine or query is a one-line isError; the next call works', T, async () => {
      const first = await read(proxied, files.log);
      const cursor = splitTextPiece(first).meta.nextCursor;
      const tampered = alterCursor(cursor);
      assertOneLineError(await fetchRaw(proxied, { cursor: tampered, startLine: 1, endLine: 3 }), /cursor/);
      assertOneLineError(await fetchRaw(proxied, { cursor: tampered, query: 'ERROR' }), /cursor/);
      assertOneLineError(await fetchRaw(proxied, { cursor: 'not a cursor at all', startLine: 1 }), /cursor/);
      assertOneLineError(await fetchRaw(proxied, { cursor: cursor.slice(0, -6), query: 'ERROR' }), /cursor/);
      assertOneLineError(await fetchRaw(proxied, { startLine: 1, endLine: 2 }), /cursor/);
      const got = await fetchLines(proxied, cursor, { startLine: 1, endLine: 2 });
      assert.equal(got.text, linesText(data.log.lines, 1, 2));
    });

    test('line ranges on a JSON result are a one-line isError', T, async () => {
      const r = await read(proxied, files.bookings);
      const { meta } = splitMeta(JSON.parse(textOf(r)));
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.nextCursor, startLine: 1, endLine: 5 }), /text/);
      assertOneLineError(await fetchRaw(proxied, { cursor: meta.resultCursor, startLine: 1 }), /text/);
    });
  });
});
