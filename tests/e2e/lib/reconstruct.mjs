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
