// Shared helpers for the ctxguard end-to-end tests and the demo client.
//
// Every test compares a "direct" session (SDK client -> MCP server) with a
// "proxied" session (SDK client -> ctxguard -> MCP server). Since ctxguard
// rewrites nothing in this milestone, both sessions must see JSON-equal
// answers (after normalizing things that legitimately differ per run, such as
// the path of a temporary data folder).

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { checkWayOn } from './client-cuts.mjs';

export const E2E_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MCP_DIR = path.join(E2E_DIR, 'node_modules', '@modelcontextprotocol');

// ---------------------------------------------------------------- binaries

/** Path of the ctxguard binary: $CTXGUARD_BIN or ../../build/ctxguard relative to tests/e2e. */
export function ctxguardBin() {
  const fromEnv = process.env.CTXGUARD_BIN;
  if (fromEnv && fromEnv.length > 0) return path.resolve(fromEnv);
  return path.resolve(E2E_DIR, '..', '..', 'build', 'ctxguard');
}

/** True if the ctxguard binary exists and is executable. */
export function ctxguardAvailable() {
  try {
    fs.accessSync(ctxguardBin(), fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * `skip` option for suites that need ctxguard: false (run) if the binary is
 * there or CTXGUARD_BIN names it explicitly (a wrong CTXGUARD_BIN must fail,
 * not skip); otherwise the reason to skip.
 */
export function skipWithoutCtxguard() {
  if (process.env.CTXGUARD_BIN || ctxguardAvailable()) return false;
  return `ctxguard binary not found at ${ctxguardBin()} (build it, or set CTXGUARD_BIN)`;
}

/** Path of the estimator CLI: $CTXGUARD_ESTIMATE_BIN or ../../build/tests/estimate_tokens_cli. */
export function estimateBin() {
  const fromEnv = process.env.CTXGUARD_ESTIMATE_BIN;
  if (fromEnv) return path.resolve(fromEnv);
  return path.resolve(E2E_DIR, '..', '..', 'build', 'tests', 'estimate_tokens_cli');
}

/** ctxguard's estimated tokens of `text` (estimate_tokens_cli, one line of {"text": ...}). */
export function estimateTokens(text) {
  const run = spawnSync(estimateBin(), [], { input: `${JSON.stringify({ text })}\n`, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${estimateBin()} failed: ${run.stderr || run.error}`);
  return JSON.parse(run.stdout).estimate;
}

const SERVER_ENTRIES = {
  everything: { entry: path.join(MCP_DIR, 'server-everything', 'dist', 'index.js'), fixedArgs: ['stdio'] },
  filesystem: { entry: path.join(MCP_DIR, 'server-filesystem', 'dist', 'index.js'), fixedArgs: [] },
  memory: { entry: path.join(MCP_DIR, 'server-memory', 'dist', 'index.js'), fixedArgs: [] },
  // Its one argument is the database URL (lib/postgres.mjs starts a database).
  postgres: { entry: path.join(MCP_DIR, 'server-postgres', 'dist', 'index.js'), fixedArgs: [] },
};

/**
 * Command line of a reference MCP server.
 * @param {'everything'|'filesystem'|'memory'|'postgres'} name
 * @param {...string} args extra arguments (e.g. the allowed directory of server-filesystem)
 * @returns {{command: string, args: string[], env?: Record<string,string>}}
 */
export function serverCommand(name, ...args) {
  const spec = SERVER_ENTRIES[name];
  if (!spec) throw new Error(`unknown server ${name}`);
  // The absolute path of the running node keeps direct and proxied sessions
  // on exactly the same interpreter, whatever PATH holds.
  return { command: process.execPath, args: [spec.entry, ...spec.fixedArgs, ...args] };
}

// ---------------------------------------------------------------- sessions

/** Client capabilities that make server-everything register all its conditional tools. */
export const FULL_CLIENT_CAPABILITIES = {
  sampling: {},
  roots: { listChanged: true },
  elicitation: { form: {}, url: {} },
  tasks: {
    list: {},
    cancel: {},
    requests: { sampling: { createMessage: {} }, elicitation: { create: {} } },
  },
};

const liveSessions = new Set();

function makeSession(params, clientOptions = {}) {
  const { name = 'ctxguard-e2e', capabilities = {}, setup, transportOptions = {}, ...rest } = clientOptions;
  const client = new Client({ name, version: '1.0.0' }, { capabilities, ...rest });
  if (setup) setup(client);
  const transport = new StdioClientTransport({ ...params, ...transportOptions, stderr: 'pipe' });
  const chunks = [];
  transport.stderr.on('data', (c) => chunks.push(c));
  let proc = null;
  let exitInfo = null;
  let resolveExit;
  const exited = new Promise((r) => { resolveExit = r; });
  // Capture the ChildProcess as soon as it is spawned: the transport forgets
  // it (sets _process = undefined) when it closes.
  const origStart = transport.start.bind(transport);
  transport.start = async () => {
    const p = origStart();
    proc = transport._process;
    proc.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      resolveExit(exitInfo);
    });
    return p;
  };
  const wire = recordWire(transport);
  const session = {
    client,
    transport,
    wire,
    stderrText: () => Buffer.concat(chunks).toString('utf8'),
    /** pid of the process the transport spawned (ctxguard for proxied sessions). */
    get pid() { return proc?.pid ?? null; },
    get proc() { return proc; },
    /** Resolves to {code, signal} when the spawned process exits. */
    exited,
    get exitInfo() { return exitInfo; },
    async close() {
      liveSessions.delete(session);
      try { await client.close(); } catch { /* ignore */ }
      await killHard(session);
    },
  };
  liveSessions.add(session);
  return session;
}

/**
 * Wire log of an SDK transport (1.x or 2.x): every JSON-RPC message the client sent ('out') or
 * received ('in'), in order, before the SDK dispatches it (the SDK handles notifications
 * asynchronously but responses synchronously, so the order in which handlers run is not the order
 * on the wire). Returns the array it fills.
 */
export function recordWire(transport) {
  const wire = [];
  let onmessage;
  Object.defineProperty(transport, 'onmessage', {
    configurable: true,
    get: () => (onmessage ? (msg, extra) => { wire.push({ dir: 'in', msg }); onmessage(msg, extra); } : undefined),
    set: (fn) => { onmessage = fn; },
  });
  const origSend = transport.send.bind(transport);
  transport.send = (msg, opts) => { wire.push({ dir: 'out', msg }); return origSend(msg, opts); };
  return wire;
}

async function killHard(session) {
  const pids = [];
  if (session.proc && session.exitInfo === null) pids.push(session.pid);
  const child = session.serverPid?.();
  if (child) pids.push(child);
  for (const pid of pids) {
    if (pid && pidAlive(pid)) {
      // The MCP server child is the leader of its own process group.
      try { process.kill(-pid, 'SIGKILL'); } catch { /* not a group leader */ }
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  }
}

/** The JSON values of a JSON Lines file (a telemetry file, an answer-sample file), in order. */
export function readJsonLines(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** Close every session opened through this module (use in `after`). */
export async function closeAllSessions() {
  await Promise.all([...liveSessions].map((s) => s.close()));
}

/**
 * Spawn the server directly (no ctxguard) and connect the SDK client.
 * @param {{command: string, args: string[], env?: object}} cmd
 * @param {object} [clientOptions] {capabilities, setup(client), name, transportOptions, ...Client options};
 *        transportOptions go to StdioClientTransport, e.g. {maxBufferSize} for direct answers over
 *        the SDK's 10 MB message limit
 */
export async function connectDirect(cmd, clientOptions = {}) {
  const session = makeSession({ command: cmd.command, args: cmd.args, env: cmd.env }, clientOptions);
  session.serverPid = () => session.pid;
  try {
    await session.client.connect(session.transport);
  } catch (err) {
    await session.close();
    throw err;
  }
  return session;
}

/**
 * Session spawned as `ctxguard <ctxguardArgs> -- <cmd>` without connecting the client yet. Every
 * tools/call answer is checked for its way on (lib/client-cuts.mjs, checkWayOn) and handed to
 * the test without it, unless clientOptions.rawAnswers: then as ctxguard sent it.
 */
export function proxiedSession(cmd, ctxguardArgs = [], clientOptions = {}) {
  const { rawAnswers = false, ...options } = clientOptions;
  const session = makeSession(
    { command: ctxguardBin(), args: [...ctxguardArgs, '--', cmd.command, ...cmd.args], env: cmd.env },
    options,
  );
  session.serverPid = () => parseServerPid(session.stderrText());
  watchWayOn(session.client, rawAnswers);
  return session;
}

/** Checks every tools/call answer of `client` for its way on; hands tests the data. */
export function watchWayOn(client, rawAnswers = false) {
  const callTool = client.callTool.bind(client);
  client.callTool = async (...args) => {
    const result = await callTool(...args);
    const data = checkWayOn(result);
    return rawAnswers ? result : data;
  };
}

/**
 * Spawn `ctxguard <ctxguardArgs> -- <cmd>` and connect the SDK client to it.
 * Returns {client, transport, stderrText(), pid (ctxguard), serverPid(), exited, close()}.
 */
export async function connectProxied(cmd, ctxguardArgs = [], clientOptions = {}) {
  return connectSession(proxiedSession(cmd, ctxguardArgs, clientOptions));
}

/** Connects the client of a proxiedSession(); on failure closes it and adds ctxguard's stderr. */
export async function connectSession(session) {
  try {
    await session.client.connect(session.transport);
  } catch (err) {
    err.message += `\nctxguard stderr:\n${session.stderrText()}`;
    await session.close();
    throw err;
  }
  return session;
}

/** The child pid from ctxguard's `server started: pid=<N>` log line, or null. */
export function parseServerPid(stderrText) {
  const m = /server started: pid=(\d+)/.exec(stderrText);
  return m ? Number(m[1]) : null;
}

/**
 * Run ctxguard to completion without an MCP client (usage errors, --help, ...).
 * @returns {Promise<{code: number|null, signal: string|null, stdout: string, stderr: string}>}
 */
export function runCtxguard(args, { input = null, timeoutMs = 10000, env } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(ctxguardBin(), args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
    const out = [];
    const err = [];
    child.stdout.on('data', (c) => out.push(c));
    child.stderr.on('data', (c) => err.push(c));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ctxguard ${args.join(' ')} did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('error', (e) => { clearTimeout(timer); reject(e); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {});
    if (input !== null) child.stdin.write(input);
    child.stdin.end();
  });
}

/** Command line of lib/raw-server.mjs, the scriptable stand-in server. */
export function rawServerCommand(...args) {
  return { command: process.execPath, args: [path.join(E2E_DIR, 'lib', 'raw-server.mjs'), ...args] };
}

/**
 * Start `ctxguard <ctxguardArgs> -- <cmd>` with raw pipes (no SDK client).
 * Returns {proc, pid, send(text), end(), stdoutBuffer(), lines(), messages(),
 * stderrText(), serverPid(), waitForLine(pred, ms), exited, kill()}.
 * With `onStdout`, stdout's chunks go to it instead of being kept (for streams too large to keep;
 * stdoutBuffer() and lines() then stay empty).
 */
export function rawProxy(cmd, ctxguardArgs = [], { env, onStdout } = {}) {
  const proc = spawn(ctxguardBin(), [...ctxguardArgs, '--', cmd.command, ...cmd.args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: env ?? process.env,
  });
  const out = [];
  const err = [];
  proc.stdout.on('data', onStdout ?? ((c) => out.push(c)));
  proc.stderr.on('data', (c) => err.push(c));
  proc.stdin.on('error', () => {});
  const exited = new Promise((resolve) => proc.on('close', (code, signal) => resolve({ code, signal })));
  const stdoutBuffer = () => Buffer.concat(out);
  const lines = () => {
    const text = stdoutBuffer().toString('utf8');
    const all = text.split('\n');
    all.pop(); // incomplete (or empty) tail
    return all;
  };
  const session = {
    proc,
    pid: proc.pid,
    exited,
    send: (text) => new Promise((resolve) => { if (proc.stdin.write(text)) resolve(); else proc.stdin.once('drain', resolve); }),
    end: () => proc.stdin.end(),
    stdoutBuffer,
    lines,
    messages: () => lines().map((l) => JSON.parse(l)),
    stderrText: () => Buffer.concat(err).toString('utf8'),
    serverPid: () => parseServerPid(Buffer.concat(err).toString('utf8')),
    waitForLine: (pred, ms = 5000) => waitFor(() => lines().find(pred), ms, 'a matching stdout line from ctxguard'),
    kill: () => {
      const child = session.serverPid();
      for (const pid of [child, proc.pid]) {
        if (pid && pidAlive(pid)) {
          try { process.kill(-pid, 'SIGKILL'); } catch { /* not a group leader */ }
          try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
        }
      }
    },
  };
  rawSessions.add(session);
  exited.then(() => rawSessions.delete(session));
  return session;
}

const rawSessions = new Set();

/** SIGKILL every raw ctxguard (and its child) still running (use in `after`). */
export function killAllRaw() {
  for (const s of rawSessions) s.kill();
}

// ---------------------------------------------------------------- processes

/** True if a process with this pid exists (zombies count as dead). */
export function pidAlive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  // A zombie still answers signal 0; treat it as dead.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** Resolve with `promise`, or reject if it takes longer than `ms`. */
export function within(promise, ms, what = 'operation') {
  let timer;
  const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms); });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Poll `predicate` (sync or async) every 25 ms until it is truthy; returns its value. */
export async function waitFor(predicate, timeoutMs = 5000, what = 'condition') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await predicate();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

// ---------------------------------------------------------------- data

/** Small deterministic PRNG (mulberry32). */
/**
 * `cursor` with the letter at `at` changed, and still well-formed letter hex (a-q, never a letter
 * twice in a row: docs/protocol.md section 6), so ctxguard reads it and finds the tag wrong.
 */
export function alterCursor(cursor, at = Math.floor(cursor.length / 2)) {
  const other = [...'abcd'].find((c) => c !== cursor[at] && c !== cursor[at - 1] && c !== cursor[at + 1]);
  return cursor.slice(0, at) + other + cursor.slice(at + 1);
}

export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau ' +
  'upsilon phi chi psi omega cache token context proxy server client request response stream buffer ' +
  'socket thread mutex signal handler parser schema record index shard replica ledger vector matrix'
).split(' ');

// 1x1 transparent PNG.
const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Fixed timestamps given to every generated file and directory. */
export const FIXED_MTIME = new Date('2024-01-02T03:04:05.000Z');

/**
 * Generate a deterministic data folder under `root` (created if missing).
 *
 * Layout (same bytes for the same seed, on every run):
 *   README.md, notes.txt, todo.md
 *   src/<module>/<sub>/file_NN.{js,ts,md,txt}   a few hundred small files
 *   docs/guide/*.md, docs/api/*.md
 *   data/big.json                               ~400 KB JSON
 *   data/small.csv
 *   logs/app.log                                10,000 lines
 *   images/pixel.png                            tiny PNG
 *   scratch/                                    files meant to be edited/moved by tests
 *
 * @param {string} root
 * @param {{seed?: number, modules?: number, filesPerDir?: number, logLines?: number, jsonRecords?: number}} [opts]
 * @returns {{root: string, files: number, bytes: number, logFile: string, bigJson: string}}
 */
export function makeDataFolder(root, opts = {}) {
  const { seed = 42, modules = 8, filesPerDir = 12, logLines = 10000, jsonRecords = 2000 } = opts;
  const rnd = prng(seed);
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  let files = 0;
  let bytes = 0;
  const written = [];
  const write = (rel, content) => {
    const p = path.join(root, rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content);
    files += 1;
    bytes += Buffer.byteLength(content);
    written.push(p);
  };

  fs.mkdirSync(root, { recursive: true });
  write('README.md', `# Sample project\n\nA generated data folder for ctxguard tests.\n\n${words(40)}\n`);
  write('notes.txt', Array.from({ length: 20 }, (_, i) => `note ${i + 1}: ${words(8)}`).join('\n') + '\n');
  write('todo.md', '# TODO\n\n- [ ] write the proxy\n- [ ] test the proxy\n- [x] generate data\n');

  const subs = ['core', 'util', 'io'];
  const exts = ['js', 'ts', 'md', 'txt'];
  for (let m = 0; m < modules; m++) {
    const mod = `module_${String(m).padStart(2, '0')}`;
    for (const sub of subs) {
      for (let f = 0; f < filesPerDir; f++) {
        const ext = exts[(m + f) % exts.length];
        const name = `file_${String(f).padStart(2, '0')}.${ext}`;
        let body;
        if (ext === 'js' || ext === 'ts') {
          const fn = `${pick(WORDS)}_${m}_${f}`;
          body = `// ${mod}/${sub}/${name}\nexport function ${fn}(x) {\n  // ${words(6)}\n  return x * ${Math.floor(rnd() * 1000)};\n}\n`;
        } else if (ext === 'md') {
          body = `# ${mod} ${sub} ${f}\n\n${words(30)}\n`;
        } else {
          body = Array.from({ length: 5 + Math.floor(rnd() * 10) }, () => words(10)).join('\n') + '\n';
        }
        write(path.join('src', mod, sub, name), body);
      }
    }
  }
  for (const part of ['guide', 'api']) {
    for (let i = 0; i < 10; i++) {
      write(path.join('docs', part, `page_${i}.md`), `# ${part} page ${i}\n\n${words(60)}\n`);
    }
  }

  const records = Array.from({ length: jsonRecords }, (_, i) => ({
    id: i + 1,
    name: `${pick(WORDS)}-${pick(WORDS)}-${i}`,
    score: Math.round(rnd() * 100000) / 100,
    active: rnd() < 0.5,
    tags: [pick(WORDS), pick(WORDS), pick(WORDS)],
    note: words(12),
  }));
  write(path.join('data', 'big.json'), JSON.stringify({ version: 1, generatedBy: 'makeDataFolder', seed, records }, null, 2) + '\n');
  write(path.join('data', 'small.csv'), 'id,name,value\n' + Array.from({ length: 20 }, (_, i) => `${i},${pick(WORDS)},${Math.floor(rnd() * 100)}`).join('\n') + '\n');

  const levels = ['DEBUG', 'INFO', 'INFO', 'INFO', 'WARN', 'ERROR'];
  const base = Date.UTC(2024, 0, 2, 0, 0, 0);
  const lines = [];
  for (let i = 0; i < logLines; i++) {
    const ts = new Date(base + i * 1037).toISOString();
    lines.push(`${ts} ${pick(levels).padEnd(5)} [worker-${Math.floor(rnd() * 8)}] req=${String(i).padStart(6, '0')} ${words(7)}`);
  }
  write(path.join('logs', 'app.log'), lines.join('\n') + '\n');

  fs.mkdirSync(path.join(root, 'images'), { recursive: true });
  fs.writeFileSync(path.join(root, 'images', 'pixel.png'), TINY_PNG);
  written.push(path.join(root, 'images', 'pixel.png'));
  files += 1;
  bytes += TINY_PNG.length;

  write(path.join('scratch', 'edit-me.txt'), 'line one\nline two\nline three\nthe end\n');
  write(path.join('scratch', 'move-me.txt'), 'I will be moved.\n');
  write(path.join('scratch', 'info-only.txt'), 'Only stat() touches this file.\n');

  // Fixed timestamps everywhere so that two folders generated at different
  // moments look the same (creation/birth time cannot be set; normalize it).
  const dirs = new Set();
  for (const p of written) {
    fs.utimesSync(p, FIXED_MTIME, FIXED_MTIME);
    for (let d = path.dirname(p); d.startsWith(root) && d.length >= root.length; d = path.dirname(d)) dirs.add(d);
  }
  for (const d of [...dirs].sort((a, b) => b.length - a.length)) fs.utimesSync(d, FIXED_MTIME, FIXED_MTIME);

  return { root, files, bytes, logFile: path.join(root, 'logs', 'app.log'), bigJson: path.join(root, 'data', 'big.json') };
}

/** A fresh temporary directory (removed by the caller with removeDir). */
export function makeTempDir(prefix = 'ctxguard-e2e-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir) {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- comparing

const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const HEXID_RE = /\b[0-9a-f]{32}\b/g;
const ISO_TIME_RE = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})\b/g;

/**
 * Deep-copy a JSON value, rewriting every string (and object key):
 *  - each `replace` entry [from, to] (string or RegExp) is applied in order;
 *  - `uuids: true` replaces every UUID and every 32-hex-digit id by <ID>;
 *  - `isoTimes: true` replaces every ISO-8601 timestamp by <TIME>.
 * Used to compare direct and proxied answers that legitimately differ, e.g.
 * the path of each session's temporary data folder.
 */
export function normalize(value, { replace = [], uuids = false, isoTimes = false } = {}) {
  const fix = (s) => {
    let out = s;
    for (const [from, to] of replace) {
      out = typeof from === 'string' ? out.split(from).join(to) : out.replace(from, to);
    }
    if (uuids) out = out.replace(UUID_RE, '<ID>').replace(HEXID_RE, '<ID>');
    if (isoTimes) out = out.replace(ISO_TIME_RE, '<TIME>');
    return out;
  };
  const walk = (v) => {
    if (typeof v === 'string') return fix(v);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      const o = {};
      for (const [k, x] of Object.entries(v)) o[fix(k)] = walk(x);
      return o;
    }
    return v;
  };
  return walk(value);
}

/** Size in bytes of the JSON text of a value. */
export function jsonBytes(v) {
  return Buffer.byteLength(JSON.stringify(v));
}

// ---------------------------------------------------------------- budget pipeline helpers

/**
 * server-memory with its knowledge graph in `file` (MEMORY_FILE_PATH). Sessions
 * started with the same file see the same graph: the server re-reads the file
 * on every call.
 */
export function memoryServerCommand(file) {
  return { ...serverCommand('memory'), env: { MEMORY_FILE_PATH: file } };
}

/**
 * Create `count` empty files named `name(i)` in `dir` (created if missing).
 * @returns {string[]} the file names, in creation order
 */
export function makeFiles(dir, count, name = (i) => `file_${String(i).padStart(5, '0')}.txt`) {
  fs.mkdirSync(dir, { recursive: true });
  const names = [];
  for (let i = 0; i < count; i++) {
    const n = name(i);
    fs.writeFileSync(path.join(dir, n), '');
    names.push(n);
  }
  return names;
}

/**
 * A wide directory tree of empty files under `root`:
 *   dir_NN/file_NNNNN.txt         `dirs` directories of `filesPerDir` files
 *   dir_NN/nested/deep_K/nested_file_N.md   in the first `nested` directories, two more levels down, `nestedFiles` files
 * @returns {number} files created
 */
export function makeWideTree(root, { dirs = 40, filesPerDir = 100, nested = 3, nestedFiles = 300 } = {}) {
  let files = 0;
  for (let d = 0; d < dirs; d++) {
    const dir = path.join(root, `dir_${String(d).padStart(2, '0')}`);
    files += makeFiles(dir, filesPerDir).length;
    if (d < nested) files += makeFiles(path.join(dir, 'nested', `deep_${d}`), nestedFiles, (i) => `nested_file_${i}.md`).length;
  }
  return files;
}

/**
 * The text ctxguard estimates a tools/call result by: every text item's text,
 * then the serialized structuredContent (if any), joined by newlines.
 */
export function resultBudgetText(result) {
  const texts = (result?.content ?? []).filter((c) => c.type === 'text').map((c) => c.text);
  if (result?.structuredContent !== undefined) texts.push(JSON.stringify(result.structuredContent));
  return texts.join('\n');
}

/**
 * `countTokens(text)` of @anthropic-ai/tokenizer when it is installed in
 * tests/e2e/node_modules, else null (real token counts are informational only).
 */
export async function realTokenCounter() {
  try {
    const mod = await import('@anthropic-ai/tokenizer');
    const count = mod.countTokens ?? mod.default?.countTokens;
    return typeof count === 'function' ? count : null;
  } catch {
    return null;
  }
}
