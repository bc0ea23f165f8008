// Deterministic bulk data that lib/raw-server.mjs writes and the tests check, byte for byte,
// without either side keeping it all in memory.

/**
 * Notification `seq` of a test/stream: exactly `bytes` bytes of JSON (no newline), e.g.
 * {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"seq":7,"pad":"sss…"}}}
 * `bytes` must leave room for the envelope (at least 128).
 */
export function streamLine(seq, bytes) {
  const head = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"seq":${seq},"pad":"`;
  const tail = '"}}}';
  const pad = bytes - head.length - tail.length;
  if (pad < 0) throw new Error(`a stream line of ${bytes} bytes is too short for seq ${seq}`);
  return head + String.fromCharCode(97 + (seq % 26)).repeat(pad) + tail;
}

/** Length of one line of bigText (its "\n" included). */
export const BIG_TEXT_LINE_BYTES = 100;

/**
 * Line `i` of the big text a tools/call can ask raw-server for: BIG_TEXT_LINE_BYTES bytes, ending
 * in "\n", plain ASCII with nothing JSON escapes (so its JSON string is as long as the text).
 */
export function bigTextLine(i) {
  const head = `2024-01-02T03:04:05Z INFO line ${String(i).padStart(9, '0')} `;
  return head + 'x'.repeat(BIG_TEXT_LINE_BYTES - head.length - 1) + '\n';
}

/** The first `count` lines of the big text. */
export function bigTextLines(count) {
  let text = '';
  for (let i = 0; i < count; i++) text += bigTextLine(i);
  return text;
}
