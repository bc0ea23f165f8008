// --sample-answers FILE: a share of the answers ctxguard sends, whole, for checking the token
// estimator on real traffic. With the real SDK client over server-filesystem:
//   - at --sample-rate 100 every answer is a line {time, tool, client, estimated_tokens, bytes,
//     text}, `text` being exactly the text items the client received, joined by newlines;
//   - the file is created with mode 0600, and made 0600 when it existed wider (it holds payloads);
//   - /metrics counts the samples (ctxguard_answer_samples_total{result="written"});
//   - scripts/estimator-accuracy.mjs reads the file as it is;
//   - at the default rate (1%) a session of 300 calls writes a few, not all;
//   - a bad rate is a usage error (exit 2) before any server starts.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import {
  closeAllSessions,
  connectProxied,
  ctxguardBin,
  makeFiles,
  makeTempDir,
  readJsonLines,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
} from './lib/harness.mjs';
import { makeLog } from './lib/v2-server.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 120_000 };
const REPO = path.resolve(import.meta.dirname, '..', '..');

function joined(result) {
  return result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

const readSamples = readJsonLines;

describe('answer samples', { skip: SKIP }, () => {
  let root;
  let dir;
  before(() => {
    root = makeTempDir();
    dir = makeTempDir();
    fs.writeFileSync(path.join(root, 'app.log'), makeLog(4000));
    makeFiles(path.join(root, 'many'), 300);
  });
  after(async () => {
    await closeAllSessions();
    removeDir(root);
    removeDir(dir);
  });

  test('every answer at 100%: the text the client got, mode 0600, counted in /metrics', T, async () => {
    const file = path.join(dir, 'samples.jsonl');
    fs.writeFileSync(file, '', { mode: 0o644 });  // an existing file, readable by others
    const session = await connectProxied(serverCommand('filesystem', root),
      ['--sample-answers', file, '--sample-rate', '100', '--metrics-listen', '0'], { name: 'claude-code', rawAnswers: true });
    const received = [];
    const log = await session.client.callTool({ name: 'read_text_file', arguments: { path: path.join(root, 'app.log') } });
    received.push(['read_text_file', joined(log)]);
    const cursor = JSON.parse(log.content.at(-1).text)._ctxguard.nextCursor;
    const page = await session.client.callTool({ name: 'ctxguard_fetch', arguments: { cursor } });
    received.push(['ctxguard_fetch', joined(page)]);
    const small = await session.client.callTool({ name: 'list_allowed_directories', arguments: {} });
    received.push(['list_allowed_directories', joined(small)]);
    const base = await waitFor(() => /metrics endpoint: (http:\/\/[^/\s]+)\/metrics/.exec(session.stderrText())?.[1],
      5000, 'the metrics endpoint');
    // The writer flushes every 100 ms.
    await waitFor(() => readSamples(file).length === 3, 5000, 'three samples');
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /^ctxguard_answer_samples_total\{result="written"\} 3$/m);
    await session.close();

    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const samples = readSamples(file);
    assert.deepEqual(samples.map((s) => [s.tool, s.text]), received);
    for (const sample of samples) {
      assert.equal(sample.client, 'claude-code');
      assert.equal(sample.bytes, Buffer.byteLength(sample.text));
      assert.ok(sample.estimated_tokens > 0);
      assert.match(sample.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }

    // scripts/estimator-accuracy.mjs reads the samples as they are (Claude's tokenizer counts).
    const accuracy = spawnSync(process.execPath, [path.join(REPO, 'scripts', 'estimator-accuracy.mjs'), file,
      '--json', '--by', 'tool'], { encoding: 'utf8' });
    assert.equal(accuracy.status, 0, accuracy.stderr);
    const report = JSON.parse(accuracy.stdout);
    assert.equal(report.samples, 3);
    assert.equal(report.estimates_from.corpus, 3);  // the samples' own estimated_tokens
    assert.equal(report.overall.estimate.count, 3);
  });

  test('the default rate samples about 1% of the answers', T, async () => {
    const file = path.join(dir, 'default-rate.jsonl');
    const session = await connectProxied(serverCommand('filesystem', root), ['--sample-answers', file]);
    for (let i = 0; i < 300; i++) {
      await session.client.callTool({ name: 'get_file_info', arguments: { path: path.join(root, 'many', 'file_00001.txt') } });
    }
    await session.close();
    const written = fs.existsSync(file) ? readSamples(file).length : 0;
    // 3 expected; more than 15 has a chance below one in a million.
    assert.ok(written <= 15, `${written} of 300 sampled`);
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  });

  test('a bad rate is refused before any server starts', T, () => {
    for (const rate of ['0', '101', 'lots']) {
      const run = spawnSync(ctxguardBin(), ['--sample-answers', path.join(dir, 'x.jsonl'), '--sample-rate', rate,
        '--', process.execPath, '-e', 'process.exit(9)'], { encoding: 'utf8' });
      assert.equal(run.status, 2, `${rate}: ${run.stderr}`);
      assert.equal(run.stdout, '');
    }
  });
});
