// Rebuilding a server's original answer from ctxguard's shortened answers.
//
// ctxguard keeps a tools/call result within the token budget by cutting long
// arrays (JSON answers) or by cutting text into pieces (plain text over the
// hard cap). Every cut carries a cursor; `ctxguard_fetch {cursor}` returns the
// next page or piece from ctxguard's cache. These helpers walk every cursor of
// an answer and put the original back together, so a test can check that
// nothing the server said became unreachable: the rebuilt value must
// deep-equal JSON.parse of the direct (unproxied) answer's text, and rebuilt
// text must equal the direct text byte for byte.
//
// JSON answers (see the wire contract in docs/protocol.md):
//   first answer   the server's JSON with `_ctxguard` added at the top level;
//                  a top-level array comes as {items: [...], _ctxguard: {wrapped: true, ...}}
//   _ctxguard      {path, offset, totalCount, pageSize, hasMore, nextCursor?,
//                   otherCuts?: [{path, offset, totalCount, pageSize, hasMore, nextCursor?}],
//                   estimatedTokens, tokenBudget, budgetUsed, budgetRemaining, hint}
//   fetched page   {items: [...], _ctxguard: {same fields; path/offset say where the items go}}
//   `path` is an RFC 6901 pointer into the ORIGINAL server JSON ("" = the top-level array).
//
// Algorithm (reconstructJson): start from the first answer's JSON without
// `_ctxguard` (unwrapping `items` when `wrapped`), then process a FIFO queue
// of cuts (the primary cut, then otherCuts). For a cut with a nextCursor, call
// ctxguard_fetch, check that the page starts where the rebuilt array ends,
// append its items to the array at `path`, and enqueue the page's own
// continuation (its nextCursor) and its otherCuts (nested arrays shortened
// inside the page's items, with absolute paths). Items are appended before
// their nested cuts are processed, so every path resolves when its turn comes.

/** The `_ctxguard` member name. */
export const META_KEY = '_ctxguard';

/** Decode one RFC 6901 pointer into its reference tokens ("" -> []). */
export function parsePointer(pointer) {
  if (pointer === '') return [];
  if (typeof pointer !== 'string' || !pointer.startsWith('/')) throw new Error(`not a JSON pointer: ${JSON.stringify(pointer)}`);
  return pointer.slice(1).split('/').map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at `pointer` inside `root` (throws if a step is missing). */
export function getAt(root, pointer) {
  let v = root;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(v)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= v.length) throw new Error(`pointer ${pointer}: no index ${token}`);
      v = v[Number(token)];
    } else if (v && typeof v === 'object') {
      if (!Object.hasOwn(v, token)) throw new Error(`pointer ${pointer}: no member ${token}`);
      v = v[token];
    } else {
      throw new Error(`pointer ${pointer}: cannot step into ${JSON.stringify(v)}`);
    }
  }
  return v;
}

/**
 * Split a first answer's parsed JSON into the server's value as shown and its
 * `_ctxguard` metadata: `_ctxguard` removed, and a wrapped top-level array
 * ({items, _ctxguard: {wrapped: true}}) unwrapped. (Pages are always
 * {items, _ctxguard}; read their `items` directly.) Returns {value, meta},
 * meta null when the answer has none.
 */
export function splitMeta(json) {
  if (!json || typeof json !== 'object' || Array.isArray(json) || !Object.hasOwn(json, META_KEY)) {
    return { value: json, meta: null };
  }
  const meta = json[META_KEY];
  if (meta.wrapped === true) return { value: json.items, meta };
  const value = { ...json };
  delete value[META_KEY];
  return { value, meta };
}

/**
 * The structuredContent of server-filesystem's kind ({content: <the text>}) once ctxguard has
 * rewritten that text into the JSON answer `json`: the answer's value in the member (a page of a
 * top-level array: its items), readable rather than escaped in a string, after its `_ctxguard`
 * (docs/protocol.md 4).
 */
export function wrappedAnswer(json, member = 'content') {
  const { value, meta } = splitMeta(json);
  return meta ? { [META_KEY]: meta, [member]: value } : { [member]: value };
}

/** Text of the content item `index` of a tools/call result (throws if it is not text). */
export function textOf(result, index = 0) {
  const item = result?.content?.[index];
  if (!item || item.type !== 'text') throw new Error(`content[${index}] is not a text item: ${JSON.stringify(result).slice(0, 300)}`);
  return item.text;
}

/** The fields of a cut that a queue entry needs. */
function cutOf(c) {
  return { path: c.path, offset: c.offset, pageSize: c.pageSize, totalCount: c.totalCount, hasMore: c.hasMore, nextCursor: c.nextCursor };
}

/**
 * Call ctxguard_fetch and return the raw tool result; throws (with the text)
 * when the result is an isError result.
 */
export async function fetchPage(client, args, { fetchTool = 'ctxguard_fetch' } = {}) {
  const r = await client.callTool({ name: fetchTool, arguments: args });
  if (r.isError) throw new Error(`${fetchTool} ${JSON.stringify(args).slice(0, 200)} failed: ${JSON.stringify(r.content)}`);
  return r;
}

/**
 * Rebuild the original JSON of a shortened tools/call answer.
 *
 * @param {import('@modelcontextprotocol/sdk/client/index.js').Client} client the proxied client
 * @param {object} firstResult the tools/call result as received through ctxguard
 * @param {object} [opts]
 * @param {number} [opts.index=0] content item holding the JSON text
 * @param {number} [opts.limit] `limit` for every ctxguard_fetch (default: ctxguard's page size)
 * @param {string} [opts.fetchTool='ctxguard_fetch']
 * @param {(page: {result: object, json: object, meta: object, cut: object}) => void} [opts.onPage]
 *        called for every fetched page (e.g. to check its budget fields)
 * @param {number} [opts.maxFetches=100000] safety stop against a cursor loop
 * @returns {Promise<{value: any, meta: object|null, fetches: number, pages: object[]}>}
 *          `pages` holds the `_ctxguard` of every fetched page, in order
 */
export async function reconstructJson(client, firstResult, opts = {}) {
  const { index = 0, limit, fetchTool = 'ctxguard_fetch', onPage, maxFetches = 100000 } = opts;
  const first = JSON.parse(textOf(firstResult, index));
  const { value, meta } = splitMeta(first);
  const pages = [];
  if (!meta) return { value, meta: null, fetches: 0, pages };

  // The rebuilt value must not alias the parsed answer (callers may inspect it).
  const root = structuredClone(value);
  const queue = [cutOf(meta), ...(meta.otherCuts ?? []).map(cutOf)];
  let fetches = 0;
  while (queue.length > 0) {
    const cut = queue.shift();
    const target = getAt(root, cut.path);
    if (!Array.isArray(target)) throw new Error(`cut path ${JSON.stringify(cut.path)} is not an array in the rebuilt value`);
    if (target.length !== cut.offset + cut.pageSize) {
      throw new Error(`array at ${JSON.stringify(cut.path)} has ${target.length} items, the cut says offset ${cut.offset} + pageSize ${cut.pageSize}`);
    }
    if (!cut.hasMore) {
      if (cut.nextCursor !== undefined) throw new Error(`cut at ${JSON.stringify(cut.path)} has a nextCursor but hasMore is false`);
      if (target.length !== cut.totalCount) throw new Error(`array at ${JSON.stringify(cut.path)} ends at ${target.length} of ${cut.totalCount}`);
      continue;
    }
    if (typeof cut.nextCursor !== 'string') throw new Error(`cut at ${JSON.stringify(cut.path)} has hasMore but no nextCursor`);
    if (++fetches > maxFetches) throw new Error(`more than ${maxFetches} fetches: cursor loop?`);
    const args = { cursor: cut.nextCursor };
    if (limit !== undefined) args.limit = limit;
    const result = await fetchPage(client, args, { fetchTool });
    if (result.content?.length === 2) {
      // One item alone over the budget comes as text pieces of its JSON, then the items after it
      // continue with nextItemsCursor (docs/protocol.md, section 5).
      const head = JSON.parse(textOf(result, 1))[META_KEY];
      let text = textOf(result, 0);
      let piece = head;
      while (piece.hasMore) {
        if (++fetches > maxFetches) throw new Error(`more than ${maxFetches} fetches: cursor loop?`);
        const next = await fetchPage(client, { cursor: piece.nextCursor }, { fetchTool });
        text += textOf(next, 0);
        piece = JSON.parse(textOf(next, 1))[META_KEY];
      }
      if (head.item?.path !== cut.path || head.item?.index !== target.length) {
        throw new Error(`item piece ${JSON.stringify(head.item)} does not continue ${JSON.stringify(cut.path)} at ${target.length}`);
      }
      target.push(JSON.parse(text));
      if (head.nextItemsCursor) {
        queue.push({ path: cut.path, offset: target.length, pageSize: 0, totalCount: cut.totalCount, hasMore: true, nextCursor: head.nextItemsCursor });
      }
      continue;
    }
    const json = JSON.parse(textOf(result));
    const page = json[META_KEY];
    if (!page || !Array.isArray(json.items)) throw new Error(`fetched page is not {items, _ctxguard}: ${textOf(result).slice(0, 300)}`);
    if (page.path !== cut.path) throw new Error(`page path ${JSON.stringify(page.path)} != cut path ${JSON.stringify(cut.path)}`);
    if (page.offset !== target.length) throw new Error(`page at ${JSON.stringify(cut.path)} starts at ${page.offset}, the rebuilt array has ${target.length} items`);
    if (page.pageSize !== json.items.length) throw new Error(`page at ${JSON.stringify(cut.path)} says pageSize ${page.pageSize} but has ${json.items.length} items`);
    if (page.totalCount !== cut.totalCount) throw new Error(`page totalCount ${page.totalCount} != cut totalCount ${cut.totalCount}`);
    if (json.items.length === 0) throw new Error(`empty page at ${JSON.stringify(cut.path)} offset ${page.offset}`);
    onPage?.({ result, json, meta: page, cut });
    pages.push(page);
    target.push(...json.items);
    queue.push(cutOf(page), ...(page.otherCuts ?? []).map(cutOf));
  }
  return { value: root, meta, fetches, pages };
}

/**
 * Rebuild plain text cut at the hard cap: each answer is
 * [{type: 'text', text: piece}, {type: 'text', text: '{"_ctxguard": {offset, returnedBytes, totalBytes, hasMore, nextCursor?, ...}}'}].
 * Follows nextCursor until hasMore is false, checking that every piece starts
 * where the previous one ended (byte offsets into the UTF-8 text).
 *
 * @param {object} client the proxied client
 * @param {object} firstResult the tools/call result as received through ctxguard
 * @param {{fetchTool?: string, onPiece?: (piece: {result: object, text: string, meta: object}) => void, maxFetches?: number}} [opts]
 * @returns {Promise<{text: string, pieces: number, metas: object[]}>}
 */
export async function reconstructText(client, firstResult, opts = {}) {
  const { fetchTool = 'ctxguard_fetch', onPiece, maxFetches = 100000 } = opts;
  const chunks = [];
  const metas = [];
  let bytes = 0;
  let result = firstResult;
  for (let fetches = 0; ; fetches++) {
    const { text, meta } = splitTextPiece(result);
    if (meta.offset !== bytes) throw new Error(`piece starts at byte ${meta.offset}, expected ${bytes}`);
    const pieceBytes = Buffer.byteLength(text, 'utf8');
    // Chunks (text over the chunk size) say bytesInChunk; pieces cut at the hard cap say returnedBytes.
    const isChunk = meta.chunkIndex !== undefined;
    const said = isChunk ? meta.bytesInChunk : meta.returnedBytes;
    if (said !== pieceBytes) throw new Error(`${isChunk ? 'bytesInChunk' : 'returnedBytes'} ${said} but the piece has ${pieceBytes} bytes`);
    if (isChunk) checkChunk(meta, metas.at(-1), chunks.at(-1), text);
    onPiece?.({ result, text, meta });
    metas.push(meta);
    chunks.push(text);
    bytes += pieceBytes;
    if (!meta.hasMore) {
      if (meta.nextCursor !== undefined) throw new Error('last piece has a nextCursor');
      if (bytes !== meta.totalBytes) throw new Error(`pieces hold ${bytes} bytes, totalBytes is ${meta.totalBytes}`);
      break;
    }
    if (typeof meta.nextCursor !== 'string') throw new Error('piece has hasMore but no nextCursor');
    if (fetches >= maxFetches) throw new Error(`more than ${maxFetches} fetches: cursor loop?`);
    result = await fetchPage(client, { cursor: meta.nextCursor }, { fetchTool });
  }
  return { text: chunks.join(''), pieces: chunks.length, metas };
}

/**
 * The chunk fields of one chunk's `_ctxguard` against the previous chunk's: indexes count up from
 * 0, lines continue where the previous chunk ended (a chunk that ends inside a line, only possible
 * when one line is longer than a chunk, shares that line with the next), and the line count matches
 * the piece's own line breaks.
 */
function checkChunk(meta, previous, previousText, text) {
  const expectedIndex = previous ? previous.chunkIndex + 1 : 0;
  if (meta.chunkIndex !== expectedIndex) throw new Error(`chunkIndex ${meta.chunkIndex}, expected ${expectedIndex}`);
  if (previous && meta.totalChunks !== previous.totalChunks) throw new Error(`totalChunks changed from ${previous.totalChunks} to ${meta.totalChunks}`);
  if (meta.hasMore !== meta.chunkIndex + 1 < meta.totalChunks) throw new Error(`hasMore ${meta.hasMore} at chunk ${meta.chunkIndex} of ${meta.totalChunks}`);
  if (previous) {
    const continues = meta.startLine === previous.endLine + 1 || (!previousText.endsWith('\n') && meta.startLine === previous.endLine);
    if (!continues) throw new Error(`chunk ${meta.chunkIndex} starts at line ${meta.startLine}, the previous one ended at line ${previous.endLine}`);
  } else if (meta.startLine !== 1) {
    throw new Error(`the first chunk starts at line ${meta.startLine}`);
  }
  const breaks = (text.match(/\n/g) ?? []).length;
  const endsAtBreak = text.endsWith('\n');
  const spanned = meta.endLine - meta.startLine + 1;
  // A chunk ending in "\n" spans as many lines as it has breaks; one ending mid-line, one more.
  if (spanned !== breaks + (endsAtBreak ? 0 : 1)) {
    throw new Error(`chunk ${meta.chunkIndex} says lines ${meta.startLine}-${meta.endLine} but holds ${breaks} line breaks`);
  }
}

/** {text, meta} of a text piece answer (two text items: the piece, then `{"_ctxguard": {...}}`). */
export function splitTextPiece(result) {
  const content = result?.content;
  if (!Array.isArray(content) || content.length !== 2 || content.some((c) => c.type !== 'text')) {
    throw new Error(`not a text piece answer: ${JSON.stringify(result).slice(0, 300)}`);
  }
  const trailer = JSON.parse(content[1].text);
  if (!trailer || Object.keys(trailer).length !== 1 || !trailer[META_KEY]) {
    throw new Error(`second item is not {"_ctxguard": ...}: ${content[1].text.slice(0, 300)}`);
  }
  return { text: content[0].text, meta: trailer[META_KEY] };
}

// ---------------------------------------------------------------- summarized answers
//
// When pages alone do not bring an answer within the budget, ctxguard also
// summarizes what it shows (lib/pipeline/fit/summarize.hpp, fetch/fetch_tool.hpp):
//   cut string      "prefix…[+N chars: PTR]"    N code points left out after the prefix
//   collapsed value "[object of N keys: PTR]" / "[array of N items: PTR]" (also "1 key", "1 item");
//                   an object holding arrays names its largest: "[object of N keys (KEY: M items): PTR]"
//   projection      records keep some fields: _ctxguard.projections =
//                   [{path, projectedFields, omittedFields, totalFields}], `path` the array
//                   whose shown items (or the one object) lost fields; dotted projected fields
//                   ("customer.name") keep only part of that member
//   _ctxguard       also stringsCut, valuesCollapsed (how many of each the answer shows) and
//                   resultCursor (a cursor to the whole cached value)
// PTR and `path` are RFC 6901 pointers into the ORIGINAL value. Any value comes back in full
// through ctxguard_fetch {cursor: resultCursor, path: PTR}:
//   a string       text pieces: [{text: piece}, {text: '{"_ctxguard": {offset, returnedBytes,
//                  totalBytes, hasMore, nextCursor?}}'}]
//   an array       pages {items, _ctxguard: {path, offset, totalCount, pageSize, hasMore,
//                  nextCursor?, ...}} from item 0
//   an object      the object with `_ctxguard: {valuePath, ...}` added (its own arrays cut,
//                  strings cut, fields projected like a first answer)
//   too large      (an object, or one item of a page, over the budget even summarized) text
//                  pieces of its minified JSON; for an item, the trailer names it ({item: {path,
//                  index, totalCount}}) and nextItemsCursor continues with the items after it
// and `fields` on a fetch of an array (or an object) keeps exactly those fields of its records.
//
// Algorithm (resolveSummarized): every answer is a *frame*: the value it shows at a pointer (a
// first answer: the root; a value answer: valuePath) or the items of one page (offset..offset
// +pageSize of the array at `path`). A frame is resolved in three steps, each fetch giving a
// new frame that is resolved the same way (recursively) before its content is used:
//   1. placeholders: every cut string and collapsed value in the frame (recognised by its own
//      pointer at its own place) is replaced by the full value fetched by path; their numbers
//      must equal stringsCut and valuesCollapsed;
//   2. projections: the omitted fields (and the members that dotted fields show only in part)
//      of the frame's records are fetched with `fields` for the same items, and merged by index;
//   3. page cuts: every array cut in the frame (otherCuts, and the primary one of a value frame)
//      is completed from its nextCursor, page after page; a page frame's own continuation is
//      followed by whoever fetched it.

/** RFC 6901 reference token of a key. */
function escapeToken(key) {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

const CUT_STRING_RE = /…\[\+(\d+) chars: $/u;

/** Code points of a string. */
function codePoints(s) {
  let n = 0;
  for (const _ of s) n += 1;
  return n;
}

/** If `s` is the cut-string stand-in for pointer `ptr`: {prefix, left}; else null. */
export function parseCutString(s, ptr) {
  const tail = `${ptr}]`;
  if (typeof s !== 'string' || !s.endsWith(tail)) return null;
  const head = s.slice(0, s.length - tail.length);
  const m = CUT_STRING_RE.exec(head);
  if (!m) return null;
  return { prefix: head.slice(0, m.index), left: Number(m[1]) };
}

/** If `s` is the collapsed stand-in for pointer `ptr`: {kind: 'object'|'array', size}; else null. */
export function parseCollapsed(s, ptr) {
  if (typeof s !== 'string' || !s.endsWith(`: ${ptr}]`)) return null;
  const m = /^\[(object) of (\d+) keys?(?: \((?:[\w.-]+|"(?:[^"\\]|\\.)*"): \d+ items?\))?: |^\[(array) of (\d+) items?: /.exec(s);
  if (!m || s.length !== m[0].length + ptr.length + 1) return null;
  return { kind: m[1] ?? m[3], size: Number(m[2] ?? m[4]) };
}

/** True when `result` is a text piece answer: [{text}, {text: '{"_ctxguard": ...}'}]. */
function isPieceAnswer(result) {
  if (result?.content?.length !== 2 || result.content.some((c) => c.type !== 'text')) return false;
  try {
    const v = JSON.parse(result.content[1].text);
    return v !== null && typeof v === 'object' && Object.keys(v).length === 1 && Object.hasOwn(v, META_KEY);
  } catch {
    return false;
  }
}

/**
 * Rebuild the whole original JSON of a summarized (and possibly paginated and
 * projected) tools/call answer: see the algorithm above.
 *
 * @param {object} client the proxied client
 * @param {object} firstResult the tools/call result as received through ctxguard
 * @param {object} [opts]
 * @param {number} [opts.index=0] content item holding the JSON text
 * @param {string} [opts.fetchTool='ctxguard_fetch']
 * @param {(answer: {args: object, result: object, meta: object}) => void} [opts.onAnswer]
 *        called for every ctxguard_fetch answer with its `_ctxguard` (from the JSON, or from the
 *        trailing item of a text piece), e.g. to check the budget
 * @param {number} [opts.maxFetches=100000] safety stop against a cursor loop
 * @returns {Promise<{value: any, meta: object|null, fetches: number, counts: {strings: number,
 *          collapsed: number, projections: number, pages: number, pieces: number}}>}
 */
export async function resolveSummarized(client, firstResult, opts = {}) {
  const { index = 0, fetchTool = 'ctxguard_fetch', onAnswer, maxFetches = 100000 } = opts;
  const ctx = {
    fetches: 0,
    counts: { strings: 0, collapsed: 0, projections: 0, pages: 0, pieces: 0 },
    resultCursor: null,
    async call(args) {
      if (++ctx.fetches > maxFetches) throw new Error(`more than ${maxFetches} fetches: cursor loop?`);
      const result = await fetchPage(client, args, { fetchTool });
      const meta = isPieceAnswer(result) ? JSON.parse(result.content[1].text)[META_KEY] : JSON.parse(textOf(result))[META_KEY];
      if (!meta) throw new Error(`answer without _ctxguard to ${JSON.stringify(args).slice(0, 200)}: ${JSON.stringify(result).slice(0, 300)}`);
      onAnswer?.({ args, result, meta });
      return result;
    },
  };
  if (isPieceAnswer(firstResult)) {
    // Cut as text at the hard cap: the pieces are the minified JSON.
    const { text } = await reconstructText(client, firstResult, { fetchTool });
    return { value: JSON.parse(text), meta: splitTextPiece(firstResult).meta, fetches: ctx.fetches, counts: ctx.counts };
  }
  const { value, meta } = splitMeta(JSON.parse(textOf(firstResult, index)));
  if (!meta) return { value, meta: null, fetches: 0, counts: ctx.counts };
  ctx.resultCursor = meta.resultCursor ?? null;
  const holder = { value: structuredClone(value) };
  await resolveFrame(ctx, { kind: 'value', base: '', holder }, meta, null);
  return { value: holder.value, meta, fetches: ctx.fetches, counts: ctx.counts };
}

/** {parent, key} of the value at absolute `pointer` inside `frame`, or null when it is not in the frame. */
function locate(frame, pointer) {
  const tokens = parsePointer(pointer);
  const base = parsePointer(frame.base);
  if (tokens.length < base.length || base.some((t, i) => tokens[i] !== t)) return null;
  let parent;
  let key;
  let rest;
  if (frame.kind === 'page') {
    if (tokens.length === base.length) return null;
    const i = Number(tokens[base.length]) - frame.offset;
    if (!Number.isInteger(i) || i < 0 || i >= frame.items.length) return null;
    [parent, key, rest] = [frame.items, i, tokens.slice(base.length + 1)];
  } else {
    [parent, key, rest] = [frame.holder, 'value', tokens.slice(base.length)];
  }
  for (const token of rest) {
    const v = parent[key];
    if (Array.isArray(v)) {
      if (!/^(0|[1-9]\d*)$/.test(token) || Number(token) >= v.length) return null;
      [parent, key] = [v, Number(token)];
    } else if (v && typeof v === 'object' && Object.hasOwn(v, token)) {
      [parent, key] = [v, token];
    } else {
      return null;
    }
  }
  return { parent, key };
}

/** Every (parent, key, pointer) of the frame's strings, depth first. */
function stringsOf(frame) {
  const found = [];
  const walk = (parent, key, pointer) => {
    const v = parent[key];
    if (typeof v === 'string') found.push({ parent, key, pointer, value: v });
    else if (Array.isArray(v)) v.forEach((_, i) => walk(v, i, `${pointer}/${i}`));
    else if (v && typeof v === 'object') for (const k of Object.keys(v)) walk(v, k, `${pointer}/${escapeToken(k)}`);
  };
  if (frame.kind === 'page') frame.items.forEach((_, i) => walk(frame.items, i, `${frame.base}/${frame.offset + i}`));
  else walk(frame.holder, 'value', frame.base);
  return found;
}

/** Resolve one frame in place (see the algorithm above). `args`: the fetch that gave a page frame. */
/** {columns, rows} (--tables) back to the array of objects it stands for. */
export function fromTable(table) {
  if (!table || !Array.isArray(table.columns) || !Array.isArray(table.rows)) throw new Error(`not a table: ${JSON.stringify(table).slice(0, 200)}`);
  return table.rows.map((row) => {
    if (!Array.isArray(row) || row.length !== table.columns.length) throw new Error(`table row ${JSON.stringify(row).slice(0, 100)} does not match ${table.columns.length} columns`);
    return Object.fromEntries(table.columns.map((c, i) => [c, row[i]]));
  });
}

async function resolveFrame(ctx, frame, meta, args) {
  const resultCursor = meta.resultCursor ?? ctx.resultCursor;
  // 0. Arrays of uniform records shown as tables (a page's own items were turned back already).
  for (const path of meta.tables ?? []) {
    if (frame.kind === 'page' && path === frame.base) continue;
    const at = locate(frame, path);
    if (!at) throw new Error(`table path ${JSON.stringify(path)} is not in the answer`);
    at.parent[at.key] = fromTable(at.parent[at.key]);
    ctx.counts.tables = (ctx.counts.tables ?? 0) + 1;
  }
  // 1. Placeholders.
  let strings = 0;
  let collapsed = 0;
  for (const s of stringsOf(frame)) {
    const cut = parseCutString(s.value, s.pointer);
    const fold = cut ? null : parseCollapsed(s.value, s.pointer);
    if (!cut && !fold) continue;
    if (!resultCursor) throw new Error(`${s.pointer} is shortened but the answer has no resultCursor`);
    if (cut) {
      strings += 1;
      const full = await fetchString(ctx, resultCursor, s.pointer);
      if (!full.startsWith(cut.prefix)) throw new Error(`the full string at ${s.pointer} does not start with the prefix shown`);
      const left = codePoints(full) - codePoints(cut.prefix);
      // The prefix drops the blanks before the cut; they count in N.
      if (left !== cut.left) throw new Error(`${s.pointer}: the stand-in says +${cut.left} chars, the full string has ${left} more`);
      s.parent[s.key] = full;
    } else {
      collapsed += 1;
      const full = await fetchValue(ctx, resultCursor, s.pointer);
      const size = fold.kind === 'array' ? (Array.isArray(full) ? full.length : -1) : (full && typeof full === 'object' && !Array.isArray(full) ? Object.keys(full).length : -1);
      if (size !== fold.size) throw new Error(`${s.pointer}: the stand-in says ${fold.kind} of ${fold.size}, fetched ${JSON.stringify(full).slice(0, 100)}`);
      s.parent[s.key] = full;
    }
  }
  if (strings !== (meta.stringsCut ?? 0)) throw new Error(`stringsCut ${meta.stringsCut} but ${strings} cut strings shown`);
  if (collapsed !== (meta.valuesCollapsed ?? 0)) throw new Error(`valuesCollapsed ${meta.valuesCollapsed} but ${collapsed} collapsed values shown`);
  ctx.counts.strings += strings;
  ctx.counts.collapsed += collapsed;

  // 2. Projections.
  for (const projection of meta.projections ?? []) {
    ctx.counts.projections += 1;
    const need = [...new Set([...projection.omittedFields, ...projection.projectedFields.filter((f) => f.includes('.')).map((f) => f.split('.')[0])])];
    const kept = new Set(projection.projectedFields.map((f) => f.split('.')[0]));
    let records;
    let fetchArgs;
    if (frame.kind === 'page' && projection.path === frame.base) {
      records = frame.items;
      fetchArgs = { ...args, fields: need, limit: records.length };
    } else {
      const at = locate(frame, projection.path);
      if (!at) throw new Error(`projection path ${JSON.stringify(projection.path)} is not in the answer`);
      const target = at.parent[at.key];
      if (!Array.isArray(target)) {
        // One object projected: its missing members, as an object with those fields.
        for (const k of Object.keys(target)) if (!kept.has(k)) throw new Error(`${projection.path}: member ${k} shown but not in projectedFields`);
        const full = await fetchValue(ctx, resultCursor, projection.path, need);
        for (const k of need) if (Object.hasOwn(full, k)) target[k] = full[k];
        continue;
      }
      records = target;
      fetchArgs = { cursor: resultCursor, path: projection.path, fields: need, limit: records.length };
    }
    for (const r of records) {
      for (const k of Object.keys(r)) if (!kept.has(k)) throw new Error(`${projection.path}: member ${k} shown but not in projectedFields`);
    }
    const start = frame.kind === 'page' && projection.path === frame.base ? frame.offset : 0;
    const rest = [];
    await followPages(ctx, fetchArgs, projection.path, rest, records.length, start);
    records.forEach((r, i) => {
      for (const k of need) if (Object.hasOwn(rest[i], k)) r[k] = rest[i][k];
    });
  }

  // 3. Page cuts: otherCuts, and the primary cut of a value frame.
  const cuts = [...(frame.kind === 'value' && typeof meta.path === 'string' && meta.totalCount !== undefined ? [meta] : []), ...(meta.otherCuts ?? [])];
  for (const cut of cuts) {
    const at = locate(frame, cut.path);
    if (!at) throw new Error(`cut path ${JSON.stringify(cut.path)} is not in the answer`);
    const target = at.parent[at.key];
    if (!Array.isArray(target)) throw new Error(`cut path ${JSON.stringify(cut.path)} is not an array`);
    if (target.length !== cut.offset + cut.pageSize) throw new Error(`array at ${cut.path} shows ${target.length} items, the cut says ${cut.offset} + ${cut.pageSize}`);
    if (!cut.hasMore) continue;
    await followPages(ctx, { cursor: cut.nextCursor }, cut.path, target, cut.totalCount, 0);
    if (target.length !== cut.totalCount) throw new Error(`array at ${cut.path} rebuilt to ${target.length} of ${cut.totalCount} items`);
  }
}

/**
 * Fetch pages of the array at `path` from `args` on, each resolved as a page frame, appending
 * their items to `target` until it holds `count` items or the array ends. `start`: the index of
 * the array that target[0] stands for; `first`: the answer to `args` when already fetched.
 */
async function followPages(ctx, args, path, target, count, start, first = null) {
  while (target.length < count) {
    const result = first ?? (await ctx.call(args));
    first = null;
    const at = start + target.length;
    if (isPieceAnswer(result)) {
      // One item alone over the budget: its JSON in pieces.
      const head = splitTextPiece(result).meta;
      if (head.item?.path !== path || head.item?.index !== at) throw new Error(`item piece ${JSON.stringify(head.item)} is not item ${at} of ${path}`);
      target.push(JSON.parse(await readPieces(ctx, result)));
      if (!head.nextItemsCursor) break;
      args = { cursor: head.nextItemsCursor };
      continue;
    }
    const json = JSON.parse(textOf(result));
    const meta = json[META_KEY];
    // A page of uniform records may come as a table (--tables).
    if (meta?.tables?.includes(path) && !Array.isArray(json.items)) json.items = fromTable(json.items);
    if (!meta || !Array.isArray(json.items)) throw new Error(`not a page: ${textOf(result).slice(0, 300)}`);
    if (meta.path !== path || meta.offset !== at || meta.pageSize !== json.items.length || json.items.length === 0) {
      throw new Error(`page ${JSON.stringify({ path: meta.path, offset: meta.offset, pageSize: meta.pageSize, items: json.items.length })} does not continue ${path} at ${at}`);
    }
    ctx.counts.pages += 1;
    await resolveFrame(ctx, { kind: 'page', base: path, offset: meta.offset, items: json.items }, meta, args);
    target.push(...json.items);
    if (!meta.hasMore) break;
    args = { cursor: meta.nextCursor };
  }
  if (target.length > count) target.length = count;
}

/** The whole text of a piece answer and the pieces after it (offsets checked). */
async function readPieces(ctx, result) {
  let text = '';
  let bytes = 0;
  for (;;) {
    const { text: piece, meta } = splitTextPiece(result);
    if (meta.offset !== bytes) throw new Error(`piece starts at byte ${meta.offset}, expected ${bytes}`);
    if (meta.returnedBytes !== Buffer.byteLength(piece)) throw new Error(`returnedBytes ${meta.returnedBytes} but the piece has ${Buffer.byteLength(piece)} bytes`);
    ctx.counts.pieces += 1;
    text += piece;
    bytes += meta.returnedBytes;
    if (!meta.hasMore) {
      if (bytes !== meta.totalBytes) throw new Error(`pieces hold ${bytes} bytes, totalBytes is ${meta.totalBytes}`);
      return text;
    }
    result = await ctx.call({ cursor: meta.nextCursor });
  }
}

/** The full string at `pointer`. */
async function fetchString(ctx, resultCursor, pointer) {
  const result = await ctx.call({ cursor: resultCursor, path: pointer });
  if (!isPieceAnswer(result)) throw new Error(`the string at ${pointer} did not come as text pieces`);
  return readPieces(ctx, result);
}

/** The full object or array at `pointer` (an object with only `fields`, when given). */
async function fetchValue(ctx, resultCursor, pointer, fields) {
  const args = { cursor: resultCursor, path: pointer };
  if (fields) args.fields = fields;
  const result = await ctx.call(args);
  if (isPieceAnswer(result)) return JSON.parse(await readPieces(ctx, result));
  const json = JSON.parse(textOf(result));
  const meta = json[META_KEY];
  if (meta?.valuePath === undefined) {
    // An array: pages from item 0.
    const items = [];
    await followPages(ctx, args, pointer, items, Infinity, 0, result);
    if (items.length !== meta.totalCount) throw new Error(`array at ${pointer} rebuilt to ${items.length} of ${meta.totalCount} items`);
    return items;
  }
  if (meta.valuePath !== pointer) throw new Error(`valuePath ${meta.valuePath}, asked for ${pointer}`);
  const holder = { value: splitMeta(json).value };
  await resolveFrame(ctx, { kind: 'value', base: pointer, holder }, meta, args);
  return holder.value;
}
