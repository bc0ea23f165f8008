// The official MCP conformance suite (@modelcontextprotocol/conformance) run
// directly and through ctxguard: every scenario must get the same verdict —
// the same check ids with the same statuses — both ways.
//
// The suite speaks Streamable HTTP only, ctxguard stdio only, so:
//  - server scenarios: `conformance server --url` against lib/http-stdio-front.mjs,
//    which relays each HTTP session to its own stdio child: the reference
//    server lib/conformance-server.mjs directly, or
//    `ctxguard -- node lib/conformance-server.mjs`;
//  - client scenarios: `conformance client --command` runs
//    lib/conformance-client.mjs (the SDK client on stdio), which talks to
//    lib/stdio-http-bridge.mjs directly, or to
//    `ctxguard -- node lib/stdio-http-bridge.mjs <url>`, and the bridge to the
//    scenario's HTTP server.
// The front and the bridge are the same in both runs, so whatever they get
// wrong, they get wrong both ways; only ctxguard differs.
//
// Scenarios: the suite's default ("active") server scenarios plus the pending
// json-schema-2020-12 (all at protocol 2025-11-25: the SDK that the reference
// server and client are built on, like ctxguard's other tests, speaks up to
// 2025-11-25, so the 2026-07-28 ("draft") scenarios would fail both ways and
// prove nothing), and the client scenarios that a client without OAuth can
// pass at 2025-11-25. Left out: sse-retry (it times the bridge's HTTP
// reconnection against a 50 ms tolerance, with nothing of ctxguard in it) and
// auth/* (OAuth over HTTP, before any message reaches stdio).
// dns-rebinding-protection and server-session-lifecycle check the HTTP front
// more than the server; they are kept, their verdicts are equal by design.
//
// On Node 20 the suite's bundle needs lib/node20-globsync.mjs (it imports
// fs.globSync, Node 22+).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { E2E_DIR, ctxguardBin, makeTempDir, removeDir, skipWithoutCtxguard } from './lib/harness.mjs';
import { startHttpFront } from './lib/http-stdio-front.mjs';

const SKIP = skipWithoutCtxguard();
const CONFORMANCE = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const PRELOAD = path.join(E2E_DIR, 'lib', 'node20-globsync.mjs');
const SERVER = path.join(E2E_DIR, 'lib', 'conformance-server.mjs');
const CLIENT = path.join(E2E_DIR, 'lib', 'conformance-client.mjs');

const EXTRA_SERVER_SCENARIOS = ['json-schema-2020-12'];
const CLIENT_SCENARIOS = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'json-schema-2020-12-preservation',
  'json-schema-ref-no-deref',
];

const shq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** Run the conformance CLI; resolves with {code, output} (a non-zero code only means some check failed). */
function conformance(args, cwd, timeoutMs = 120_000) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', PRELOAD, CONFORMANCE, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    const out = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => out.push(c));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`conformance ${args.join(' ')}: no exit within ${timeoutMs} ms\n${Buffer.concat(out)}`)); }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, output: Buffer.concat(out).toString('utf8') }); });
  });
}

/**
 * The verdicts in a results folder (-o): scenario -> sorted "id: STATUS" lines, INFO
 * checks (the scenario's own request/response log) left out.
 */
function readVerdicts(dir, mode) {
  const verdicts = {};
  for (const entry of fs.readdirSync(dir)) {
    const m = /^(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/.exec(entry);
    if (!m) continue;
    const name = mode === 'server' ? m[1].replace(/^server-/, '') : m[1];
    const checks = JSON.parse(fs.readFileSync(path.join(dir, entry, 'checks.json'), 'utf8'));
    verdicts[name] = checks.filter((c) => c.status !== 'INFO').map((c) => `${c.id}: ${c.status}`).sort();
  }
  return verdicts;
}

/** A scenario passes with one SUCCESS and no FAILURE (SKIPPED and WARNING do not fail it, as in the suite's own summary). */
const passed = (lines) => lines.some((l) => l.endsWith(': SUCCESS')) && !lines.some((l) => l.endsWith(': FAILURE'));

/** The failing checks of a scenario with their messages, from a results folder (for assertion messages). */
function failures(dir, scenario) {
  const out = [];
  for (const entry of fs.readdirSync(dir)) {
    if (!entry.includes(scenario)) continue;
    for (const c of JSON.parse(fs.readFileSync(path.join(dir, entry, 'checks.json'), 'utf8'))) {
      if (c.status === 'FAILURE' || c.status === 'WARNING') out.push(`${c.id}: ${c.status} ${c.errorMessage ?? c.description}`);
    }
  }
  return out.join('\n');
}

function compare(t, mode, direct, proxied, dirs) {
  const names = Object.keys(direct).sort();
  for (const name of names) t.diagnostic(`${mode} ${name}: direct ${passed(direct[name]) ? 'pass' : 'FAIL'}, through ctxguard ${proxied[name] ? (passed(proxied[name]) ? 'pass' : 'FAIL') : 'missing'}`);
  assert.deepEqual(Object.keys(proxied).sort(), names, 'the same scenarios ran both ways');
  for (const name of names) {
    assert.deepEqual(proxied[name], direct[name], `${mode} scenario ${name}: through ctxguard\n${failures(dirs.proxied, name)}\ndirectly\n${failures(dirs.direct, name)}`);
  }
  return names.filter((n) => passed(direct[n])).length;
}

describe('MCP conformance suite, directly and through ctxguard', { skip: SKIP }, () => {
  let tmp;

  before(() => {
    assert.ok(fs.existsSync(CONFORMANCE), `${CONFORMANCE} missing: run 'npm ci' in tests/e2e`);
    tmp = makeTempDir('ctxguard-conformance-');
  });
  after(() => removeDir(tmp));

  test('server scenarios: the same verdicts through ctxguard', { timeout: 240_000 }, async (t) => {
    const runs = {};
    for (const [label, command, args] of [
      ['direct', process.execPath, [SERVER]],
      ['proxied', ctxguardBin(), ['--', process.execPath, SERVER]],
    ]) {
      let stderr = '';
      const front = await startHttpFront({ command, args, onStderr: (_id, s) => { stderr += s; } });
      const out = path.join(tmp, `server-${label}`);
      try {
        const suite = await conformance(['server', '--url', front.url, '-o', out], tmp);
        for (const s of EXTRA_SERVER_SCENARIOS) await conformance(['server', '--url', front.url, '--scenario', s, '-o', out], tmp);
        runs[label] = { dir: out, verdicts: readVerdicts(out, 'server'), output: suite.output, stderr, stats: { ...front.stats } };
      } finally {
        await front.close();
      }
    }
    const { direct, proxied } = runs;
    assert.ok(Object.keys(direct.verdicts).length >= 20, `the active suite ran (${Object.keys(direct.verdicts).length} scenarios)\n${direct.output}`);
    for (const s of EXTRA_SERVER_SCENARIOS) assert.ok(direct.verdicts[s], `${s} ran`);
    assert.match(proxied.stderr, /server started: pid=\d+/, 'the proxied sessions went through ctxguard');
    assert.doesNotMatch(direct.stderr, /ctxguard/, 'the direct sessions did not');
    assert.ok(proxied.stats.sessions >= Object.keys(direct.verdicts).length, 'one ctxguard per session');
    const pass = compare(t, 'server', direct.verdicts, proxied.verdicts, { direct: direct.dir, proxied: proxied.dir });
    t.diagnostic(`server: ${pass}/${Object.keys(direct.verdicts).length} scenarios pass directly, the same through ctxguard`);
    assert.ok(pass >= 20, `most server scenarios pass directly (${pass})\n${direct.output}`);
  });

  test('client scenarios: the same verdicts through ctxguard', { timeout: 240_000 }, async (t) => {
    const runs = {};
    for (const [label, extra] of [['direct', ''], ['proxied', ` --ctxguard ${shq(ctxguardBin())}`]]) {
      const out = path.join(tmp, `client-${label}`);
      const command = `${shq(process.execPath)} ${shq(CLIENT)}${extra}`;
      const outputs = [];
      for (const s of CLIENT_SCENARIOS) {
        const r = await conformance(['client', '--command', command, '--scenario', s, '--timeout', '30000', '-o', out], tmp);
        outputs.push(r.output);
      }
      runs[label] = { dir: out, verdicts: readVerdicts(out, 'client'), output: outputs.join('\n') };
    }
    const { direct, proxied } = runs;
    assert.deepEqual(Object.keys(direct.verdicts).sort(), [...CLIENT_SCENARIOS].sort(), `every client scenario ran\n${direct.output}`);
    const stderrOf = (dir) => fs.readdirSync(dir).map((e) => fs.readFileSync(path.join(dir, e, 'stderr.txt'), 'utf8')).join('');
    assert.match(stderrOf(proxied.dir), /server started: pid=\d+/, 'the proxied client went through ctxguard');
    assert.doesNotMatch(stderrOf(direct.dir), /ctxguard:/, 'the direct client did not');
    const pass = compare(t, 'client', direct.verdicts, proxied.verdicts, { direct: direct.dir, proxied: proxied.dir });
    t.diagnostic(`client: ${pass}/${CLIENT_SCENARIOS.length} scenarios pass directly, the same through ctxguard`);
    assert.ok(pass >= 3, `client scenarios pass directly (${pass})\n${direct.output}`);
  });
});
