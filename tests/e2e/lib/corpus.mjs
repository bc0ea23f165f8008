// Deterministic test corpora for the summarization, chunking and search tests
// (summarize.test.mjs): an application log with multi-line stack traces, a
// long Markdown document, a deeply nested JSON document with long strings and
// an array of booking records. Same bytes for the same seed on every run; each
// generator also returns what a test needs to know about its structure (where
// log entries start, which strings are long, ...), so that assertions are
// computed from the data and never copied from ctxguard's answers. Also the
// orders of a PostgreSQL table (first-answers.test.mjs and the demo).

import { prng } from './harness.mjs';

const WORDS = (
  'alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega cache token context proxy ' +
  'server client request response stream buffer socket thread mutex signal handler parser schema ' +
  'record index shard replica ledger vector matrix invoice payment refund order basket checkout ' +
  'warehouse parcel courier route region tenant account session gateway backoff timeout'
).split(' ');

// Multi-byte text: 2-byte (ü, é), 3-byte (✓, 東京, —) and 4-byte (😀, 𝄞) UTF-8 sequences.
const UTF8_PHRASES = [
  'Benutzer Jürgen Groß hat sich angemeldet ✓',
  'naïve café order for Zoë — délivré',
  '東京支店の注文を処理しました（合計 3 点）',
  'emoji check 😀🎉 and a clef 𝄞 in the note',
  'Ελληνικά και русский текст в одной строке',
];

/** Picking helpers over one PRNG. */
function picker(seed) {
  const rnd = prng(seed);
  const int = (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = (arr) => arr[Math.floor(rnd() * arr.length)];
  const words = (n) => Array.from({ length: n }, () => pick(WORDS)).join(' ');
  return { rnd, int, pick, words };
}

/** A sentence of `n` words, capitalized, ending in a full stop. */
function sentence(words, n) {
  const s = words(n);
  return s[0].toUpperCase() + s.slice(1) + '.';
}

// ---------------------------------------------------------------- application log

const LOGGERS = ['c.e.orders.OrderService', 'c.e.payments.Gateway', 'c.e.web.RequestFilter', 'c.e.stock.Inventory', 'c.e.auth.TokenStore'];
const FRAMES = [
  'com.example.orders.OrderService.process(OrderService.java:{n})',
  'com.example.orders.OrderController.submit(OrderController.java:{n})',
  'com.example.payments.Gateway.charge(Gateway.java:{n})',
  'com.example.payments.RetryPolicy.run(RetryPolicy.java:{n})',
  'com.example.web.ErrorHandler.handle(ErrorHandler.java:{n})',
  'org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:{n})',
  'java.base/java.util.concurrent.ThreadPoolExecutor.runWorker(ThreadPoolExecutor.java:{n})',
  'java.base/java.lang.Thread.run(Thread.java:{n})',
];
const EXCEPTIONS = [
  'java.lang.IllegalStateException: payment gateway answered 502',
  'com.example.payments.PaymentException: card declined for order',
  'java.util.concurrent.TimeoutException: no answer within 30000 ms',
  'java.lang.NullPointerException: Cannot invoke "Order.total()" because "order" is null',
];
const CAUSES = [
  'Caused by: java.net.SocketException: Connection reset',
  'Caused by: java.io.IOException: Broken pipe',
  'Caused by: javax.net.ssl.SSLHandshakeException: Remote host terminated the handshake',
];

/**
 * An application log of about `targetBytes` bytes: timestamped entries
 * ("2024-03-05 10:11:12.345 INFO  [worker-3] c.e.orders.OrderService - ...")
 * at levels TRACE..ERROR; many ERROR/WARN entries carry Java stack traces
 * ("\tat ..." frames, "Caused by: ..." and "\t... N more" lines) or indented
 * continuation lines; some messages are multi-byte UTF-8; some lines are long
 * (1-3 KB); one entry (`giantEntry`) is a single line of about `giantBytes`
 * bytes of words and sentences, longer than any chunk. Every continuation line
 * starts with a blank, a lowercase letter or "Caused by", so only entry first
 * lines start with a timestamp. Lines end in "\n" (the text too).
 *
 * @returns {{text: string, lines: string[], entries: {first: number, last: number, level: string, bytes: number}[],
 *            entryOfLine: Int32Array, giantEntry: number, traceEntries: number[]}}
 *   `lines` without their "\n", `entries[i].first/last` 1-based line numbers,
 *   `entryOfLine[n]` the entry index of line n (index 0 unused)
 */
export function makeAppLog({ seed = 20240305, targetBytes = 2_000_000, giantBytes = 40_000 } = {}) {
  const { int, pick, words, rnd } = picker(seed);
  const lines = [];
  const entries = [];
  const traceEntries = [];
  let bytes = 0;
  let giantEntry = -1;
  const base = Date.UTC(2024, 2, 5, 8, 0, 0);
  let clock = 0;
  const stamp = () => {
    clock += int(1, 900);
    const d = new Date(base + clock);
    return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 23)}`;
  };
  const push = (entryLines, level) => {
    const first = lines.length + 1;
    let entryBytes = 0;
    for (const l of entryLines) {
      lines.push(l);
      entryBytes += Buffer.byteLength(l) + 1;
    }
    bytes += entryBytes;
    entries.push({ first, last: lines.length, level, bytes: entryBytes });
    return entries.length - 1;
  };
  while (bytes < targetBytes) {
    const n = entries.length;
    const head = (level) => `${stamp()} ${level.padEnd(5)} [worker-${int(0, 15)}] ${pick(LOGGERS)} - `;
    if (giantEntry < 0 && bytes > targetBytes * 0.6) {
      // One entry longer than any chunk: a single line of words and sentences.
      let body = 'payload dump follows: ';
      while (Buffer.byteLength(body) < giantBytes) body += `${sentence(words, int(6, 14))} ${words(int(3, 8))}, ${words(int(2, 5))} `;
      giantEntry = push([head('DEBUG') + body.trimEnd()], 'DEBUG');
      continue;
    }
    const r = rnd();
    if (r < 0.09) {
      // ERROR with a stack trace (sometimes two levels of causes).
      const trace = [head('ERROR') + `failed to process order ${100000 + n}: ${words(int(3, 9))}`, pick(EXCEPTIONS)];
      const frames = int(5, 22);
      for (let f = 0; f < frames; f++) trace.push(`\tat ${pick(FRAMES).replace('{n}', String(int(20, 900)))}`);
      for (let c = 0, causes = int(0, 2); c < causes; c++) {
        trace.push(pick(CAUSES));
        for (let f = 0, k = int(2, 8); f < k; f++) trace.push(`\tat ${pick(FRAMES).replace('{n}', String(int(20, 900)))}`);
        trace.push(`\t... ${int(3, 40)} more`);
      }
      traceEntries.push(push(trace, 'ERROR'));
    } else if (r < 0.14) {
      // WARN with indented continuation lines.
      const cont = [head('WARN') + `retrying request ${n} after ${words(3)}`];
      for (let k = 0, m = int(1, 4); k < m; k++) cont.push(`    attempt ${k + 1}/3: backoff ${int(50, 2000)} ms, ${words(int(2, 6))}`);
      cont.push(`  {"order": ${n}, "tenant": "${pick(WORDS)}", "retries": ${cont.length - 1}}`);
      push(cont, 'WARN');
    } else if (r < 0.2) {
      push([head('INFO') + `${pick(UTF8_PHRASES)} (${words(int(2, 6))})`], 'INFO');
    } else if (r < 0.23) {
      // A long line (1-2.5 KB, well under a chunk of 1,000 tokens) of key=value pairs.
      const parts = [];
      for (let k = 0, m = int(60, 150); k < m; k++) parts.push(`${pick(WORDS)}_${k}=${words(1)}`);
      push([head('DEBUG') + `request attributes ${parts.join(' ')}`], 'DEBUG');
    } else {
      const level = pick(['INFO', 'INFO', 'INFO', 'DEBUG', 'TRACE', 'WARN']);
      push([head(level) + `order ${100000 + n} ${words(int(4, 16))} in ${int(1, 900)} ms`], level);
    }
  }
  const text = lines.join('\n') + '\n';
  const entryOfLine = new Int32Array(lines.length + 1);
  entries.forEach((e, i) => { for (let l = e.first; l <= e.last; l++) entryOfLine[l] = i; });
  return { text, lines, entries, entryOfLine, giantEntry, traceEntries };
}

// ---------------------------------------------------------------- Markdown

/**
 * A Markdown document of about `targetBytes` bytes: headings (# to ####),
 * paragraphs wrapped at about 80 columns, bullet and numbered lists, fenced
 * code blocks (no blank lines inside, no line starting with "#"), block
 * quotes, some multi-byte text. Blank lines are empty. Now and then a heading
 * follows a paragraph line directly, without a blank line in between.
 * @returns {{text: string}}
 */
export function makeMarkdown({ seed = 77, targetBytes = 300_000 } = {}) {
  const { int, pick, words, rnd } = picker(seed);
  const out = ['# The ctxguard operations handbook', '', sentence(words, 20), ''];
  let bytes = 0;
  const add = (block) => {
    out.push(...block);
    bytes += block.reduce((s, l) => s + Buffer.byteLength(l) + 1, 0);
  };
  const paragraph = () => {
    const text = Array.from({ length: int(2, 7) }, () => sentence(words, int(6, 18))).join(' ') + (rnd() < 0.2 ? ` ${pick(UTF8_PHRASES)}.` : '');
    const wrapped = [];
    let line = '';
    for (const w of text.split(' ')) {
      if (line.length + w.length + 1 > 80 && line) { wrapped.push(line); line = w; } else line = line ? `${line} ${w}` : w;
    }
    if (line) wrapped.push(line);
    return wrapped;
  };
  let section = 0;
  while (bytes < targetBytes) {
    section += 1;
    add([`## ${section}. ${words(int(2, 5))}`, '']);
    for (let b = 0, blocks = int(3, 9); b < blocks; b++) {
      const r = rnd();
      if (r < 0.45) {
        const p = paragraph();
        if (rnd() < 0.1) {
          // A heading right after a paragraph line.
          add([...p, `### ${words(int(2, 4))}`, '']);
        } else {
          add([...p, '']);
        }
      } else if (r < 0.6) {
        add([...Array.from({ length: int(3, 9) }, (_, i) => (rnd() < 0.5 ? `- ${words(int(3, 12))}` : `${i + 1}. ${words(int(3, 12))}`)), '']);
      } else if (r < 0.78) {
        const lang = pick(['js', 'python', 'bash', 'json']);
        const code = Array.from({ length: int(4, 28) }, (_, i) => `${'  '.repeat(int(0, 3))}${pick(WORDS)}_${i}(${words(int(1, 3)).replace(/ /g, ', ')}); // ${words(int(1, 5))}`);
        add(['```' + lang, ...code, '```', '']);
      } else if (r < 0.86) {
        add([...paragraph().map((l) => `> ${l}`), '']);
      } else {
        add([`#### ${words(int(2, 4))}`, '', ...paragraph(), '']);
      }
    }
  }
  return { text: out.join('\n') + '\n' };
}

// ---------------------------------------------------------------- nested JSON

/**
 * A JSON document with huge nested objects and long strings: nesting to depth
 * 10 and more, about `longStrings` strings of 5-50 KB (words, sentences, line
 * breaks, tabs, quotes, backslashes and multi-byte text), keys that need
 * escaping in a JSON Pointer ("a/b", "~tilde", "with space"), arrays long
 * enough to be paged (at several depths) and arrays of objects with long text.
 * @returns {{value: object}}
 */
export function makeNestedDocument({ seed = 4242, longStrings = 14 } = {}) {
  const { int, pick, words, rnd } = picker(seed);
  const longString = () => {
    const target = int(5_000, 50_000);
    let s = '';
    while (s.length < target) {
      const r = rnd();
      if (r < 0.08) s += '\n';
      else if (r < 0.12) s += `\t"${pick(WORDS)}" \\ ${pick(UTF8_PHRASES)} `;
      else s += sentence(words, int(5, 15)) + ' ';
    }
    return s;
  };
  const chain = (depth, leaf) => (depth === 0 ? leaf : { [`level${depth}`]: chain(depth - 1, leaf), note: words(int(2, 6)) });
  let made = 0;
  const takeLong = () => { made += 1; return longString(); };
  const value = {
    title: 'nested document for ctxguard',
    version: 3,
    'a/b': { '~tilde': { 'with space': chain(9, { deepest: takeLong(), flags: [true, false, null] }) } },
    config: chain(12, { leaf: 1, list: Array.from({ length: 30 }, (_, i) => ({ i, name: words(2) })) }),
    blobs: Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`blob${i}`, takeLong()])),
    sections: Array.from({ length: 6 }, (_, s) => ({
      id: `sec-${s}`,
      title: words(int(2, 5)),
      body: s < 3 ? takeLong() : words(40),
      subsections: Array.from({ length: int(2, 4) }, (_, k) => ({
        id: `sec-${s}-${k}`,
        detail: chain(6, { text: s === 4 && k === 0 ? takeLong() : words(10), numbers: Array.from({ length: 25 }, (_, i) => i * s + k) }),
      })),
    })),
    matrix: Array.from({ length: 3 }, (_, a) => Array.from({ length: 3 }, (_, b) => Array.from({ length: 3 }, (_, c) => [[a, b, c], { tag: words(2) }]))),
    records: Array.from({ length: 180 }, (_, i) => ({
      id: i,
      name: `${pick(WORDS)}-${i}`,
      tags: Array.from({ length: int(0, 14) }, () => pick(WORDS)),
      history: Array.from({ length: int(0, 3) }, (_, h) => ({ at: `2024-0${1 + (h % 9)}-1${h % 9}`, what: words(int(20, 120)) })),
    })),
  };
  while (made < longStrings) value.blobs[`extra${made}`] = takeLong();
  value.empty = { obj: {}, arr: [], str: '' };
  return { value };
}

// ---------------------------------------------------------------- bookings

export const BOOKING_STATUSES = ['confirmed', 'cancelled', 'pending', 'checked_in', 'no_show', 'refunded'];
const SURNAMES = ['Smith', 'Müller', 'Garcia', 'Smithson', 'Nakamura', 'Okafor', 'Rossi', 'Blacksmith', 'Novak', 'Dubois', 'Kowalski', 'Andersen'];
const GIVEN = ['Anna', 'Ben', 'Chloé', 'David', 'Emre', 'Fatima', 'Greta', 'Hiro', 'Ines', 'Jonas', 'Kai', 'Lena'];

/**
 * `count` booking records {id, status, amount, createdAt, checkIn, checkOut,
 * nights, notes (100-420 characters), customer {name, email, tier, address
 * {street, city, country}}}. Statuses are skewed (some much more frequent than
 * others, six in all); amounts mix integers and decimals; dates are ISO 8601
 * (createdAt with a time, checkIn/checkOut plain dates).
 * @returns {{bookings: object[]}}
 */
export function makeBookings({ seed = 9001, count = 20_000 } = {}) {
  const { int, pick, words, rnd } = picker(seed);
  const weights = [0.46, 0.17, 0.14, 0.11, 0.07, 0.05];
  const status = () => {
    let r = rnd();
    for (let i = 0; i < weights.length; i++) { r -= weights[i]; if (r < 0) return BOOKING_STATUSES[i]; }
    return BOOKING_STATUSES.at(-1);
  };
  const day = Date.UTC(2023, 0, 1);
  const bookings = Array.from({ length: count }, (_, i) => {
    const created = day + int(0, 700) * 86400000 + int(0, 86399) * 1000;
    const nights = int(1, 14);
    const checkIn = created + int(1, 120) * 86400000;
    let notes = '';
    const noteTarget = int(100, 420);
    while (notes.length < noteTarget) notes += sentence(words, int(5, 14)) + (rnd() < 0.03 ? ' Guest asked for a balcony. ' : ' ');
    const surname = pick(SURNAMES);
    return {
      id: `bk_${String(i + 1).padStart(6, '0')}`,
      status: status(),
      amount: rnd() < 0.3 ? int(40, 4000) : Math.round(rnd() * 400000) / 100,
      createdAt: new Date(created).toISOString().replace('.000Z', 'Z'),
      checkIn: new Date(checkIn).toISOString().slice(0, 10),
      checkOut: new Date(checkIn + nights * 86400000).toISOString().slice(0, 10),
      nights,
      notes: notes.trim(),
      customer: {
        name: `${pick(GIVEN)} ${surname}`,
        email: `${pick(GIVEN).toLowerCase()}.${i}@example.com`,
        tier: pick(['bronze', 'silver', 'gold']),
        address: { street: `${int(1, 200)} ${pick(WORDS)} street`, city: pick(['Lisbon', 'Osaka', 'Lagos', 'Berlin', 'Québec']), country: pick(['PT', 'JP', 'NG', 'DE', 'CA']) },
      },
    };
  });
  return { bookings };
}

// ---------------------------------------------------------------- orders (PostgreSQL rows)

export const ORDER_STATUSES = [['paid', 0.52], ['shipped', 0.2], ['pending', 0.12], ['refunded', 0.09], ['cancelled', 0.07]];
const CHANNELS = ['web', 'app', 'store', 'phone', 'partner'];

/** Cents as PostgreSQL writes numeric(10,2): "213.80". */
export const decimalOfCents = (cents) => `${cents / 100n}.${String(cents % 100n).padStart(2, '0')}`;

export const ORDERS_TABLE_SQL =
  'CREATE TABLE orders (id integer PRIMARY KEY, channel text NOT NULL, status text NOT NULL, ' +
  'customer text NOT NULL, total numeric(10,2) NOT NULL, created_at timestamptz NOT NULL)';

/**
 * `count` orders {id, channel, status, customer, cents (BigInt), created (ISO 8601)}; the
 * channel column comes before the status, statuses are skewed. `csv` loads them into
 * ORDERS_TABLE_SQL's table with COPY ... (FORMAT csv, HEADER true).
 * @returns {{orders: object[], csv: string}}
 */
export function makeOrders({ seed = 4242, count = 4000 } = {}) {
  const { rnd, int, pick } = picker(seed);
  const status = () => {
    let r = rnd();
    for (const [name, weight] of ORDER_STATUSES) { r -= weight; if (r < 0) return name; }
    return ORDER_STATUSES.at(-1)[0];
  };
  const orders = Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    channel: pick(CHANNELS),
    status: status(),
    customer: `customer-${String(int(0, 899)).padStart(3, '0')}`,
    cents: BigInt(int(99, 50_098)),
    created: new Date(Date.UTC(2026, 0, 1) + int(0, 300 * 86400 - 1) * 1000).toISOString(),
  }));
  const csv = ['id,channel,status,customer,total,created_at',
    ...orders.map((o) => [o.id, o.channel, o.status, o.customer, decimalOfCents(o.cents), o.created].join(','))].join('\n');
  return { orders, csv };
}
