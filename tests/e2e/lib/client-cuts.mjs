// What each MCP client shows the model of a tool result, after its own cut: the documented rule
// of every client in docs/clients.md, applied to a CallToolResult. The e2e suite checks
// ctxguard's answers against them: with a client's preset in force its rule cuts nothing, and
// with none (an unknown client, the default budget) whatever a rule cuts, the model still sees
// how to continue (docs/protocol.md, "The way on").
//
// Each rule returns { cut, seen }: whether the client cut (or failed, or wrote the result to a
// file), and the text the model gets to read.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function utf8Bytes(text) {
  return encoder.encode(text).length;
}

/** The first `bytes` bytes of `text` (a character cut in two is dropped), or the last. */
function headBytes(text, bytes) {
  return decoder.decode(encoder.encode(text).slice(0, bytes)).replace(/\uFFFD$/, '');
}
function tailBytes(text, bytes) {
  const all = encoder.encode(text);
  return decoder.decode(all.slice(Math.max(0, all.length - bytes))).replace(/^\uFFFD/, '');
}

function textItems(result) {
  return (result.content ?? []).filter((item) => item.type === 'text').map((item) => item.text);
}

function hasStructured(result) {
  return result.structuredContent !== undefined && result.structuredContent !== null;
}

/**
 * Claude Code (docs/clients.md [1]): it shows `structuredContent`, JSON-encoded, instead of
 * `content` when there is one; a result over 50,000 characters (or 25,000 tokens, taken here at
 * 4 characters a token) is written to a file and the model sees a 2,000-byte preview.
 */
function claudeCode(result) {
  const view = hasStructured(result) ? JSON.stringify(result.structuredContent) : textItems(result).join('\n');
  if (view.length <= 50_000 && Math.ceil(view.length / 4) <= 25_000) return { cut: false, seen: view };
  return { cut: true, seen: headBytes(view, 2_000) };
}

/** Claude Desktop [2]: a result over 1 MiB of JSON fails the call. */
function claudeDesktop(result) {
  if (utf8Bytes(JSON.stringify(result)) <= 1_048_576) return { cut: false, seen: textItems(result).join('\n') };
  return { cut: true, seen: 'Tool result is too large. Maximum size is 1MB.' };
}

/**
 * Codex on a model outside its catalog [3]: `structuredContent` serialized, alone, when there is
 * one, else the text items, in order, against 12,000 bytes: an item within what is left is kept,
 * the first one over is cut in the middle (head and tail kept), every later one omitted.
 */
function codex(result) {
  const items = hasStructured(result) ? [JSON.stringify(result.structuredContent)] : textItems(result);
  let left = 12_000;
  let omitted = 0;
  let cut = false;
  const seen = [];
  for (const text of items) {
    if (left === 0) {
      omitted++;
      continue;
    }
    const bytes = utf8Bytes(text);
    if (bytes <= left) {
      seen.push(text);
      left -= bytes;
      continue;
    }
    const half = Math.floor(left / 2);
    seen.push(`${headBytes(text, half)}…${bytes - 2 * half} bytes truncated…${tailBytes(text, half)}`);
    left = 0;
    cut = true;
  }
  if (omitted > 0) {
    seen.push(`[omitted ${omitted} text items ...]`);
    cut = true;
  }
  return { cut, seen: seen.join('\n') };
}

/** GitHub Copilot CLI [4]: the text items joined, cut to 10 × 1024 bytes, silently. */
function copilotCli(result) {
  const text = textItems(result).join('\n');
  if (utf8Bytes(text) <= 10_240) return { cut: false, seen: text };
  return { cut: true, seen: headBytes(text, 10_240) };
}

/**
 * Gemini CLI [5]: `content` only, each text item wrapped in <untrusted_context>; a result of
 * exactly one text item over 40,000 characters, wrapper included, goes to a file and the model
 * sees its first 8,000 and last 32,000 characters.
 */
function geminiCli(result) {
  const wrapped = textItems(result).map((text) => `<untrusted_context>\n${text}\n</untrusted_context>`);
  if (wrapped.length !== 1 || wrapped[0].length <= 40_000) return { cut: false, seen: wrapped.join('\n') };
  const [only] = wrapped;
  return { cut: true, seen: `${only.slice(0, 8_000)}\n…\n${only.slice(only.length - 32_000)}` };
}

/** VS Code (Copilot Chat) [6]: a text part over 8,192 characters goes to a file, no preview. */
function vsCode(result) {
  let cut = false;
  const seen = textItems(result).map((text) => {
    if (text.length <= 8_192) return text;
    cut = true;
    return '[the tool result was written to a file]';
  });
  return { cut, seen: seen.join('\n') };
}

/** Cline [8]: a text entry over 8,000 characters is cut in the middle. */
function cline(result) {
  let cut = false;
  const seen = textItems(result).map((text) => {
    if (text.length <= 8_000) return text;
    cut = true;
    return `${text.slice(0, 4_000)}...[truncated ${text.length - 8_000} chars]...${text.slice(text.length - 4_000)}`;
  });
  return { cut, seen: seen.join('\n') };
}

/** Every rule, by the `clientInfo.name` its preset matches (lib/config/client_presets.cpp). */
export const CLIENT_CUTS = [
  { name: 'claude-code', cut: claudeCode },
  { name: 'claude-ai', cut: claudeDesktop },
  { name: 'codex-mcp-client', cut: codex },
  { name: 'github-copilot-developer', cut: copilotCli },
  { name: 'gemini-cli-mcp-client', cut: geminiCli },
  { name: 'Visual Studio Code', cut: vsCode },
  { name: 'Visual Studio Code - Insiders', cut: vsCode },
  { name: 'Cline', cut: cline },
];

/** The rule of the client named `name`, or undefined for a client no rule describes. */
export function clientCut(name) {
  return CLIENT_CUTS.find((rule) => rule.name === name)?.cut;
}

/** Every `_ctxguard` object of an answer: in its text items' JSON, and in structuredContent. */
export function metadataOf(result) {
  const found = [];
  const consider = (value) => {
    if (value && typeof value === 'object' && value._ctxguard) found.push(value._ctxguard);
  };
  for (const text of textItems(result)) {
    try {
      consider(JSON.parse(text));
    } catch {
      // plain text
    }
  }
  if (hasStructured(result)) consider(result.structuredContent);
  return found;
}

/** The cursors an answer offers to go on from it: each `_ctxguard`'s first, in order. */
export function waysOn(result) {
  const found = [];
  for (const meta of metadataOf(result)) {
    const key = ['nextCursor', 'resultCursor', 'nextItemsCursor'].find((k) => typeof meta[k] === 'string');
    if (key) found.push(meta[key]);
  }
  return found;
}

/** The cursor an answer offers first to go on from it, if any. */
export function wayOn(result) {
  return waysOn(result)[0];
}

/**
 * Checks the way on of an answer from ctxguard (docs/protocol.md 3.1): one that offers a cursor
 * starts with a text item "ctxguard: ..." naming it, and whatever each client's rule cuts, the
 * model still sees that cursor. Returns the answer without the way on: the data tests read.
 */
export function checkWayOn(result) {
  const cursor = wayOn(result);
  if (!cursor) return result;
  const first = result.content?.[0];
  if (first?.type !== 'text' || !first.text.startsWith('ctxguard: ') || !first.text.includes(`"${cursor}"`)) {
    throw new Error(`an answer with a cursor does not start with its way on: ${JSON.stringify(result).slice(0, 400)}`);
  }
  // A client that shows structuredContent instead of the text sees that part's own cursor.
  const cursors = waysOn(result);
  for (const rule of CLIENT_CUTS) {
    const { seen } = rule.cut(result);
    if (!cursors.some((one) => seen.includes(one))) {
      throw new Error(`${rule.name}'s cut hides the way on: ${seen.slice(0, 400)}`);
    }
  }
  return { ...result, content: result.content.slice(1) };
}
