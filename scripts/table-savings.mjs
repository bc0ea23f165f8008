#!/usr/bin/env node
// Real-token savings of --tables: counts the two forms that `table_savings --emit` wrote (the
// qualifying arrays and the whole texts, each as minified JSON and with tables) with Claude's
// tokenizer (@anthropic-ai/tokenizer, installed in tests/e2e), next to ctxguard's estimates.
// No table logic here: bench/table_savings.cpp builds both forms.
//
//   build/bench/table_savings --emit /tmp/table-forms.jsonl /tmp/estimator-corpus.jsonl
//   node scripts/table-savings.mjs /tmp/table-forms.jsonl

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The tokenizer lives in the e2e tests' node_modules, not next to this script.
const require = createRequire(path.join(REPO, 'tests', 'e2e', 'package.json'));
const { getTokenizer } = require('@anthropic-ai/tokenizer');

const file = process.argv[2];
if (!file) {
  console.error('usage: node scripts/table-savings.mjs FORMS.jsonl  (from table_savings --emit)');
  process.exit(2);
}

// The same grouping as table_savings: the tool, with the server's name where the source has one.
const SERVERS = new Set(['memory', 'everything', 'filesystem', 'gnupg']);
function sourceGroup(source) {
  const words = source.split(' ');
  return words.slice(0, SERVERS.has(words[0]) && words.length > 1 ? 2 : 1).join(' ');
}

const tokenizer = getTokenizer();
// As countTokens() counts: NFKC first, special tokens allowed.
const count = (text) => tokenizer.encode(text.normalize('NFKC'), 'all').length;

const empty = () => ({ n: 0, json: 0, table: 0, jsonEstimate: 0, tableEstimate: 0, notSmaller: 0 });
const totals = { array: new Map(), sample: new Map() };
for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
  if (!line) continue;
  const row = JSON.parse(line);
  const json = count(row.json);
  const table = count(row.table);
  for (const group of [sourceGroup(row.source), 'TOTAL']) {
    const byGroup = totals[row.kind];
    if (!byGroup.has(group)) byGroup.set(group, empty());
    const t = byGroup.get(group);
    t.n += 1;
    t.json += json;
    t.table += table;
    t.jsonEstimate += row.json_estimate;
    t.tableEstimate += row.table_estimate;
    if (table >= json) t.notSmaller += 1;
  }
}
tokenizer.free();

const saving = (before, after) => (before === 0 ? 0 : (100 * (before - after)) / before).toFixed(1) + '%';
const pad = (value, width) => String(value).padStart(width);
for (const [kind, title] of [['array', 'qualifying arrays'], ['sample', 'whole texts containing them']]) {
  console.log(`\n${title} (real tokens | estimated tokens)`);
  console.log(`${'source'.padEnd(28)} ${pad('n', 5)} ${pad('json', 8)} ${pad('table', 8)} ${pad('saving', 7)}` +
              ` | ${pad('json', 8)} ${pad('table', 8)} ${pad('saving', 7)} ${pad('real>=', 6)}`);
  const groups = [...totals[kind].keys()].filter((g) => g !== 'TOTAL').sort();
  for (const group of [...groups, 'TOTAL']) {
    const t = totals[kind].get(group);
    if (!t) continue;
    console.log(`${group.padEnd(28)} ${pad(t.n, 5)} ${pad(t.json, 8)} ${pad(t.table, 8)} ${pad(saving(t.json, t.table), 7)}` +
                ` | ${pad(t.jsonEstimate, 8)} ${pad(t.tableEstimate, 8)} ${pad(saving(t.jsonEstimate, t.tableEstimate), 7)}` +
                ` ${pad(t.notSmaller, 6)}`);
  }
}
console.log('\nreal>=: how many tables cost as many real tokens as the JSON or more');
