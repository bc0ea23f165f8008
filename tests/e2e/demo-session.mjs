#!/usr/bin/env node
// Demo client: runs one scripted MCP session twice at once, directly against the real servers
// (server-filesystem over a generated data folder, server-memory over a generated knowledge
// graph) and through ctxguard, and prints for every call how much the client received each way
// and what ctxguard did to the answer. Then it shows two answers before and after in detail: an
// application log with stack traces (the first chunk, a line range, a search for "ERROR") and a
// list of bookings (the digest, the projection, a search, one record in full).
//
//   node demo-session.mjs --ctxguard <bin> --data <folder> [--log-level L]
//   node demo-session.mjs --generate --data <folder>      (only create the data folder)
//
// The table goes to stdout, followed by ctxguard's own log lines for the session.

import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

import { FIXED_MTIME, closeAllSessions, connectDirect, connectProxied, makeDataFolder, prng, serverCommand } from './lib/harness.mjs';
import { ORDERS_TABLE_SQL, makeOrders } from './lib/corpus.mjs';
import { startPostgres } from './lib/postgres.mjs';

const USAGE = 'usage: demo-session.mjs --ctxguard <bin> --data <folder> [--log-level <level>] [--telemetry <dir>]\n' +
  '       demo-session.mjs --generate --data <folder>';

// Sizes of the generated data: big enough that answers run to hundreds of thousands of tokens
// (what ctxguard is for), small enough to generate in a few seconds.
const TREE_MODULES = 24;        // src/module_NN/{core,util,io}/
const FILES_PER_DIR = 40;       // -> 2,880 source files
const INBOX_FILES = 2500;       // one flat folder: a list_directory far over the hard cap
const GRAPH_ENTITIES = 2000;    // server-memory knowledge graph
const MEMORY_FILE = path.join('memory', 'graph.jsonl');
const SERVICE_LOG_ENTRIES = 9000;  // logs/service.log: ~1.5 MB, 4% ERROR entries with stack traces
const BOOKINGS = 6000;             // data/bookings.json: ~3 MB, records too wide for ten to fit
const SERVICE_LOG = path.join('logs', 'service.log');
const BOOKINGS_FILE = path.join('data', 'bookings.json');
const INCIDENT_FILE = path.join('data', 'incident.json');

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
      telemetry: { type: 'string' },  // --telemetry-file <dir>/<server>.jsonl for each ctxguard
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

/**
 * An application log as a Java service writes it: one line per entry (timestamp, level, thread,
 * logger, message), and after each ERROR entry its exception with a stack trace (tab-indented
 * "at" lines, "Caused by:", "... N more"): the continuation lines ctxguard's chunks keep with
 * their entry.
 */
function serviceLog(entries) {
  const rnd = prng(7);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const int = (low, high) => low + Math.floor(rnd() * (high - low + 1));
  const booking = () => `bk_${String(int(1, 20000)).padStart(6, '0')}`;
  const day = () => `2026-0${int(4, 9)}-1${int(0, 9)}`;
  const threads = [...Array.from({ length: 12 }, (_, i) => `http-nio-8080-exec-${i + 1}`), 'scheduler-1', 'kafka-consumer-2'];
  const at = (frames) => frames.map((frame) => `\tat ${frame}`);
  const web = at([
    'org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)',
    'org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:885)',
    'org.apache.catalina.core.ApplicationFilterChain.doFilter(ApplicationFilterChain.java:166)',
    'org.apache.coyote.http11.Http11Processor.service(Http11Processor.java:391)',
    'org.apache.tomcat.util.net.NioEndpoint$SocketProcessor.doRun(NioEndpoint.java:1744)',
    'java.base/java.lang.Thread.run(Thread.java:1583)',
  ]);
  const levels = {
    INFO: [
      () => ['c.e.booking.BookingController', `GET /api/bookings/${booking()} 200 in ${int(3, 180)} ms`],
      () => ['c.e.booking.BookingController', `POST /api/bookings 201 in ${int(20, 400)} ms`],
      () => ['c.e.booking.BookingService', `Booking ${booking()} confirmed for guest g_${int(1, 9000)} (${int(1, 9)} nights)`],
      () => ['c.e.search.AvailabilityService', `availability for hotel h_${int(1, 12)} from ${day()}: ${int(0, 40)} rooms`],
      () => ['c.e.notify.MailSender', `confirmation mail queued for ${booking()}`],
    ],
    DEBUG: [
      () => ['c.e.cache.RoomCache', `cache hit room=${int(100, 999)} hotel=h_${int(1, 12)}`],
      () => ['c.e.cache.RoomCache', `cache miss room=${int(100, 999)} hotel=h_${int(1, 12)}; loading`],
    ],
    WARN: [
      () => ['c.e.payment.PaymentClient', `retrying charge for ${booking()} (attempt ${int(2, 3)} of 3) after HTTP 503`],
      () => ['c.e.booking.BookingService', `slow query: findOverlapping took ${int(900, 4000)} ms`],
    ],
    ERROR: [
      () => ['c.e.payment.PaymentService', `Payment failed for booking ${booking()}`, [
        'com.example.payment.PaymentDeclinedException: card declined by issuer (code 05)',
        ...at([
          'com.example.payment.PaymentClient.charge(PaymentClient.java:118)',
          'com.example.payment.PaymentService.capture(PaymentService.java:87)',
          'com.example.booking.BookingService.confirm(BookingService.java:212)',
          'com.example.booking.BookingController.create(BookingController.java:64)',
          'java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(DirectMethodHandleAccessor.java:103)',
          'org.springframework.web.method.support.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:255)',
        ]),
        ...web,
        'Caused by: java.net.SocketTimeoutException: Read timed out',
        ...at([
          'java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)',
          'java.base/java.net.Socket$SocketInputStream.read(Socket.java:1099)',
        ]),
        '\t... 14 more',
      ]],
      () => ['c.e.booking.BookingRepository', `could not save booking ${booking()}`, [
        'org.postgresql.util.PSQLException: ERROR: duplicate key value violates unique constraint "bookings_room_night_key"',
        `  Detail: Key (room_id, night)=(${int(100, 999)}, ${day()}) already exists.`,
        ...at([
          'org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)',
          'org.postgresql.jdbc.PgPreparedStatement.executeUpdate(PgPreparedStatement.java:152)',
          'com.example.booking.BookingRepository.save(BookingRepository.java:141)',
          'com.example.booking.BookingService.confirm(BookingService.java:219)',
          'com.example.booking.BookingController.create(BookingController.java:64)',
        ]),
        ...web,
      ]],
    ],
  };
  let time = Date.UTC(2026, 2, 4, 8, 0, 0);
  const lines = [];
  for (let i = 0; i < entries; i++) {
    time += int(20, 900);
    const r = rnd();
    const level = r < 0.04 ? 'ERROR' : r < 0.12 ? 'WARN' : r < 0.3 ? 'DEBUG' : 'INFO';
    const [logger, message, trace] = pick(levels[level])();
    lines.push(`${new Date(time).toISOString()} ${level.padEnd(5)} [${pick(threads)}] ${logger} - ${message}`);
    if (trace) lines.push(...trace);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * A bookings export: {exportedAt, bookings: [...]}, minified. Each record has 13 fields, two of
 * them nested (guest, history) and one free text (requests): wide enough that ten records do not
 * fit the default budget twice (server-filesystem sends the text twice), so ctxguard must project.
 */
function bookingsExport(count) {
  const rnd = prng(11);
  const pick = (list) => list[Math.floor(rnd() * list.length)];
  const int = (low, high) => low + Math.floor(rnd() * (high - low + 1));
  const hotels = ['Lisboa Centro', 'Porto Ribeira', 'Madrid Sol', 'Sevilla Triana', 'Paris Marais', 'Lyon Presqu\'île',
    'Berlin Mitte', 'Wien Ring', 'Roma Trastevere', 'Milano Brera', 'Amsterdam Canal', 'Praha Staré Město'];
  const statuses = ['confirmed', 'confirmed', 'confirmed', 'confirmed', 'checked_out', 'checked_out', 'cancelled', 'pending', 'no_show'];
  const first = ['Ana', 'João', 'Marie', 'Lukas', 'Sofia', 'Giulia', 'Pieter', 'Jana', 'Carlos', 'Emma', 'Noah', 'Lea', 'Hugo', 'Clara', 'Tomás'];
  const last = ['Silva', 'Martin', 'Müller', 'Rossi', 'García', 'de Vries', 'Novák', 'Dubois', 'Costa', 'Schmidt', 'Bianchi', 'López'];
  const countries = ['PT', 'ES', 'FR', 'DE', 'IT', 'NL', 'CZ', 'AT', 'GB', 'US'];
  const requests = ['late check-in after 23:00', 'quiet room away from the lift', 'extra bed for a child', 'airport transfer on arrival',
    'vegetarian breakfast', 'ground floor if possible', 'anniversary: flowers in the room', 'early check-in requested'];
  const day = 86400000;
  const iso = (ms) => new Date(ms).toISOString().replace('.000', '');
  const bookings = [];
  for (let i = 0; i < count; i++) {
    const nights = int(1, 9);
    const checkIn = Date.UTC(2026, 3, 1) + int(0, 180) * day;
    const created = checkIn - int(2, 120) * day - int(0, 86399) * 1000;
    const rate = int(69, 420);
    const name = `${pick(first)} ${pick(last)}`;
    const status = pick(statuses);
    const history = [{ at: iso(created), event: 'created', by: pick(['web', 'mobile', 'agent', 'phone']) }];
    if (status !== 'pending') history.push({ at: iso(created + int(60, 3600) * 1000), event: 'paid', by: 'payment-service' });
    if (status === 'cancelled') history.push({ at: iso(created + int(1, 20) * day), event: 'cancelled', by: 'guest' });
    bookings.push({
      id: `bk_${String(i + 1).padStart(6, '0')}`,
      status,
      hotel: pick(hotels),
      room: { number: int(1, 8) * 100 + int(1, 40), type: pick(['single', 'double', 'double', 'twin', 'suite']) },
      guest: {
        name,
        email: `${name.toLowerCase().normalize('NFD').replace(/[^a-z ]/g, '').replace(' ', '.')}${int(1, 99)}@example.com`,
        country: pick(countries),
      },
      checkIn: iso(checkIn).slice(0, 10),
      checkOut: iso(checkIn + nights * day).slice(0, 10),
      nights,
      total: rate * nights,
      currency: 'EUR',
      createdAt: iso(created),
      requests: rnd() < 0.5 ? `${pick(requests)}; ${pick(requests)}. Guest asked to be contacted by e-mail before arrival.` : '',
      history,
    });
  }
  return `${JSON.stringify({ exportedAt: '2026-03-31T23:00:00Z', bookings })}\n`;
}

/**
 * One incident report as pretty-printed JSON: long strings (description, notes, root cause) and
 * values nested six levels deep, but no long array: pagination cannot help, summarization must.
 */
function incidentReport() {
  const rnd = prng(5);
  const words = 'the payment service timed out while the booking service retried the capture and the queue kept growing until the consumers were restarted by the on-call engineer'.split(' ');
  const sentence = () => {
    const text = Array.from({ length: 12 + Math.floor(rnd() * 10) }, () => words[Math.floor(rnd() * words.length)]).join(' ');
    return `${text[0].toUpperCase()}${text.slice(1)}.`;
  };
  const sentences = (n) => Array.from({ length: n }, sentence).join(' ');
  const incident = {
    id: 'INC-2041',
    title: 'Payments timing out for EU bookings',
    status: 'resolved',
    severity: 'sev2',
    openedAt: '2026-03-04T08:02:11Z',
    resolvedAt: '2026-03-04T11:47:30Z',
    description: sentences(40),
    timeline: Array.from({ length: 8 }, (_, i) => ({
      at: `2026-03-04T${String(8 + Math.floor(i / 2)).padStart(2, '0')}:${String(10 + i * 5).padStart(2, '0')}:00Z`,
      author: ['ana', 'lukas', 'marie', 'joao'][i % 4],
      note: sentences(6),
    })),
    impact: { region: 'eu-west-1', services: { payments: { endpoints: { capture: { p99Ms: 30000, errorRate: 0.31 }, refund: { p99Ms: 900, errorRate: 0.01 } } } } },
    rootCause: sentences(12),
  };
  return `${JSON.stringify(incident, null, 2)}\n`;
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
  const extra = [[SERVICE_LOG, serviceLog(SERVICE_LOG_ENTRIES)], [BOOKINGS_FILE, bookingsExport(BOOKINGS)], [INCIDENT_FILE, incidentReport()]];
  for (const [file, content] of extra) {
    fs.writeFileSync(path.join(root, file), content);
    fs.utimesSync(path.join(root, file), FIXED_MTIME, FIXED_MTIME);
  }
  for (const dir of ['logs', 'data', '.']) fs.utimesSync(path.join(root, dir), FIXED_MTIME, FIXED_MTIME);
  return { files: info.files + INBOX_FILES + 1 + extra.length, bytes: info.bytes };
}

if (opts.generate) {
  if (fs.existsSync(dataDir) && fs.readdirSync(dataDir).length > 0) fail(`${dataDir} exists and is not empty`);
  const info = generate(dataDir);
  process.stdout.write(`generated ${info.files} files in ${dataDir}\n`);
  process.exit(0);
}

if ([path.join('logs', 'app.log'), MEMORY_FILE, SERVICE_LOG, BOOKINGS_FILE, INCIDENT_FILE].some((file) => !fs.existsSync(path.join(dataDir, file)))) {
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
  if (result === undefined || result === null) return null;
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

/** One short phrase for what ctxguard did to a tools/call answer or a ctxguard_fetch answer. */
function describeCall(direct, proxied) {
  const metas = metadataOf(proxied);
  if (metas.length === 0) return JSON.stringify(direct) === JSON.stringify(proxied) ? 'unchanged' : 'compacted';
  const meta = metas[0];
  if (meta.chunkIndex !== undefined) {
    return `chunk ${meta.chunkIndex + 1} of ${fmt(meta.totalChunks)} (lines ${fmt(meta.startLine)}-${fmt(meta.endLine)})`;
  }
  if (meta.totalMatches !== undefined) {
    const shown = meta.shownMatches ?? meta.indices.length;
    return `search: ${fmt(shown)} of ${fmt(meta.totalMatches)} matching ${meta.indices ? 'items' : 'lines'}`;
  }
  if (meta.startLine !== undefined) return `lines ${fmt(meta.startLine)}-${fmt(meta.endLine)} of ${fmt(meta.totalLines)}`;
  if (meta.valuePath !== undefined) return `the value at ${meta.valuePath}`;
  if (meta.groupsTotal !== undefined) {
    const answer = JSON.parse(proxied.content[0].text);
    return `aggregate: ${fmt(meta.groupsTotal)} group${meta.groupsTotal === 1 ? '' : 's'} of ${fmt(answer.items)} items`;
  }
  if (meta.returnedBytes !== undefined) return `cut: ${fmt(meta.returnedBytes)} of ${fmt(meta.totalBytes)} bytes`;
  const parts = [];
  if (meta.pageSize !== undefined) {
    const others = metas.length - 1 + (meta.otherCuts?.length ?? 0);
    const from = meta.offset === 0 ? '' : ` from ${fmt(meta.offset)}`;
    parts.push(`paginated ${fmt(meta.pageSize)} of ${fmt(meta.totalCount)}${from}${others > 0 ? ` (+${others} more cut${others === 1 ? '' : 's'})` : ''}`);
  }
  for (const projection of meta.projections ?? []) parts.push(`${projection.projectedFields.length} of ${projection.totalFields} fields`);
  if (meta.stringsCut) parts.push(`${meta.stringsCut} strings cut`);
  if (meta.valuesCollapsed) parts.push(`${meta.valuesCollapsed} values collapsed`);
  return parts.join(', ');
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
  ['filesystem', 'read_text_file', { path: p(INCIDENT_FILE) }],
  ['filesystem', 'get_file_info', { path: p('data', 'small.csv') }],
  ['memory', 'search_nodes', { query: 'person_0042' }],
  ['memory', 'read_graph', {}],
];

// A scratch PostgreSQL (stopped at the end) with the orders table: rows as server-postgres
// answers them, numeric totals as decimal strings.
const ORDERS = 4000;
const ORDERS_SQL = 'SELECT id, channel, status, customer, total, created_at FROM orders ORDER BY id';
const postgres = await startPostgres();
if (!postgres) {
  process.stderr.write('demo-session: no PostgreSQL server binaries (scripts/setup.sh installs postgresql-15)\n');
  process.exit(1);
}
postgres.psql(ORDERS_TABLE_SQL);
postgres.copyCsv('orders', makeOrders({ count: ORDERS }).csv);

const servers = {
  filesystem: serverCommand('filesystem', dataDir),
  memory: { ...serverCommand('memory'), env: { ...process.env, MEMORY_FILE_PATH: p(MEMORY_FILE) } },
  postgres: serverCommand('postgres', postgres.url),
};
process.env.CTXGUARD_BIN = ctxguard;  // the harness starts this binary
const ctxguardArgs = ['--log-level', opts['log-level']];

const rows = [];
const addRow = (server, call, args, direct, proxied, did) => {
  rows.push({ server, call, args: typeof args === 'string' ? args : shortArgs(args), direct: measure(direct), proxied: measure(proxied), did });
};
const sessions = {};
const answers = {};  // what the sections after the table show

/** The same call on both sessions; the row; both results. */
async function callBoth(server, tool, args) {
  const { direct, proxied } = sessions[server];
  const directResult = await direct.client.callTool({ name: tool, arguments: args });
  const proxiedResult = await proxied.client.callTool({ name: tool, arguments: args });
  for (const result of [directResult, proxiedResult]) {
    if (result.isError) throw new Error(`${tool} failed: ${result.content?.[0]?.text}`);
  }
  addRow(server, tool, args, directResult, proxiedResult, describeCall(directResult, proxiedResult));
  return { direct: directResult, proxied: proxiedResult };
}

/** A ctxguard_fetch call (through ctxguard only: the server has no such tool); its row. */
async function fetchOnce(server, shownArgs, args) {
  const page = await sessions[server].proxied.client.callTool({ name: 'ctxguard_fetch', arguments: args });
  if (page.isError) throw new Error(`ctxguard_fetch ${JSON.stringify(args)} failed: ${page.content?.[0]?.text}`);
  addRow(server, 'ctxguard_fetch', shownArgs, null, page, describeCall(null, page));
  return { result: page, meta: metadataOf(page)[0] };
}

try {
  for (const [name, cmd] of Object.entries(servers)) {
    const args = opts.telemetry ? [...ctxguardArgs, '--telemetry-file', path.join(opts.telemetry, `${name}.jsonl`)] : ctxguardArgs;
    const [direct, proxied] = await Promise.all([connectDirect(cmd), connectProxied(cmd, args)]);
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
    const { proxied } = await callBoth(server, tool, args);
    if (tool === 'read_graph') answers.graph = proxied;
  }

  // The model reads the next page of the graph: ctxguard answers from its cache.
  const graphMeta = answers.graph && metadataOf(answers.graph)[0];
  if (!graphMeta?.nextCursor) throw new Error('read_graph was not paginated: no cursor to follow');
  await fetchOnce('memory', 'cursor=<nextCursor>', { cursor: graphMeta.nextCursor });

  // (a) A log with stack traces: its first chunk, then exact lines (the first ERROR entry with
  // its stack trace), then a search.
  const log = await callBoth('filesystem', 'read_text_file', { path: p(SERVICE_LOG) });
  const chunk = metadataOf(log.proxied)[0];
  if (chunk?.chunkIndex !== 0) throw new Error('the service log was not chunked');
  const logLines = fs.readFileSync(p(SERVICE_LOG), 'utf8').split('\n');
  const firstError = logLines.findIndex((text) => text.includes(' ERROR ')) + 1;
  let lastLine = firstError;
  // Its continuation lines: the exception and its stack trace, up to the next entry.
  while (lastLine < logLines.length - 1 && !/^\d{4}-\d\d-\d\dT/.test(logLines[lastLine])) lastLine += 1;
  const range = await fetchOnce('filesystem', `startLine=${firstError} endLine=${lastLine}`, { cursor: chunk.nextCursor, startLine: firstError, endLine: lastLine });
  const errors = await fetchOnce('filesystem', 'query=ERROR', { cursor: chunk.nextCursor, query: 'ERROR' });
  answers.log = { direct: log.direct, proxied: log.proxied, chunk, range, errors, lines: logLines.length - 1 };

  // (b) A long list of wide records: digest, projection, a search, one record in full.
  const list = await callBoth('filesystem', 'read_text_file', { path: p(BOOKINGS_FILE) });
  const listMeta = metadataOf(list.proxied)[0];
  if (!listMeta?.projections) throw new Error('the bookings were not projected');
  const query = 'status=cancelled hotel~lisboa guest.country=PT';
  const found = await fetchOnce('filesystem', `query=${query}`.slice(0, 29) + '…', { cursor: listMeta.nextCursor, query, limit: 5 });
  const recordPath = `${listMeta.path}/${found.meta.indices[0]}`;
  const record = await fetchOnce('filesystem', `path=${recordPath}`, { cursor: listMeta.resultCursor, path: recordPath });
  answers.list = { direct: list.direct, proxied: list.proxied, meta: listMeta, query, found, record };

  // (c) Rows from PostgreSQL: "how many are cancelled?" from the first answer, "what is the
  // revenue of the refunded orders?" in one aggregate, and every status at once.
  const rowsAnswer = await callBoth('postgres', 'query', { sql: ORDERS_SQL });
  const rowsMeta = metadataOf(rowsAnswer.proxied)[0];
  if (!rowsMeta?.nextCursor) throw new Error('the orders were not paginated');
  const revenue = await fetchOnce('postgres', 'query=status=refunded aggre…', { cursor: rowsMeta.nextCursor, query: 'status=refunded', aggregate: { sum: 'total' } });
  const byStatus = await fetchOnce('postgres', 'aggregate groupBy=status…', { cursor: rowsMeta.nextCursor, aggregate: { groupBy: 'status', sum: 'total', avg: 'total' } });
  answers.rows = { direct: rowsAnswer.direct, proxied: rowsAnswer.proxied, meta: rowsMeta, revenue, byStatus };
} catch (e) {
  process.stderr.write(`demo-session: ${e.message}\n`);
  for (const { proxied } of Object.values(sessions)) process.stderr.write(proxied.stderrText());
  await closeAllSessions();
  await postgres.stop();
  process.exit(1);
}
const logs = Object.entries(sessions).map(([name, { proxied }]) => [name, proxied.stderrText()]);
await closeAllSessions();
await postgres.stop();

// ------------------------------------------------------------------------------ the output

const header = ['server', 'call', 'arguments', 'direct bytes', '~tokens', 'via ctxguard bytes', '~tokens', 'what ctxguard did'];
const numeric = new Set([3, 4, 5, 6]);
const cell = (m, key) => (m ? fmt(m[key]) : '—');
const table = rows.map((r) => [r.server, r.call, r.args, cell(r.direct, 'bytes'), cell(r.direct, 'tokens'), cell(r.proxied, 'bytes'), cell(r.proxied, 'tokens'), r.did]);
const sum = (side, key) => rows.reduce((total, r) => total + (r[side]?.[key] ?? 0), 0);
const total = ['TOTAL', `${rows.length} answers`, '', fmt(sum('direct', 'bytes')), fmt(sum('direct', 'tokens')), fmt(sum('proxied', 'bytes')), fmt(sum('proxied', 'tokens')), ''];
const widths = header.map((h, i) => Math.max(h.length, ...[...table, total].map((r) => r[i].length)));
const line = (cells) => cells.map((c, i) => (numeric.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
const rule = widths.map((w) => '-'.repeat(w)).join('  ');

const clip = (text, width = 110) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);
const short = (cursor) => (cursor ? `${cursor.slice(0, 16)}…` : cursor);
const indent = (text, pad = '    ') => text.split('\n').map((l) => `${pad}${l}`).join('\n');
/** `_ctxguard` as JSON, cursors shortened, one line per member (nested values on one line). */
const showMeta = (meta) => {
  const members = Object.entries(meta).map(([key, value]) => {
    const shown = /Cursor$/.test(key) ? short(value) : value;
    return `  ${JSON.stringify(key)}: ${JSON.stringify(shown)}`;
  });
  return `{\n${members.join(',\n')}\n}`;
};
const sizeOf = (m) => `${fmt(m.bytes)} bytes, ~${fmt(m.tokens)} tokens`;

const { log: L, list: B, rows: R } = answers;
const aggregateOf = (answer) => JSON.parse(answer.result.content[0].text);
const chunkText = L.proxied.content[0].text;
const rangeText = L.range.result.content[0].text.replace(/\n$/, '').split('\n');
const errorLines = L.errors.result.content[0].text.replace(/\n$/, '').split('\n');
const firstShown = JSON.parse(B.proxied.content[0].text)[B.meta.path.slice(1)][0];
// By count, as ctxguard writes them (JSON.parse puts integer-like keys such as "7" first, in
// ascending order).
const byCount = (top) => Object.entries(top).sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1));
const digest = Object.entries(B.meta.digest ?? {}).map(([field, d]) => (d.top
  ? `${field}: ${byCount(d.top).map(([v, n]) => `${v} ${fmt(n)}`).join(', ')}${d.distinct > Object.keys(d.top).length ? ` (${d.distinct} distinct)` : ''}`
  : `${field}: ${d.min} .. ${d.max}`));
const [projection] = B.meta.projections;

const out = [
  `One MCP session, run directly and through ${ctxguard} (token budget ${fmt(B.meta.tokenBudget)}, the default)`,
  `  server-filesystem on ${dataDir}`,
  `  server-memory with a knowledge graph of ${fmt(GRAPH_ENTITIES)} people (${p(MEMORY_FILE)})`,
  `  server-postgres on a scratch PostgreSQL holding ${fmt(ORDERS)} orders`,
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
  `(a) A log with stack traces: read_text_file ${SERVICE_LOG} (${fmt(L.chunk.totalBytes)} bytes, ${fmt(L.lines)} lines)`,
  `  direct:        ${sizeOf(measure(L.direct))}: the whole file, as text and again as structuredContent`,
  `  via ctxguard:  ${sizeOf(measure(L.proxied))}: chunk 1 of ${fmt(L.chunk.totalChunks)}, lines ${L.chunk.startLine}-${L.chunk.endLine}, ending before the entry at line ${L.chunk.endLine + 1}:`,
  indent(chunkText.replace(/\n$/, '').split('\n').slice(-2).map((l) => clip(l)).join('\n'), '    … '),
  '  then the trailing text item {"_ctxguard": ...} (cursors shortened here):',
  indent(showMeta(L.chunk)),
  `  ctxguard_fetch {cursor, startLine: ${L.range.meta.startLine}, endLine: ${L.range.meta.endLine}}: the first ERROR entry with its stack trace:`,
  ...rangeText.slice(0, 4).map((l, i) => `    ${String(L.range.meta.startLine + i).padStart(5)}  ${clip(l.replace(/\t/g, '    '))}`),
  `           … ${rangeText.length - 5} more lines …`,
  `    ${String(L.range.meta.endLine).padStart(5)}  ${clip(rangeText.at(-1).replace(/\t/g, '    '))}`,
  `  ctxguard_fetch {cursor, query: "ERROR"}: ${fmt(L.errors.meta.totalMatches)} matching lines (any case), ${fmt(L.errors.meta.shownMatches)} in this answer, as "LINE: text":`,
  ...errorLines.slice(0, 4).map((l) => `    ${clip(l.replace(/\t/g, '    '))}`),
  '    …',
  '',
  `(b) A long list: read_text_file ${BOOKINGS_FILE} (${fmt(B.meta.totalCount)} bookings of ${projection.totalFields} fields)`,
  `  direct:        ${sizeOf(measure(B.direct))}: every booking, as text and again as structuredContent`,
  `  via ctxguard:  ${sizeOf(measure(B.proxied))}: bookings ${B.meta.offset}-${B.meta.offset + B.meta.pageSize - 1}, each with ${projection.projectedFields.length} of its ${projection.totalFields} fields, and in _ctxguard:`,
  `    summary      ${JSON.stringify(B.meta.summary)}`,
  ...digest.map((d, i) => `    ${i === 0 ? 'digest      ' : '            '} ${clip(d, 120)}`),
  `    projections  ${B.meta.projections.length} at ${projection.path}: kept ${projection.projectedFields.join(', ')}; omitted ${projection.omittedFields.join(', ')}`,
  '  the first booking as shown:',
  `    ${JSON.stringify(firstShown)}`,
  `  ctxguard_fetch {cursor, query: "${B.query}"}: ${fmt(B.found.meta.totalMatches)} matches, at indices ${B.found.meta.indices.join(', ')}${B.found.meta.hasMore ? ', …' : ''}`,
  `  ctxguard_fetch {cursor: resultCursor, path: "${B.record.meta.valuePath}"}: that booking in full, omitted fields included:`,
  `    ${JSON.stringify(JSON.parse(B.record.result.content[0].text), (key, value) => (key === '_ctxguard' ? undefined : value))}`,
  '',
  `(c) Rows from PostgreSQL: query "${ORDERS_SQL}" (${fmt(R.meta.totalCount)} orders)`,
  `  direct:        ${sizeOf(measure(R.direct))}: every row, totals as PostgreSQL writes numeric ("${JSON.parse(R.direct.content[0].text)[0].total}")`,
  `  via ctxguard:  ${sizeOf(measure(R.proxied))}: orders ${R.meta.offset}-${R.meta.offset + R.meta.pageSize - 1}, and in _ctxguard:`,
  `    summary      ${JSON.stringify(R.meta.summary)}`,
  `    hint         …${clip(R.meta.hint.slice(R.meta.hint.indexOf(' To count or sum')), 140)}`,
  `  ctxguard_fetch {cursor, query: "status=refunded", aggregate: {sum: "total"}}: the revenue of the refunded orders, summed exactly:`,
  `    ${JSON.stringify(aggregateOf(R.revenue).groups)}`,
  '  ctxguard_fetch {cursor, aggregate: {groupBy: "status", sum: "total", avg: "total"}}:',
  ...aggregateOf(R.byStatus).groups.map((g) => `    ${JSON.stringify(g)}`),
  '',
  'ctxguard\'s log (stderr), one line per rewritten or fetched call:',
  ...logs.flatMap(([name, text]) => text.split('\n').filter((l) => l.includes(' call tool=')).map((l) => `  [${name}] ${l.replace(/^\S+ info ctxguard: /, '')}`)),
];
process.stdout.write(`${out.join('\n')}\n`);
