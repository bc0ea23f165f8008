// scripts/estimator-accuracy.mjs, the estimator's error distribution: on a hand-made corpus whose
// percentiles, buckets and shares are known, on the recorded corpus
// (tests/e2e/corpus/estimator-corpus.jsonl.gz) against a direct computation with
// estimate_tokens_cli, and on bad input (the line is named). The parts that need
// estimate_tokens_cli are skipped without it (CTXGUARD_ESTIMATE_BIN, or build/tests/).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

import { countTokens } from '@anthropic-ai/tokenizer';

import { E2E_DIR, makeTempDir, removeDir } from './lib/harness.mjs';

const REPO = path.resolve(E2E_DIR, '..', '..');
const SCRIPT = path.join(REPO, 'scripts', 'estimator-accuracy.mjs');
const CORPUS = path.join(E2E_DIR, 'corpus', 'estimator-corpus.jsonl.gz');
const CLI = path.resolve(process.env.CTXGUARD_ESTIMATE_BIN ?? path.join(REPO, 'build', 'tests', 'estimate_tokens_cli'));
const NO_CLI = fs.existsSync(CLI) ? false : `estimate_tokens_cli not found at ${CLI} (build it, or set CTXGUARD_ESTIMATE_BIN)`;

function run(...args) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function runJson(...args) {
  const r = run(...args, '--json');
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** The same nearest-rank rule as the script, written out: sorted[round(q * (n - 1))]. */
const nearestRank = (sorted, q) => sorted[Math.round(q * (sorted.length - 1))];
const seeds = (text) => Math.ceil((text.length / 4) * 1.2);
const x = (n) => 'x'.repeat(n);

// Ratios 0.8 (-20%, inclusive edge), 0.9 (-10%), 1.0, 1.25 (a proxy answer sample, with `tokens`
// added), 1.2 (+20%, inclusive edge); line 2 is blank, so the lines are 1, 3, 4, 5, 6. The seeds'
// rule gives 12, 30, 6, 3, 10 tokens for 40, 100, 20, 7, 33 characters.
const HAND_MADE = [
  { category: 'a', text: x(40), tokens: 100, estimated_tokens: 80 },
  null,
  { category: 'b', source: 'memory open_nodes zod', text: x(100), tokens: 50, estimated_tokens: 45 },
  { category: 'a', source: 'read_text_file a/b.json (minified)', text: x(20), tokens: 10, estimated_tokens: 10 },
  { time: '2025-06-01T10:00:00.000Z', tool: 'read_file', estimated_tokens: 5, bytes: 7, text: x(7), tokens: 4 },
  { category: 'b', text: x(33), tokens: 100, estimated_tokens: 120 },
].map((l) => (l ? JSON.stringify(l) : '')).join('\n') + '\n';

describe('scripts/estimator-accuracy.mjs', () => {
  let tmp;
  const file = (name, content) => {
    const p = path.join(tmp, name);
    fs.writeFileSync(p, content);
    return p;
  };

  before(() => { tmp = makeTempDir('ctxguard-estimator-script-'); });
  after(() => removeDir(tmp));

  test('a hand-made corpus: percentiles, buckets, shares and the worst under-estimate as computed by hand', () => {
    const corpus = file('hand.jsonl', HAND_MADE);
    const r = runJson(corpus);
    assert.equal(r.samples, 5);
    assert.equal(r.measured, 5);
    assert.deepEqual(r.tokens_from, { corpus: 5, tokenizer: 0, tokenizer_name: '@anthropic-ai/tokenizer' });
    assert.deepEqual(r.estimates_from, { corpus: 5, cli: 0, cli_path: null });
    const e = r.overall.estimate;
    assert.equal(e.count, 5);
    assert.equal(e.min, 0.8);
    assert.equal(e.max, 1.25);
    // Sorted 0.8 0.9 1.0 1.2 1.25: index round(q * 4).
    assert.deepEqual(e.percentiles, { p1: 0.8, p5: 0.8, p25: 0.9, p50: 1, p75: 1.2, p95: 1.25, p99: 1.25 });
    assert.deepEqual(e.histogram.map((b) => [b.label, b.count]), [
      ['< -20%', 0], ['-20% .. -10%', 1], ['-10% .. -5%', 1], ['-5% .. 0%', 0], ['0% .. +5%', 1],
      ['+5% .. +10%', 0], ['+10% .. +15%', 0], ['+15% .. +20%', 1], ['> +20%', 1],
    ]);
    assert.deepEqual(e.histogram.map((b) => b.share), [0, 0.2, 0.2, 0, 0.2, 0, 0, 0.2, 0.2]);
    assert.deepEqual(e.within, { 10: 0.4, 15: 0.4, 20: 0.8 });
    assert.deepEqual(e.under, { count: 2, share: 0.4 });
    assert.deepEqual(e.worst_under, { ratio: 0.8, estimate: 80, actual: 100, category: 'a', tool: '(none)', source: null, file: corpus, line: 1 });
    assert.equal(e.sc008_pass, false);
    assert.deepEqual(r.sc008, { within_percent: 20, target_share: 0.9, share: 0.8, pass: false });

    // The seeds' rule: 12/100, 30/50, 6/10, 3/4, 10/100.
    const s = r.overall.seeds_rule;
    assert.deepEqual(s.percentiles, { p1: 0.1, p5: 0.1, p25: 0.12, p50: 0.6, p75: 0.6, p95: 0.75, p99: 0.75 });
    assert.deepEqual(s.under, { count: 5, share: 1 });
    assert.deepEqual([s.worst_under.ratio, s.worst_under.line], [0.1, 6]);
    assert.equal(s.histogram[0].count, 5);

    // By category ("(none)" for the proxy's line), sorted by name.
    assert.equal(r.by, 'category');
    assert.deepEqual(r.groups.map((g) => [g.name, g.estimate.count, g.estimate.percentiles.p50, g.estimate.within['20'], g.estimate.under.count]), [
      ['(none)', 1, 1.25, 0, 0], ['a', 2, 1, 1, 1], ['b', 2, 1.2, 1, 1],
    ]);
  });

  test('grouping by tool (the `tool` field, else the tool a `source` names) and no grouping', () => {
    const corpus = file('hand.jsonl', HAND_MADE);
    const byTool = runJson(corpus, '--by', 'tool');
    assert.deepEqual(byTool.groups.map((g) => [g.name, g.estimate.count]), [
      ['(none)', 2], ['memory open_nodes', 1], ['read_file', 1], ['read_text_file', 1],
    ]);
    const none = runJson(corpus, '--by', 'none');
    assert.deepEqual(none.groups, []);
    assert.deepEqual(none.overall, byTool.overall);
  });

  test('gzip input gives the same figures; the text report carries them too', () => {
    const plain = runJson(file('hand.jsonl', HAND_MADE));
    const gz = runJson(file('hand.jsonl.gz', zlib.gzipSync(HAND_MADE)));
    for (const g of [plain, gz]) {
      delete g.files;
      g.overall.estimate.worst_under.file = g.overall.seeds_rule.worst_under.file = null;
      for (const group of g.groups) for (const d of [group.estimate, group.seeds_rule]) if (d.worst_under) d.worst_under.file = null;
    }
    assert.deepEqual(gz, plain);
    const text = run(path.join(tmp, 'hand.jsonl'));
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stdout, /SC-008: within ±20% for 90% of the answers: 80\.0%, FAIL/);
    assert.match(text.stdout, /^ {2}p50 +1\.000 +0\.600$/m);
    assert.match(text.stdout, /^ +\+15% \.\. \+20% +1 +20\.0% #+ +seeds' rule +0$/m);
    assert.match(text.stdout, /worst under-estimate: 80 for 100 tokens, a, .*hand\.jsonl:1\)/);
  });

  test('--check exits 1 when fewer than 90% are within ±20%, 0 when enough are', () => {
    const failing = run(file('hand.jsonl', HAND_MADE), '--check');
    assert.equal(failing.status, 1);
    assert.match(failing.stderr, /SC-008 fails: 80\.0% of the answers within ±20%/);
    const lines = Array.from({ length: 10 }, (_, i) => JSON.stringify({ text: x(10), tokens: 100, estimated_tokens: i === 0 ? 50 : 110 }));
    const passing = run(file('ninety.jsonl', lines.join('\n')), '--check');
    assert.equal(passing.status, 0, passing.stderr);
  });

  test('lines without `tokens` are counted with @anthropic-ai/tokenizer; 0-token lines are left out', () => {
    const texts = ['Hello, world! {"a": [1, 2, 3]}', 'Grüße aus Köln — 東京支店の注文を処理しました'];
    const lines = texts.map((text) => JSON.stringify({ tool: 't', text, estimated_tokens: 2 * countTokens(text) }));
    lines.push(JSON.stringify({ tool: 't', text: '', estimated_tokens: 1 }));
    const r = runJson(file('untokenized.jsonl', lines.join('\n')));
    assert.deepEqual([r.samples, r.measured, r.skipped_zero_tokens], [3, 2, 1]);
    assert.deepEqual(r.tokens_from, { corpus: 0, tokenizer: 3, tokenizer_name: '@anthropic-ai/tokenizer' });
    assert.equal(r.overall.estimate.min, 2);
    assert.equal(r.overall.estimate.max, 2);
  });

  test('a bad line: exit 1 and a message naming the file and the line', () => {
    const cases = [
      ['{"text": "a", "tokens": 1}\n\n{not json}\n', /bad\.jsonl:3: not JSON/],
      ['{"text": "a", "tokens": 1}\n{"tokens": 1}\n', /bad\.jsonl:2: no "text" string/],
      ['[1, 2]\n', /bad\.jsonl:1: not a JSON object/],
      ['{"text": "a", "tokens": "12"}\n', /bad\.jsonl:1: "tokens" is not a non-negative integer/],
      ['{"text": "a", "tokens": 3, "estimated_tokens": 2.5}\n', /bad\.jsonl:1: "estimated_tokens" is not a non-negative integer/],
    ];
    for (const [content, message] of cases) {
      const r = run(file('bad.jsonl', content), '--json');
      assert.equal(r.status, 1, content);
      assert.match(r.stderr, message);
      assert.equal(r.stdout, '');
    }
  });

  test('an empty or unreadable corpus: exit 1 with a message; a usage error: exit 2', () => {
    const empty = run(file('empty.jsonl', '\n\n'));
    assert.equal(empty.status, 1);
    assert.match(empty.stderr, /no answers in .*empty\.jsonl/);
    const missing = run(path.join(tmp, 'missing.jsonl'));
    assert.equal(missing.status, 1);
    assert.match(missing.stderr, /missing\.jsonl: cannot read/);
    const notGzip = run(file('plain.jsonl.gz', HAND_MADE));
    assert.equal(notGzip.status, 1);
    assert.match(notGzip.stderr, /plain\.jsonl\.gz: cannot read/);
    assert.equal(run().status, 2);
    assert.equal(run(file('hand.jsonl', HAND_MADE), '--by', 'server').status, 2);
  });

  test('the recorded corpus: the script agrees with estimate_tokens_cli and the seeds\' rule computed directly', { skip: NO_CLI }, () => {
    const rows = zlib.gunzipSync(fs.readFileSync(CORPUS)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const cli = spawnSync(CLI, [], { input: rows.map((r) => JSON.stringify({ text: r.text })).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28 });
    assert.equal(cli.status, 0, cli.stderr);
    const estimates = cli.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l).estimate);
    assert.equal(estimates.length, rows.length);

    const r = runJson(CORPUS, '--cli', CLI);
    assert.equal(r.samples, rows.length);
    assert.ok(r.samples >= 1000, `${r.samples} samples`);
    assert.deepEqual(r.tokens_from, { corpus: rows.length, tokenizer: 0, tokenizer_name: '@anthropic-ai/tokenizer' });
    assert.deepEqual(r.estimates_from, { corpus: 0, cli: rows.length, cli_path: CLI });
    const categories = [...new Set(rows.map((row) => row.category))].sort();
    assert.deepEqual(r.groups.map((g) => g.name), categories);
    for (const c of ['code', 'json', 'listing', 'multilingual', 'prose']) assert.ok(categories.includes(c), c);

    const check = (name, d, subset, estimateOf) => {
      const ratios = subset.map((i) => estimateOf(i) / rows[i].tokens).sort((a, b) => a - b);
      const close = (got, want, what) => assert.ok(Math.abs(got - want) < 1e-4, `${name} ${what}: ${got} vs ${want}`);
      assert.equal(d.count, subset.length, `${name} count`);
      close(d.min, ratios[0], 'min');
      close(d.max, ratios.at(-1), 'max');
      for (const p of [1, 5, 25, 50, 75, 95, 99]) close(d.percentiles[`p${p}`], nearestRank(ratios, p / 100), `p${p}`);
      for (const w of [10, 15, 20]) close(d.within[w], ratios.filter((v) => Math.abs(v - 1) <= w / 100 + 1e-12).length / ratios.length, `within ±${w}%`);
      const under = subset.filter((i) => estimateOf(i) < rows[i].tokens);
      assert.equal(d.under.count, under.length, `${name} under`);
      assert.equal(d.histogram.reduce((a, b) => a + b.count, 0), subset.length, `${name} histogram total`);
      assert.equal(d.histogram.slice(0, 4).reduce((a, b) => a + b.count, 0), under.length, `${name} buckets below 0`);
      assert.equal(d.histogram.slice(1, 8).reduce((a, b) => a + b.count, 0), Math.round(d.within['20'] * subset.length), `${name} buckets within ±20%`);
      if (under.length) close(d.worst_under.ratio, ratios[0], 'worst under');
      if (under.length) assert.equal(estimateOf(d.worst_under.line - 1), d.worst_under.estimate, `${name} worst under line`);
      assert.equal(d.sc008_pass, d.within['20'] >= 0.9);
    };
    const all = rows.map((_, i) => i);
    check('all', r.overall.estimate, all, (i) => estimates[i]);
    check('all (seeds)', r.overall.seeds_rule, all, (i) => seeds(rows[i].text));
    for (const g of r.groups) {
      const subset = all.filter((i) => rows[i].category === g.name);
      check(g.name, g.estimate, subset, (i) => estimates[i]);
      check(`${g.name} (seeds)`, g.seeds_rule, subset, (i) => seeds(rows[i].text));
    }
    assert.equal(r.sc008.share, r.overall.estimate.within['20']);
  });

  test('the recorded corpus meets SC-008 (within ±20% for at least 90% of the answers): --check exits 0', { skip: NO_CLI }, () => {
    const r = run(CORPUS, '--cli', CLI, '--check');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /SC-008: within ±20% for 90% of the answers: \d+\.\d%, pass/);
  });
});
