// Sessions for eras.test.mjs: the SDK v2 client (@modelcontextprotocol/client 2.4.0) in each of its
// version-negotiation modes, or the SDK 1.x client (@modelcontextprotocol/sdk), against
// lib/v2-server.mjs, directly or through ctxguard, with what crossed the wire recorded:
//
//   session.wire         every JSON-RPC message the client sent ('out') or received ('in'), in order,
//                        as the transport handed it over (before the SDK decodes or lifts anything)
//   session.rawLines()   the exact lines the spawned process (ctxguard, or the server) wrote to stdout
//   session.errors       every error the client reported through onerror (a message it refused, ...)
//   session.elicitations the params of every elicitation/create the client's handler answered
//
// In the 'pinned' and 'auto' modes the v2 client probes the server with server/discover on a
// short-lived sibling process spawned from the same command line (a second ctxguard when proxied),
// then starts the session's own process: its wire never carries initialize (nor, unless the test
// sends one, server/discover).

import path from 'node:path';

import { Client as ClientV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as TransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { E2E_DIR, ctxguardBin, parseServerPid, pidAlive, recordWire, watchWayOn } from './harness.mjs';

/** Command line of lib/v2-server.mjs. */
export function v2ServerCommand() {
  return { command: process.execPath, args: [path.join(E2E_DIR, 'lib', 'v2-server.mjs')] };
}

/** The client modes eras.test.mjs runs: SDK v2 with each negotiation mode, and SDK 1.x. */
export const MODES = {
  pinned: { sdk: 'v2', negotiation: { mode: { pin: '2026-07-28' } }, modern: true, label: "SDK v2, versionNegotiation {pin: '2026-07-28'}" },
  auto: { sdk: 'v2', negotiation: { mode: 'auto' }, modern: true, label: "SDK v2, versionNegotiation 'auto'" },
  legacy: { sdk: 'v2', negotiation: { mode: 'legacy' }, modern: false, label: "SDK v2, versionNegotiation 'legacy'" },
  sdk1: { sdk: 'v1', modern: false, label: 'SDK 1.x client' },
};

/** What the client's elicitation handler answers (the confirmation confirm_action asks for). */
export const ELICIT_ANSWER = { action: 'accept', content: { confirm: true, note: 'approved by the e2e client' } };

const live = new Set();

/**
 * Start a session and connect its client.
 * @param {keyof MODES} modeName
 * @param {{proxied?: boolean, ctxguardArgs?: string[], clientName?: string, rawAnswers?: boolean}} [opts]
 *        clientName: the clientInfo.name the client announces (in `initialize`, or in every
 *        request's _meta in 2026-07-28); every tools/call answer of a proxied session is checked
 *        for its way on and handed over without it, unless rawAnswers (harness.mjs, watchWayOn)
 */
export async function openSession(modeName, { proxied = false, ctxguardArgs = [], clientName, rawAnswers = false } = {}) {
  const mode = MODES[modeName];
  if (!mode) throw new Error(`unknown mode ${modeName}`);
  const server = v2ServerCommand();
  const params = proxied
    ? { command: ctxguardBin(), args: [...ctxguardArgs, '--', server.command, ...server.args] }
    : { command: server.command, args: server.args };
  const info = { name: clientName ?? `ctxguard-eras-${modeName}`, version: '1.0.0' };
  const capabilities = { elicitation: { form: {} } };
  let client;
  let transport;
  const elicitations = [];
  const listChanged = [];
  let listChangedWaiters = [];
  const onListChanged = (n) => {
    listChanged.push(n);
    const w = listChangedWaiters;
    listChangedWaiters = [];
    for (const resolve of w) resolve(n);
  };
  if (mode.sdk === 'v2') {
    client = new ClientV2(info, { capabilities, versionNegotiation: mode.negotiation });
    client.setRequestHandler('elicitation/create', async (req) => {
      elicitations.push(req.params);
      return ELICIT_ANSWER;
    });
    client.setNotificationHandler('notifications/tools/list_changed', onListChanged);
    transport = new TransportV2({ ...params, stderr: 'pipe' });
  } else {
    client = new ClientV1(info, { capabilities });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      elicitations.push(req.params);
      return ELICIT_ANSWER;
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, onListChanged);
    transport = new TransportV1({ ...params, stderr: 'pipe' });
  }
  const errors = [];
  client.onerror = (e) => errors.push(e);
  if (proxied) watchWayOn(client, rawAnswers);

  const stderr = [];
  transport.stderr.on('data', (c) => stderr.push(c));
  const stdout = [];
  let proc = null;
  const origStart = transport.start.bind(transport);
  transport.start = () => {
    const p = origStart();
    // Spawned synchronously by start(): listen to its stdout before any data can arrive.
    proc = transport._process;
    proc.stdout.on('data', (c) => stdout.push(c));
    return p;
  };
  const wire = recordWire(transport);

  const stderrText = () => Buffer.concat(stderr).toString('utf8');
  const session = {
    mode,
    modeName,
    proxied,
    client,
    transport,
    wire,
    errors,
    elicitations,
    listChanged,
    /** Resolves with the next notifications/tools/list_changed the client's handler gets. */
    nextListChanged: () => new Promise((resolve) => listChangedWaiters.push(resolve)),
    stderrText,
    rawText: () => Buffer.concat(stdout).toString('utf8'),
    /** Complete lines written to the client's stdin pipe so far. */
    rawLines() {
      const all = Buffer.concat(stdout).toString('utf8').split('\n');
      all.pop();
      return all;
    },
    get pid() { return proc?.pid ?? null; },
    serverPid: () => (proxied ? parseServerPid(stderrText()) : proc?.pid ?? null),
    async close() {
      live.delete(session);
      const pids = [session.pid, session.serverPid()].filter(Boolean);
      try { await client.close(); } catch { /* ignore */ }
      for (const pid of pids) {
        if (pidAlive(pid)) {
          try { process.kill(-pid, 'SIGKILL'); } catch { /* not a group leader */ }
          try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
        }
      }
    },
  };
  live.add(session);
  try {
    await client.connect(transport);
  } catch (err) {
    err.message += proxied ? `\nctxguard stderr:\n${stderrText()}` : `\nserver stderr:\n${stderrText()}`;
    await session.close();
    throw err;
  }
  return session;
}

/** Close every session openSession() started (use in `after`). */
export async function closeAllV2Sessions() {
  await Promise.all([...live].map((s) => s.close()));
}

/** The request messages the client sent with this method (and, for tools/call, tool name). */
export function sentRequests(session, method, toolName) {
  return session.wire
    .filter((w) => w.dir === 'out' && w.msg.method === method && w.msg.id !== undefined)
    .filter((w) => toolName === undefined || w.msg.params?.name === toolName)
    .map((w) => w.msg);
}

/** The response (result or error) the client received to request `request` (matched by id, after it). */
export function responseTo(session, request) {
  const at = session.wire.findIndex((w) => w.dir === 'out' && w.msg === request);
  if (at < 0) throw new Error(`request ${JSON.stringify(request).slice(0, 200)} is not on the wire`);
  const found = session.wire.slice(at + 1).find((w) => w.dir === 'in' && w.msg.id === request.id && w.msg.method === undefined);
  return found?.msg ?? null;
}

/** The last request with this method (and tool) and its response: {request, response}. */
export function lastExchange(session, method, toolName) {
  const request = sentRequests(session, method, toolName).at(-1);
  if (!request) throw new Error(`no ${method} ${toolName ?? ''} request on the wire`);
  return { request, response: responseTo(session, request) };
}

/** Every ctxguard_fetch request on the wire with its response: [{request, response}]. */
export function fetchExchanges(session, fetchTool = 'ctxguard_fetch') {
  return sentRequests(session, 'tools/call', fetchTool).map((request) => ({ request, response: responseTo(session, request) }));
}

/** The raw stdout line that carries the response with this id (the first one after `from` lines). */
export function rawResponseLine(session, id) {
  return session.rawLines().find((l) => {
    try {
      const m = JSON.parse(l);
      return m.id === id && m.method === undefined;
    } catch {
      return false;
    }
  });
}
