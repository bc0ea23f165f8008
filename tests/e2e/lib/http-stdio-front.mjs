// A Streamable HTTP front for a stdio MCP server, for the MCP conformance
// suite (which only speaks HTTP to servers). Every HTTP session (one per
// `initialize`) spawns its own child process — the stdio server, or
// `ctxguard -- <stdio server>` — and relays JSON-RPC messages both ways, one
// line each, without looking into them:
//
//   HTTP client (conformance) -> SDK StreamableHTTPServerTransport -> child stdin
//   child stdout -> the same transport, on the SSE stream of the request a
//                   message belongs to:
//     - a response: its request's stream (the transport routes it by id);
//     - notifications/progress: the stream of the request that sent its
//       progressToken;
//     - any other notification or server request: the stream of the newest
//       client request still unanswered, or the standalone GET stream if none
//       is (stdio carries no "related request", so this is the front's guess;
//       it is the same guess for both children).
//
// Sessions end with DELETE, or when the front closes; the child's stdin is then
// closed and, after a grace period, the child is killed.
//
// CLI (manual runs): node http-stdio-front.mjs [--port N] -- <command> [args...]
// prints the URL of the endpoint on stdout.

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

const isRequest = (m) => m && typeof m.method === 'string' && m.id !== undefined;
const isNotification = (m) => m && typeof m.method === 'string' && m.id === undefined;
const isResponse = (m) => m && m.method === undefined && m.id !== undefined && ('result' in m || 'error' in m);

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function jsonError(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}

/**
 * Start the front on 127.0.0.1.
 * @param {{command: string, args?: string[], env?: object, port?: number, path?: string, onStderr?: (sessionId, text) => void}} opts
 * @returns {Promise<{url: string, close(): Promise<void>, sessions: Map<string, object>, stats: object}>}
 */
export async function startHttpFront({ command, args = [], env, port = 0, path = '/mcp', onStderr } = {}) {
  const sessions = new Map(); // session id -> session
  const stats = { sessions: 0, toChild: 0, fromChild: 0, unroutable: 0, badLines: 0 };
  let allowedHosts = [];

  function newSession() {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], env: env ?? process.env });
    stats.sessions += 1;
    const pending = []; // ids of client requests not yet answered, oldest first
    const progress = new Map(); // progressToken -> request id
    const stderr = [];
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableDnsRebindingProtection: true,
      allowedHosts,
      onsessioninitialized: (id) => { sessions.set(id, session); },
    });
    const session = { child, transport, stderrText: () => Buffer.concat(stderr).toString('utf8'), closed: false };

    child.stdin.on('error', () => {});
    child.stderr.on('data', (c) => { stderr.push(c); onStderr?.(transport.sessionId, c.toString('utf8')); });
    child.on('error', (e) => { stderr.push(Buffer.from(`spawn error: ${e.message}\n`)); });
    child.on('exit', () => { if (!session.closed) transport.close().catch(() => {}); });

    transport.onmessage = (msg) => {
      if (isRequest(msg)) {
        pending.push(msg.id);
        const token = msg.params?._meta?.progressToken;
        if (token !== undefined) progress.set(token, msg.id);
      }
      stats.toChild += 1;
      child.stdin.write(`${JSON.stringify(msg)}\n`);
    };
    transport.onclose = () => { endSession(session); };

    let buf = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim() === '') continue;
        let msg;
        try { msg = JSON.parse(line); } catch { stats.badLines += 1; continue; }
        stats.fromChild += 1;
        let related;
        if (isResponse(msg)) {
          const i = pending.indexOf(msg.id);
          if (i >= 0) pending.splice(i, 1);
          for (const [t, id] of progress) if (id === msg.id) progress.delete(t);
        } else if (isNotification(msg) && msg.method === 'notifications/progress' && progress.has(msg.params?.progressToken)) {
          related = progress.get(msg.params.progressToken);
        } else if (pending.length > 0) {
          related = pending[pending.length - 1];
        }
        transport.send(msg, related === undefined ? undefined : { relatedRequestId: related }).catch(() => { stats.unroutable += 1; });
      }
    });
    return session;
  }

  function endSession(session) {
    if (session.closed) return;
    session.closed = true;
    if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
    const { child } = session;
    child.stdin.end();
    if (child.exitCode === null && child.signalCode === null) {
      const timer = setTimeout(() => { try { child.kill('SIGKILL'); } catch { /* gone */ } }, 3000);
      child.once('exit', () => clearTimeout(timer));
    }
  }

  const server = http.createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://front');
      if (url.pathname !== path) { res.writeHead(404).end(); return; }
      const sid = req.headers['mcp-session-id'];
      let body;
      if (req.method === 'POST') {
        const text = await readBody(req);
        try { body = JSON.parse(text); } catch { jsonError(res, 400, -32700, 'Parse error'); return; }
      }
      if (sid !== undefined) {
        const session = sessions.get(sid);
        if (!session) { jsonError(res, 404, -32001, 'Session not found'); return; }
        await session.transport.handleRequest(req, res, body);
        return;
      }
      const opensSession = req.method === 'POST' && (Array.isArray(body) ? body : [body]).some((m) => m?.method === 'initialize');
      if (!opensSession) { jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided'); return; }
      const session = newSession();
      await session.transport.handleRequest(req, res, body);
      // An initialize the transport refused (Host, headers, ...) leaves no session: drop its child.
      if (!session.transport.sessionId || !sessions.has(session.transport.sessionId)) endSession(session);
    } catch (e) {
      if (!res.headersSent) jsonError(res, 500, -32603, `Internal error: ${e.message}`);
      else res.end();
    }
  });
  await new Promise((resolve, reject) => { server.once('error', reject); server.listen(port, '127.0.0.1', resolve); });
  const actualPort = server.address().port;
  allowedHosts.push(`127.0.0.1:${actualPort}`, `localhost:${actualPort}`);

  return {
    url: `http://127.0.0.1:${actualPort}${path}`,
    sessions,
    stats,
    async close() {
      for (const s of [...sessions.values()]) {
        await s.transport.close().catch(() => {});
        endSession(s);
      }
      server.closeAllConnections?.();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const argv = process.argv.slice(2);
  const dd = argv.indexOf('--');
  if (dd < 0 || dd === argv.length - 1) {
    console.error('usage: node http-stdio-front.mjs [--port N] -- <command> [args...]');
    process.exit(2);
  }
  const pi = argv.indexOf('--port');
  const port = pi >= 0 && pi < dd ? Number(argv[pi + 1]) : 0;
  const [command, ...args] = argv.slice(dd + 1);
  const front = await startHttpFront({ command, args, port, onStderr: (_id, t) => process.stderr.write(t) });
  console.log(front.url);
  const stop = () => front.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
