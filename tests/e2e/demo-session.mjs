#!/usr/bin/env node
// Demo client: runs one scripted MCP session twice at once, directly against the real servers
// (server-filesystem over a generated data folder, server-memory over a generated knowledge
// graph) and through ctxguard, and prints for every call how much the client received each way
// and what ctxguard did to the answer.
//
//   node demo-session.mjs --ctxguard <bin> --data <folder> [--log-level L]
//   node demo-session.mjs --generate --data <folder>      (only create the data folder)
//
// The table goes to stdout, followed by ctxguard's own log lines for the session.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { FIXED_MTIME, closeAllSessions, connectDirect, connectProxied, makeDataFolder, serverCommand } from './lib/harness.mjs';

const USAGE = 'usage: demo-session.mjs --ctxguard <bin> --data <folder> [--log-level <level>]\n' +
  '       demo-session.mjs --generate --data <folder>';

// Sizes of the generated data: big enough that answers run to hundreds of thousands of tokens
// (what ctxguard is for), small enough to generate in a few seconds.
const TREE_MODULES = 24;        // src/module_NN/{core,util,io}/
const FILES_PER_DIR = 40;       // -> 2,880 source files
const INBOX_FILES = 2500;       // one flat folder: a list_directory far over the hard cap
const GRAPH_ENTITIES = 2000;    // server-memory knowledge graph
const MEMORY_FILE = path.join('memory', 'graph.jsonl');

function fail(message) {
  process.stderr.write(`demo-session: ${message}\n${USAGE}\n`);
  process.exit(2);
}

let opts;
try {
  ({ values: opts } = parseArgs({
    options: {
      ctxguard: { type: 'string' },
      data: { type: 'string' },
      generate: { type: 'boolean', default: false },
      'log-level': { type: 'string', default: 'info' },
      help: { type: 'boolean', default: false },
    },
  }));
} catch (e) {
  fail(e.message);
}
if (opts.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!opts.data) fail('--data is required');
const dataDir = path.resolve(opts.data);

// ------------------------------------------------------------------------------ data

/** The knowledge graph server-memory reads, as its own JSONL file format. */
function writeGraph(file) {
  const teams = ['platform', 'billing', 'search', 'mobile', 'data', 'security', 'growth', 'infra'];
  const roles = ['engineer', 'manager', 'designer', 'analyst', 'researcher'];
  const lines = [];
  for (let i = 0; i < GRAPH_ENTITIES; i++) {
    lines.push(JSON.stringify({
      type: 'entity',
      name: `person_${String(i).padStart(4, '0')}`,
      entityType: 'person',
      observations: [
        `${roles[i % roles.length]} on the ${teams[i % teams.length]} team`,
        `joined in ${2010 + (i % 15)}`,
        `based in office ${1 + (i % 12)}`,
      ],
    }));
  }
  for (let i = 0; i < GRAPH_ENTITIES; i++) {
    const to = (i * 7 + 3) % GRAPH_ENTITIES;
    lines.push(JSON.stringify({
      type: 'relation',
      from: `person_${String(i).padStart(4, '0')}`,
      to: `person_${String(to).padStart(4, '0')}`,
      relationType: i % 3 === 0 ? 'reports_to' : 'works_with',
    }));
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
}

function generate(root) {
  const info = makeDataFolder(root, { modules: TREE_MODULES, filesPerDir: FILES_PER_DIR });
  const inbox = path.join(root, 'inbox');
  fs.mkdirSync(inbox);
  for (let i = 0; i < INBOX_FILES; i++) {
    const file = path.join(inbox, `message_${String(i).padStart(4, '0')}.eml`);
    fs.writeFileSync(file, `Subject: message ${i}\n\nHello.\n`);
    fs.utimesSync(file, FIXED_MTIME, FIXED_MTIME);
  }
  fs.utimesSync(inbox, FIXED_MTIME, FIXED_MTIME);
  writeGraph(path.join(root, MEMORY_FILE));
  return { files: info.files + INBOX_FILES + 1, bytes: info.bytes };
}

if (opts.generate) {
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) fail(`${dataDir} exists and is not empty`);
  const info = generate(dataDir);
  process.stdout.write(`generated ${info.files} files in ${dataDir}\n`);
  process.exit(0);
}

if (!fs.existsSync(path.join(dataDir, 'logs', 'app.log')) || !fs.existsSync(path.join(dataDir, MEMORY_FILE))) {
  fail(`${dataDir} is not a demo data folder (generate one with --generate or scripts/demo-data.sh)`);
}
if (!opts.ctxguard) fail('give --ctxguard <bin>');
const ctxguard = path.resolve(opts.ctxguard);
if (!fs.existsSync(ctxguard)) fail(`${ctxguard} does not exist (build it with scripts/build.sh)`);

// ------------------------------------------------------------------------------ measuring

// Claude's tokenizer when tests/e2e has it; otherwise the rule of thumb, said so in the table.
let countTokens = null;
try {
  ({ countTokens } = await import('@anthropic-ai/tokenizer'));
} catch {
  countTokens = null;
}
const tokensOf = countTokens ?? ((text) => Math.ceil((text.length / 4) * 1.2));

/**
 * What a model reads of a result: for a tool result every text item and structuredContent as
 * JSON (Claude Desktop shows content, Claude Code structuredContent; ctxguard's budget counts
 * both), for anything else the result's JSON.
 */
function modelText(result) {
  if (!Array.isArray(result?.content)) return JSON.stringify(result);
  const texts = result.content.filter((item) => item.type === 'text').map((item) => item.text);
  if (result.structuredContent !== undefined) texts.push(JSON.stringify(result.structuredContent));
  return texts.join('\n');
}

function measure(result) {
  if (result === undefined) return null;
  return { bytes: Buffer.byteLength(JSON.stringify(result)), tokens: tokensOf(modelText(result)) };
}

/** The `_ctxguard` objects of a result: top-level in a JSON text item, or a trailing text item. */
function metadataOf(result) {
  const found = [];
  for (const item of result?.content ?? []) {
    if (item.type !== 'text' || !item.text.includes('"_ctxguard"')) continue;
    try {
      const json = JSON.parse(item.text);
      if (json && typeof json === 'object' && json._ctxguard) found.push(json._ctxguard);
    } catch {
      // Text that merely mentions _ctxguard.
    }
  }
  return found;
}

const fmt = (n) => n.toLocaleString('en-US');

/** One short phrase for what ctxguard did to a tools/call answer. */
function describeCall(direct, proxied) {
  const metas = metadataOf(proxied);
  if (metas.length > 0) {
    const meta = metas[0];
    if (meta.returnedBytes !== undefined) return `cut: ${fmt(meta.returnedBytes)} of ${fmt(meta.totalBytes)} bytes`;
    const others = metas.length - 1 + (meta.otherCuts?.length ?? 0);
    const first = meta.offset === 0 ? '' : ` from ${meta.offset}`;
    return `paginated ${fmt(meta.pageSize)} of ${fmt(meta.totalCount)}${first}${others > 0 ? ` (+${others} more cut${others === 1 ? '' : 's'})` : ''}`;
  }
  if (JSON.stringify(direct) === JSON.stringify(proxied)) return 'unchanged';
  return 'compacted';
}

function describeInitialize(direct, proxied) {
  return direct.instructions === proxied.instructions ? 'unchanged' : 'instructions added';
}

function describeToolsList(direct, proxied) {
  const schemas = direct.tools.filter((tool) => tool.outputSchema !== undefined).length;
  const added = proxied.tools.length - direct.tools.length;
  const parts = [];
  if (added > 0) parts.push('+ctxguard_fetch');
  if (schemas > 0) parts.push(`-${schemas} outputSchema`);
  return parts.length > 0 ? parts.join(', ') : 'unchanged';
}

// ------------------------------------------------------------------------------ the session

const p = (...parts) => path.join(dataDir, ...parts);
const rel = (value) => (typeof value === 'string' && value.startsWith(dataDir) ? path.relative(dataDir, value) || '.' : JSON.stringify(value));
const shortArgs = (args) => {
  const text = Object.entries(args).map(([key, value]) => `${key}=${rel(value)}`).join(' ');
  return text.length > 30 ? `${text.slice(0, 29)}…` : text;
};

// [server, tool, arguments]: small answers ctxguard leaves alone, and big ones.
const SCRIPT = [
  ['filesystem', 'list_directory', { path: p() }],
  ['filesystem', 'list_directory', { path: p('inbox') }],
  ['filesystem', 'directory_tree', { path: p('src') }],
  ['filesystem', 'directory_tree', { path: p() }],
  ['filesystem', 'read_text_file', { path: p('logs', 'app.log') }],
  ['filesystem', 'read_text_file', { path: p('logs', 'app.log'), tail: 20 }],
  ['filesystem', 'read_text_file', { path: p('data', 'big.json') }],
  ['filesystem', 'get_file_info', { path: p('data', 'small.csv') }],
  ['memory', 'search_nodes', { query: 'person_0042' }],
  ['memory', 'read_graph', {}],
];

const servers = {
  filesystem: serverCommand('filesystem', dataDir),
  memory: { ...serverCommand('memory'), env: { ...process.env, MEMORY_FILE_PATH: p(MEMORY_FILE) } },
};
process.env.CTXGUARD_BIN = ctxguard;  // the harness starts this binary
const ctxguardArgs = ['--log-level', opts['log-level']];

const rows = [];
const addRow = (server, call, args, direct, proxied, did) => {
  rows.push({ server, call, args: shortArgs(args), direct: measure(direct), proxied: measure(proxied), did });
};
const sessions = {};
let readGraph = null;

try {
  for (const [name, cmd] of Object.entries(servers)) {
    const [direct, proxied] = await Promise.all([connectDirect(cmd), connectProxied(cmd, ctxguardArgs)]);
    sessions[name] = { direct, proxied };
    const init = (s) => ({
      capabilities: s.client.getServerCapabilities(),
      serverInfo: s.client.getServerVersion(),
      instructions: s.client.getInstructions(),
    });
    addRow(name, 'initialize', {}, init(direct), init(proxied), describeInitialize(init(direct), init(proxied)));
    const [directTools, proxiedTools] = await Promise.all([direct.client.listTools(), proxied.client.listTools()]);
    addRow(name, 'tools/list', {}, directTools, proxiedTools, describeToolsList(directTools, proxiedTools));
  }
  for (const [server, tool, args] of SCRIPT) {
    const { direct, proxied } = sessions[server];
    const directResult = await direct.client.callTool({ name: tool, arguments: args });
    const proxiedResult = await proxied.client.callTool({ name: tool, arguments: args });
    for (const result of [directResult, proxiedResult]) {
      if (result.isError) throw new Error(`${tool} failed: ${result.content?.[0]?.text}`);
    }
    addRow(server, tool, args, directResult, proxiedResult, describeCall(directResult, proxiedResult));
    if (tool === 'read_graph') readGraph = proxiedResult;
  }

  // The model reads the next page of the graph: ctxguard answers from its cache.
  const meta = readGraph && metadataOf(readGraph)[0];
  if (!meta?.nextCursor) throw new Error('read_graph was not paginated: no cursor to follow');
  const page = await sessions.memory.proxied.client.callTool({ name: 'ctxguard_fetch', arguments: { cursor: meta.nextCursor } });
  if (page.isError) throw new Error(`ctxguard_fetch failed: ${page.content?.[0]?.text}`);
  const pageMeta = metadataOf(page)[0];
  rows.push({
    server: 'memory',
    call: 'ctxguard_fetch',
    args: 'cursor=<read_graph nextCursor>',
    direct: null,
    proxied: measure(page),
    did: `page: items ${pageMeta.offset}-${pageMeta.offset + pageMeta.pageSize - 1} of ${fmt(pageMeta.totalCount)}`,
  });
} catch (e) {
  process.stderr.write(`demo-session: ${e.message}\n`);
  for (const { proxied } of Object.values(sessions)) process.stderr.write(proxied.stderrText());
  await closeAllSessions();
  process.exit(1);
}
const logs = Object.entries(sessions).map(([name, { proxied }]) => [name, proxied.stderrText()]);
await closeAllSessions();

// ------------------------------------------------------------------------------ the table

const header = ['server', 'call', 'arguments', 'direct bytes', '~tokens', 'via ctxguard bytes', '~tokens', 'what ctxguard did'];
const numeric = new Set([3, 4, 5, 6]);
const cell = (m, key) => (m ? fmt(m[key]) : '—');
const table = rows.map((r) => [r.server, r.call, r.args, cell(r.direct, 'bytes'), cell(r.direct, 'tokens'), cell(r.proxied, 'bytes'), cell(r.proxied, 'tokens'), r.did]);
const sum = (side, key) => rows.reduce((total, r) => total + (r[side]?.[key] ?? 0), 0);
const total = ['TOTAL', `${rows.length} answers`, '', fmt(sum('direct', 'bytes')), fmt(sum('direct', 'tokens')), fmt(sum('proxied', 'bytes')), fmt(sum('proxied', 'tokens')), ''];
const widths = header.map((h, i) => Math.max(h.length, ...[...table, total].map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
const rule = widths.map((w) => '-'.repeat(w)).join('  ');

const graphMeta = metadataOf(readGraph)[0];
const shownMeta = { ...graphMeta, nextCursor: `${graphMeta.nextCursor.slice(0, 24)}…`, otherCuts: graphMeta.otherCuts?.map((c) => ({ ...c, nextCursor: `${c.nextCursor?.slice(0, 24)}…` })) };
const out = [
  `One MCP session, run directly and through ${ctxguard} (token budget ${fmt(graphMeta.tokenBudget)}, the default)`,
  `  server-filesystem on ${dataDir}`,
  `  server-memory with a knowledge graph of ${fmt(GRAPH_ENTITIES)} people (${p(MEMORY_FILE)})`,
  '',
  line(header),
  rule,
  ...table.map(line),
  rule,
  line(total),
  '',
  'bytes = the JSON of the result the client received.',
  countTokens
    ? '~tokens = what a model reads of it (text items + structuredContent), counted with @anthropic-ai/tokenizer.'
    : '~tokens = what a model reads of it (text items + structuredContent), ESTIMATED as characters / 4 * 1.2 (@anthropic-ai/tokenizer is not installed).',
  '',
  'The end of read_graph\'s answer through ctxguard (cursors shortened here):',
  `  "_ctxguard": ${JSON.stringify(shownMeta, null, 2).split('\n').join('\n  ')}`,
  '',
  'ctxguard\'s log (stderr), one line per rewritten or fetched call:',
  ...logs.flatMap(([name, text]) => text.split('\n').filter((l) => l.includes(' call tool=')).map((l) => `  [${name}] ${l.replace(/^\S+ info ctxguard: /, '')}`)),
];
process.stdout.write(`${out.join('\n')}\n`);
