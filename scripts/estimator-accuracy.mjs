#!/usr/bin/env node
// Measures ctxguard's token estimator against Claude's published tokenizer on a corpus of recorded
// answers, and prints the error distribution (FR-014, SC-008).
//
//   node scripts/estimator-accuracy.mjs CORPUS.jsonl[.gz] ... [--json] [--check]
//        [--by category|tool|none] [--cli PATH] [--reestimate]
//
// Input: JSON Lines (gzip if the name ends in .gz), one recorded answer per line:
//   {"text": "...", "tokens"?: N, "estimated_tokens"?: N, "category"?: "...", "source"?: "...", "tool"?: "..."}
// Other fields are ignored, so the proxy's answer samples ({"time", "tool", "estimated_tokens",
// "bytes", "text"}) and the corpus written by tests/e2e/estimator-accuracy.test.mjs
// ({category, source, tokens, text}) are read as they are.
//   - `tokens`, the real count: where missing, counted with @anthropic-ai/tokenizer (resolved
//     from tests/e2e/node_modules; `countTokens`: NFKC, then Claude's BPE);
//   - `estimated_tokens`: where missing (or with --reestimate, for every line), the estimate of
//     estimate_tokens_cli (default build/tests/estimate_tokens_cli, or --cli PATH), run once on
//     all such lines.
// A line with 0 real tokens (an empty text) has no ratio: it is counted and left out.
//
// For the estimate and, for comparison, the seeds' rule ceil(chars / 4 * 1.2), over all lines and
// per group (--by category, the default; --by tool: `tool`, else the tool named by `source`;
// --by none), it prints the distribution of ratio = estimate / actual: count, min, max,
// percentiles p1..p99 (nearest rank: the sorted value at index round(q * (n - 1))), a histogram
// of the relative error (estimate - actual) / actual, the share within ±10%, ±15%, ±20%
// (inclusive), the share under-estimated (estimate < actual) and the worst under-estimate.
// Shares and buckets are decided on the integers (estimate vs actual), not on rounded ratios.
// SC-008: the estimate is within 20% of the real count for at least 90% of the answers.
//
// --json prints the same as one JSON document. Exit 0; 1 if a corpus is unreadable or empty, a
// line is malformed (the message names file and line), or with --check when SC-008 fails over
// all lines; 2 on a usage error.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_CLI = path.join(REPO, 'build', 'tests', 'estimate_tokens_cli');
const PERCENTILES = [1, 5, 25, 50, 75, 95, 99];
const WITHIN = [10, 15, 20];
// Histogram of the relative error in percent. A bucket holds lo <= e < hi, except that the
// bucket ending at +20 holds +20 itself (so the buckets from -20 to +20 are exactly "within
// ±20%") and the open buckets hold e < -20 and e > +20. The buckets below 0 are the
// under-estimates.
const EDGES = [-20, -10, -5, 0, 5, 10, 15, 20];
const SC008 = { within_percent: 20, target_share: 0.9 };
const GROUPINGS = ['category', 'tool', 'none'];
const SERVER_PREFIXES = new Set(['memory', 'everything', 'gnupg', 'filesystem']);

class UsageError extends Error {}
class InputError extends Error {}

const USAGE = 'usage: estimator-accuracy.mjs CORPUS.jsonl[.gz] ... [--json] [--check] '
  + '[--by category|tool|none] [--cli PATH] [--reestimate]';

function parseArgs(argv) {
  const args = { files: [], json: false, check: false, by: 'category', cli: null, reestimate: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new UsageError(`${a} needs a value`);
      return argv[++i];
    };
    if (a === '--json') args.json = true;
    else if (a === '--check') args.check = true;
    else if (a === '--reestimate') args.reestimate = true;
    else if (a === '--cli') args.cli = path.resolve(value());
    else if (a === '--by') args.by = value();
    else if (a === '-h' || a === '--help') throw new UsageError('');
    else if (a.startsWith('--')) throw new UsageError(`unknown option ${a}`);
    else args.files.push(a);
  }
  if (!GROUPINGS.includes(args.by)) throw new UsageError(`--by must be one of ${GROUPINGS.join(', ')}`);
  if (args.files.length === 0) throw new UsageError('no corpus given');
  return args;
}

// ---------------------------------------------------------------- reading

const isCount = (v) => Number.isSafeInteger(v) && v >= 0;

/** The lines of one corpus file as rows {text, tokens?, estimate?, category, source, tool, file, line}. */
function readCorpus(file) {
  let data;
  try {
    data = fs.readFileSync(file);
    if (file.endsWith('.gz')) data = zlib.gunzipSync(data);
  } catch (e) {
    throw new InputError(`${file}: cannot read: ${e.message}`);
  }
  const text = data.toString('utf8');
  const rows = [];
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n].trim();
    if (line === '') continue;
    const where = `${file}:${n + 1}`;
    let v;
    try {
      v = JSON.parse(line);
    } catch (e) {
      throw new InputError(`${where}: not JSON (${e.message})`);
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new InputError(`${where}: not a JSON object`);
    if (typeof v.text !== 'string') throw new InputError(`${where}: no "text" string`);
    for (const key of ['tokens', 'estimated_tokens']) {
      if (v[key] !== undefined && !isCount(v[key])) throw new InputError(`${where}: "${key}" is not a non-negative integer`);
    }
    for (const key of ['category', 'source', 'tool']) {
      if (v[key] !== undefined && typeof v[key] !== 'string') throw new InputError(`${where}: "${key}" is not a string`);
    }
    rows.push({
      text: v.text,
      tokens: v.tokens,
      estimate: v.estimated_tokens,
      category: v.category ?? '(none)',
      source: v.source,
      tool: v.tool ?? toolOfSource(v.source),
      file,
      line: n + 1,
    });
  }
  return rows;
}

/**
 * The tool a `source` of the e2e corpus names: its first word ("read_text_file zod/README.md"),
 * or its first two where the first is a server ("memory open_nodes ...", "everything echo ...").
 */
function toolOfSource(source) {
  if (typeof source !== 'string' || source.trim() === '') return '(none)';
  const words = source.replace(/ \([^)]*\)/g, '').trim().split(/\s+/);
  return SERVER_PREFIXES.has(words[0]) && words.length > 1 ? `${words[0]} ${words[1]}` : words[0];
}

// ---------------------------------------------------------------- counting

/** Claude's count of each text (@anthropic-ai/tokenizer's countTokens, one tokenizer reused). */
function countWithTokenizer(texts) {
  const require = createRequire(path.join(REPO, 'tests', 'e2e', 'package.json'));
  let tokenizerModule;
  try {
    tokenizerModule = require('@anthropic-ai/tokenizer');
  } catch (e) {
    throw new InputError(`lines without "tokens" need @anthropic-ai/tokenizer (npm ci in tests/e2e): ${e.message}`);
  }
  const tokenizer = tokenizerModule.getTokenizer();
  try {
    return texts.map((t) => tokenizer.encode(t.normalize('NFKC'), 'all').length);
  } finally {
    tokenizer.free();
  }
}

/** estimate_tokens_cli's estimate of each text, in one run. */
function estimateWithCli(cli, texts) {
  if (!fs.existsSync(cli)) {
    throw new InputError(`lines without "estimated_tokens" need estimate_tokens_cli: ${cli} not found (build it, or pass --cli PATH)`);
  }
  const input = texts.map((text) => JSON.stringify({ text })).join('\n') + '\n';
  const r = spawnSync(cli, [], { input, maxBuffer: 1 << 30, encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new InputError(`${cli} failed: ${r.error?.message ?? r.stderr.trim()}`);
  const out = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l).estimate);
  if (out.length !== texts.length) throw new InputError(`${cli}: ${out.length} estimates for ${texts.length} texts`);
  return out;
}

/** The seeds' rule: 4 characters (UTF-16 code units) per token plus a 20% margin. */
const seedsRule = (text) => Math.ceil((text.length / 4) * 1.2);

// ---------------------------------------------------------------- statistics

/** Nearest-rank quantile of sorted values: the value at index round(q * (n - 1)). */
function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(q * (sorted.length - 1) + 0.5)))];
}

/** 100 * (estimate - actual) compared with edge * actual: -1, 0 or 1, exactly (integers). */
const comparePercent = (estimate, actual, edge) => Math.sign(100 * (estimate - actual) - edge * actual);

function bucketOf(estimate, actual) {
  // Index into the EDGES.length + 1 buckets.
  if (comparePercent(estimate, actual, EDGES[0]) < 0) return 0;
  for (let i = 1; i < EDGES.length; i++) {
    const c = comparePercent(estimate, actual, EDGES[i]);
    if (c < 0 || (c === 0 && i === EDGES.length - 1)) return i;
  }
  return EDGES.length;
}

const pct = (v) => `${v > 0 ? '+' : ''}${v}%`;
const BUCKETS = Array.from({ length: EDGES.length + 1 }, (_, i) => {
  const from = i === 0 ? null : EDGES[i - 1];
  const to = i === EDGES.length ? null : EDGES[i];
  const label = from === null ? `< ${pct(to)}` : to === null ? `> ${pct(from)}` : `${pct(from)} .. ${pct(to)}`;
  return { label, from, to };
});

const round = (v, digits = 4) => (v === null ? null : Number(v.toFixed(digits)));

/** The distribution of estimate / actual over `rows`, the estimate taken by `estimateOf`. */
function distribution(rows, estimateOf) {
  const items = rows.map((r) => ({ row: r, estimate: estimateOf(r), ratio: estimateOf(r) / r.tokens }));
  const n = items.length;
  const sorted = items.map((i) => i.ratio).sort((a, b) => a - b);
  const share = (k) => (n === 0 ? null : round(k / n, 6));
  const within = Object.fromEntries(WITHIN.map((w) => {
    const k = items.filter((i) => comparePercent(i.estimate, i.row.tokens, w) <= 0
      && comparePercent(i.estimate, i.row.tokens, -w) >= 0).length;
    return [`${w}`, share(k)];
  }));
  const counts = new Array(BUCKETS.length).fill(0);
  for (const i of items) counts[bucketOf(i.estimate, i.row.tokens)]++;
  const under = items.filter((i) => i.estimate < i.row.tokens);
  let worst = null;
  for (const i of under) if (worst === null || i.ratio < worst.ratio) worst = i;
  return {
    count: n,
    min: n ? round(sorted[0]) : null,
    max: n ? round(sorted[n - 1]) : null,
    percentiles: Object.fromEntries(PERCENTILES.map((p) => [`p${p}`, n ? round(quantile(sorted, p / 100)) : null])),
    histogram: BUCKETS.map((b, k) => ({ ...b, count: counts[k], share: share(counts[k]) })),
    within,
    under: { count: under.length, share: share(under.length) },
    worst_under: worst && {
      ratio: round(worst.ratio),
      estimate: worst.estimate,
      actual: worst.row.tokens,
      category: worst.row.category,
      tool: worst.row.tool,
      source: worst.row.source ?? null,
      file: worst.row.file,
      line: worst.row.line,
    },
    sc008_pass: n > 0 && within[`${SC008.within_percent}`] >= SC008.target_share,
  };
}

function measure(rows) {
  return { estimate: distribution(rows, (r) => r.estimate), seeds_rule: distribution(rows, (r) => seedsRule(r.text)) };
}

// ---------------------------------------------------------------- report

function report(args, rows, meta) {
  const groups = args.by === 'none' ? [] : [...new Set(rows.map((r) => r[args.by]))].sort()
    .map((name) => ({ name, ...measure(rows.filter((r) => r[args.by] === name)) }));
  const overall = measure(rows);
  return {
    files: args.files,
    samples: rows.length + meta.zeroTokens,
    measured: rows.length,
    skipped_zero_tokens: meta.zeroTokens,
    tokens_from: { corpus: meta.tokensFromCorpus, tokenizer: meta.tokensCounted, tokenizer_name: '@anthropic-ai/tokenizer' },
    estimates_from: { corpus: meta.estimatesFromCorpus, cli: meta.estimatesRun, cli_path: meta.estimatesRun ? meta.cli : null },
    ratio: 'estimate / actual tokens',
    sc008: { ...SC008, share: overall.estimate.within[`${SC008.within_percent}`], pass: overall.estimate.sc008_pass },
    by: args.by,
    overall,
    groups,
  };
}

const f3 = (v) => (v === null ? '-' : v.toFixed(3));
const p1 = (v) => (v === null ? '-' : `${(100 * v).toFixed(1)}%`);

function printDetail(title, d) {
  const e = d.estimate;
  const s = d.seeds_rule;
  const out = [`${title}: ${e.count} answers`, `  ${''.padEnd(28)}${'estimate'.padStart(10)}${"seeds' rule".padStart(13)}`];
  const row = (name, a, b) => out.push(`  ${name.padEnd(28)}${a.padStart(10)}${b.padStart(13)}`);
  row('min', f3(e.min), f3(s.min));
  for (const p of PERCENTILES) row(`p${p}`, f3(e.percentiles[`p${p}`]), f3(s.percentiles[`p${p}`]));
  row('max', f3(e.max), f3(s.max));
  for (const w of WITHIN) row(`within ±${w}%`, p1(e.within[w]), p1(s.within[w]));
  row('under (estimate < actual)', p1(e.under.share), p1(s.under.share));
  row('worst under', f3(e.worst_under?.ratio ?? null), f3(s.worst_under?.ratio ?? null));
  row(`SC-008 (±${SC008.within_percent}% for ${100 * SC008.target_share}%)`, e.sc008_pass ? 'pass' : 'FAIL', s.sc008_pass ? 'pass' : 'FAIL');
  if (e.worst_under) {
    const w = e.worst_under;
    out.push(`  worst under-estimate: ${w.estimate} for ${w.actual} tokens, ${w.category}, ${w.source ?? w.tool} (${w.file}:${w.line})`);
  }
  out.push('  relative error (estimate - actual) / actual:');
  const widest = Math.max(1, ...e.histogram.map((b) => b.count));
  e.histogram.forEach((b, k) => {
    const bar = '#'.repeat(Math.round((40 * b.count) / widest)) || (b.count ? '.' : '');
    out.push(`  ${b.label.padStart(13)} ${String(b.count).padStart(6)} ${p1(b.share).padStart(6)} ${bar.padEnd(40)}`
      + `  seeds' rule ${String(s.histogram[k].count).padStart(5)}`);
  });
  return out.join('\n');
}

function printGroups(result) {
  const out = [];
  const widest = Math.max(8, ...result.groups.map((g) => g.name.length));
  const statHeader = ['n', 'min', 'p1', 'p5', 'p50', 'p95', 'p99', 'max', '±10%', '±15%', '±20%', 'under', 'worst', 'SC-008'];
  const statRow = (name, d) => [name, String(d.count), f3(d.min), ...['p1', 'p5', 'p50', 'p95', 'p99'].map((p) => f3(d.percentiles[p])),
    f3(d.max), p1(d.within['10']), p1(d.within['15']), p1(d.within['20']), p1(d.under.share), f3(d.worst_under?.ratio ?? null),
    d.sc008_pass ? 'pass' : 'FAIL'];
  const table = (title, key, header, rowOf) => {
    const rows = [[result.by, ...header], ...result.groups.map((g) => rowOf(g.name, g[key])), rowOf('all', result.overall[key])];
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
    out.push(title);
    for (const r of rows) out.push(`  ${r.map((cell, c) => (c === 0 ? cell.padEnd(Math.max(widest, widths[c])) : cell.padStart(widths[c]))).join('  ')}`);
  };
  table(`\nby ${result.by}, estimate / actual:`, 'estimate', statHeader, statRow);
  table(`\nby ${result.by}, seeds' rule / actual:`, 'seeds_rule', statHeader, statRow);
  const histRow = (name, d) => [name, String(d.count), ...d.histogram.map((b) => String(b.count))];
  table(`\nby ${result.by}, estimate: answers per bucket of relative error:`, 'estimate', ['n', ...BUCKETS.map((b) => b.label.replace(/ /g, ''))], histRow);
  return out.join('\n');
}

function printText(result) {
  const t = result.tokens_from;
  const e = result.estimates_from;
  const lines = [
    `corpus: ${result.files.join(', ')}: ${result.samples} answers`
      + (result.skipped_zero_tokens ? ` (${result.skipped_zero_tokens} with 0 tokens left out)` : ''),
    `actual tokens: ${t.corpus} recorded, ${t.tokenizer} counted with ${t.tokenizer_name}; `
      + `estimates: ${e.corpus} recorded, ${e.cli} from ${e.cli_path ?? 'estimate_tokens_cli'}`,
    `ratio = estimate / actual; SC-008: within ±${SC008.within_percent}% for ${100 * SC008.target_share}% of the answers: `
      + `${p1(result.sc008.share)}, ${result.sc008.pass ? 'pass' : 'FAIL'}`,
    '',
    printDetail('all', result.overall),
  ];
  if (result.groups.length) lines.push(printGroups(result));
  return lines.join('\n');
}

// ---------------------------------------------------------------- main

function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    if (e.message) console.error(`estimator-accuracy: ${e.message}`);
    console.error(USAGE);
    return e.message ? 2 : 0;
  }
  try {
    const all = args.files.flatMap(readCorpus);
    if (all.length === 0) throw new InputError(`no answers in ${args.files.join(', ')}`);
    const needTokens = all.filter((r) => r.tokens === undefined);
    const tokensFromCorpus = all.length - needTokens.length;
    if (needTokens.length) countWithTokenizer(needTokens.map((r) => r.text)).forEach((t, i) => { needTokens[i].tokens = t; });
    const needEstimate = args.reestimate ? all : all.filter((r) => r.estimate === undefined);
    const estimatesFromCorpus = all.length - needEstimate.length;
    const cli = args.cli ?? DEFAULT_CLI;
    if (needEstimate.length) estimateWithCli(cli, needEstimate.map((r) => r.text)).forEach((v, i) => { needEstimate[i].estimate = v; });
    const rows = all.filter((r) => r.tokens > 0);
    if (rows.length === 0) throw new InputError(`no answer with a token count above 0 in ${args.files.join(', ')}`);
    const result = report(args, rows, {
      zeroTokens: all.length - rows.length,
      tokensFromCorpus,
      tokensCounted: needTokens.length,
      estimatesFromCorpus,
      estimatesRun: needEstimate.length,
      cli,
    });
    console.log(args.json ? JSON.stringify(result, null, 2) : printText(result));
    if (args.check && !result.sc008.pass) {
      console.error(`estimator-accuracy: SC-008 fails: ${(100 * result.sc008.share).toFixed(1)}% of the answers within `
        + `±${SC008.within_percent}%, fewer than ${100 * SC008.target_share}%`);
      return 1;
    }
    return 0;
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    console.error(`estimator-accuracy: ${e.message}`);
    return 1;
  }
}

process.exitCode = main();
