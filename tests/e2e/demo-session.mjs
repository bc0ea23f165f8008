#!/usr/bin/env node
// Demo client: a real MCP SDK client talks to server-filesystem through
// ctxguard, runs a short scripted session and prints how big each answer is.
//
//   node demo-session.mjs --ctxguard <bin> --data <folder> [--log-level L]
//   node demo-session.mjs --direct --data <folder>        (no ctxguard, baseline)
//   node demo-session.mjs --generate --data <folder>      (only create the data folder)
//
// The table goes to stdout; ctxguard's log goes to stderr.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

import { makeDataFolder, serverCommand } from './lib/harness.mjs';

const USAGE = 'usage: demo-session.mjs (--ctxguard <bin> | --direct) --data <folder> [--log-level <level>]\n' +
  '       demo-session.mjs --generate --data <folder>';

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
      direct: { type: 'boolean', default: false },
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

if (opts.generate) {
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) fail(`${dataDir} exists and is not empty`);
  const info = makeDataFolder(dataDir);
  process.stdout.write(`generated ${info.files} files, ${info.bytes} bytes in ${dataDir}\n`);
  process.exit(0);
}

if (!fs.existsSync(path.join(dataDir, 'logs', 'app.log'))) {
  fail(`${dataDir} is not a demo data folder (generate one with --generate or scripts/demo-data.sh)`);
}
if (!opts.direct && !opts.ctxguard) fail('give --ctxguard <bin> (or --direct for a baseline without ctxguard)');

const server = serverCommand('filesystem', dataDir);
const params = opts.direct
  ? { command: server.command, args: server.args }
  : { command: path.resolve(opts.ctxguard), args: ['--log-level', opts['log-level'], '--', server.command, ...server.args] };

const p = (...parts) => path.join(dataDir, ...parts);
const SCRIPT = [
  ['list_directory', { path: p() }],
  ['directory_tree', { path: p() }],
  ['read_text_file', { path: p('logs', 'app.log') }],
  ['read_text_file', { path: p('logs', 'app.log'), tail: 20 }],
  ['search_files', { path: p(), pattern: '**/*.md' }],
  ['get_file_info', { path: p('data', 'big.json') }],
];

const client = new Client({ name: 'ctxguard-demo', version: '1.0.0' }, { capabilities: {} });
const transport = new StdioClientTransport({ ...params, stderr: 'inherit' });

const rows = [];
const measure = (call, args, answer) => {
  const json = JSON.stringify(answer);
  rows.push({ call, args, bytes: Buffer.byteLength(json), tokens: Math.ceil(json.length / 4) });
};
const shortArgs = (args) => {
  const text = Object.entries(args)
    .map(([k, v]) => `${k}=${typeof v === 'string' && v.startsWith(dataDir) ? path.relative(dataDir, v) || '.' : JSON.stringify(v)}`)
    .join(' ');
  return text.length > 34 ? `${text.slice(0, 33)}…` : text;
};

try {
  await client.connect(transport);
  const v = client.getServerVersion();
  measure('initialize', {}, { serverInfo: v, capabilities: client.getServerCapabilities(), instructions: client.getInstructions() });
  measure('tools/list', {}, await client.listTools());
  for (const [name, args] of SCRIPT) {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError) throw new Error(`${name} failed: ${result.content?.[0]?.text}`);
    measure(name, args, result);
  }
} catch (e) {
  process.stderr.write(`demo-session: ${e.message}\n`);
  await client.close().catch(() => {});
  process.exit(1);
}
await client.close();

const fmt = (n) => n.toLocaleString('en-US');
const header = ['call', 'arguments', 'answer bytes', '~tokens'];
const table = rows.map((r) => [r.call, shortArgs(r.args), fmt(r.bytes), fmt(r.tokens)]);
const total = ['TOTAL', `${rows.length} answers`, fmt(rows.reduce((s, r) => s + r.bytes, 0)), fmt(rows.reduce((s, r) => s + r.tokens, 0))];
const widths = header.map((h, i) => Math.max(h.length, ...[...table, total].map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => (i >= 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
const rule = widths.map((w) => '-'.repeat(w)).join('  ');

const out = [
  `MCP session with server-filesystem on ${dataDir}`,
  opts.direct ? 'connection: direct (no ctxguard)' : `connection: through ${params.command}`,
  '',
  line(header),
  rule,
  ...table.map(line),
  rule,
  line(total),
  '',
  '~tokens = characters of the JSON answer / 4 (a rough estimate of the context it would use)',
];
process.stdout.write(`${out.join('\n')}\n`);
