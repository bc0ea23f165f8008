#!/usr/bin/env node
// stdio <-> Streamable HTTP bridge: an MCP "server" on stdio that relays every
// JSON-RPC line to the Streamable HTTP endpoint given as its argument (the SDK's
// StreamableHTTPClientTransport: session id, SSE streams, the
// MCP-Protocol-Version header once `initialize` is answered) and writes every
// message from there to stdout, one line each. Lets a stdio MCP client — and
// `ctxguard -- node stdio-http-bridge.mjs <url>` between them — meet the HTTP
// servers of the conformance suite's client scenarios
// (lib/conformance-client.mjs).
//
// usage: node stdio-http-bridge.mjs <url>
// CTXGUARD_BRIDGE_DEBUG=1 logs every message both ways on stderr.
import readline from 'node:readline';

import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.argv[2];
if (!url) {
  console.error('usage: node stdio-http-bridge.mjs <url>');
  process.exit(2);
}

// After `notifications/initialized` the transport opens the standalone GET SSE
// stream without waiting for it; messages after that wait until that GET is
// answered (or 2 s), so that a server that sends its requests on that stream
// (e.g. elicitation in elicitation-sep1034-client-defaults) finds it open.
let gate = null;
let openGate = () => {};
const fetchWithGate = async (input, init) => {
  const p = fetch(input, init);
  if ((init?.method ?? 'GET') === 'GET') p.then(() => openGate(), () => openGate());
  return p;
};
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchWithGate });
const initializeIds = new Set();
const debug = process.env.CTXGUARD_BRIDGE_DEBUG ? (dir, msg) => console.error(`bridge ${dir} ${JSON.stringify(msg).slice(0, 300)}`) : () => {};
const write = (msg) => { debug('<-', msg); process.stdout.write(`${JSON.stringify(msg)}\n`); };

transport.onmessage = (msg) => {
  if (msg.id !== undefined && initializeIds.has(msg.id) && msg.result?.protocolVersion) {
    initializeIds.delete(msg.id);
    transport.setProtocolVersion(msg.result.protocolVersion);
  }
  write(msg);
};
transport.onerror = (e) => console.error(`bridge: ${e.message}`);
await transport.start();

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (line.trim() === '') return;
  let msg;
  try { msg = JSON.parse(line); } catch { console.error(`bridge: not JSON: ${line.slice(0, 200)}`); return; }
  debug('->', msg);
  if (msg.method === 'initialize' && msg.id !== undefined) initializeIds.add(msg.id);
  const waitFor = gate;
  if (msg.method === 'notifications/initialized') {
    gate = new Promise((resolve) => {
      const timer = setTimeout(resolve, 2000);
      openGate = () => { clearTimeout(timer); resolve(); };
    });
  }
  Promise.resolve(waitFor).then(() => transport.send(msg)).catch((e) => {
    console.error(`bridge: send failed: ${e.message}`);
    if (msg.method !== undefined && msg.id !== undefined) write({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: `bridge: ${e.message}` } });
  });
});
rl.on('close', async () => {
  try { await transport.terminateSession(); } catch { /* the server may not support DELETE */ }
  await transport.close().catch(() => {});
  process.exit(0);
});
