// server-everything: the same session run directly and through ctxguard must
// give JSON-equal answers, including server-to-client requests (sampling,
// elicitation, roots, client-side tasks) and progress notifications, except
// where the wire contract (docs/protocol.md) has ctxguard change a message:
// the initialize result's `instructions` (ctxguard's paragraph in front) and
// tools/list (no outputSchema, ctxguard_fetch last). Those are compared with
// the direct answer transformed by the contract. Every tool result in this
// suite is far below the token budget, so it must come back unchanged (the
// rewriting of large results is covered by pagination.test.mjs and, for
// tasks/result, tasks.test.mjs).
//
// Every tool is called (the last test checks that). Two need a stand-in:
//  - gzip-file-as-resource fetches its default http(s) URL, and the test
//    machine has no network: it is called with a data: URL instead.
//  - trigger-url-elicitation wants a human to open a browser: the client's
//    elicitation handler answers "accept" instead (request path and the
//    -32042 error path are both covered).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import {
  FULL_CLIENT_CAPABILITIES,
  closeAllSessions,
  connectDirect,
  connectProxied,
  normalize,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
} from './lib/harness.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 30_000 };

const FETCH = 'ctxguard_fetch';
// The paragraph ctxguard puts in front of the server's instructions (docs/protocol.md, section 8).
const CTXGUARD_PARAGRAPH = 'Tool results pass through ctxguard, which keeps each one within a token budget. A long result may '
  + 'come back shortened, with a `_ctxguard` object saying what was cut. To read more, call `ctxguard_fetch` with `cursor` set '
  + 'to `_ctxguard.nextCursor`; it answers from a cache, without running the tool again. Add `limit` for fewer items per page '
  + 'or `fields` to keep only some keys. A cursor expires after a while: then call the original tool again.';

/** The tools/list result the contract expects through ctxguard: no outputSchema, ctxguard_fetch appended (single page). */
function assertProxiedToolList(p, d) {
  assert.equal(d.nextCursor, undefined, 'a single page (ctxguard_fetch goes on the last one)');
  assert.ok(d.tools.some((t) => t.outputSchema), 'the server lists tools with an outputSchema (or this check proves little)');
  assert.equal(p.tools.at(-1)?.name, FETCH, 'ctxguard_fetch is listed last');
  assert.equal(p.tools.filter((t) => t.name === FETCH).length, 1);
  assert.deepEqual(p.tools.at(-1).inputSchema.required, ['cursor']);
  assert.deepEqual({ ...p, tools: p.tools.slice(0, -1) }, { ...d, tools: d.tools.map(({ outputSchema, ...rest }) => rest) });
}

const ROOTS = [
  { uri: 'file:///tmp/ctxguard-e2e/root-a', name: 'Root A' },
  { uri: 'file:///tmp/ctxguard-e2e/root-b', name: 'Root B' },
];

/** Per-session client options: full capabilities, a task store and answering handlers. */
function clientOptions(log) {
  const taskStore = new InMemoryTaskStore();
  log.taskStore = taskStore;
  log.requests = [];
  log.notifications = [];
  // Answer now, or - when the server asks for a client-side task - create a
  // task, complete it shortly after and return the CreateTaskResult.
  const answer = async (request, extra, result) => {
    if (request.params?.task) {
      const task = await extra.taskStore.createTask({ ttl: request.params.task.ttl });
      setTimeout(() => { extra.taskStore.storeTaskResult(task.taskId, 'completed', result).catch(() => {}); }, 20);
      return { task };
    }
    return result;
  };
  return {
    capabilities: FULL_CLIENT_CAPABILITIES,
    taskStore,
    setup(client) {
      client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
        log.requests.push({ method: request.method, params: request.params });
        const prompt = request.params.messages.map((m) => m.content.text).join(' | ');
        return answer(request, extra, {
          model: 'e2e-test-model',
          role: 'assistant',
          stopReason: 'endTurn',
          content: { type: 'text', text: `sampled answer to: ${prompt}` },
        });
      });
      client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        log.requests.push({ method: request.method, params: request.params });
        if (request.params.mode === 'url') return answer(request, extra, { action: 'accept' });
        if (request.params.requestedSchema?.properties?.interpretation) {
          // simulate-research-query asks which meaning of an ambiguous topic is wanted.
          return answer(request, extra, { action: 'accept', content: { interpretation: 'programming' } });
        }
        return answer(request, extra, {
          action: 'accept',
          content: {
            name: 'Ada Lovelace',
            check: true,
            email: 'ada@example.com',
            integer: 7,
            number: 2.5,
            favoriteColor: 'Blue',
            agreeToTerms: true,
          },
        });
      });
      client.setRequestHandler(ListRootsRequestSchema, async (request) => {
        log.requests.push({ method: request.method, params: request.params ?? null });
        return { roots: ROOTS };
      });
      for (const schema of [LoggingMessageNotificationSchema, ToolListChangedNotificationSchema, ResourceListChangedNotificationSchema]) {
        client.setNotificationHandler(schema, (n) => { log.notifications.push(n); });
      }
    },
  };
}

// Dynamic resources embed `new Date().toLocaleTimeString()`; blobs hold the
// same text base64-encoded. Replace the time so that two sessions compare equal.
const TIME_RE = /created at \d{1,2}:\d{2}:\d{2}(\s?[AP]M)?/g;
function untime(v) {
  if (Array.isArray(v)) return v.map(untime);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'blob' && typeof x === 'string') {
        const text = Buffer.from(x, 'base64').toString('utf8');
        o[k] = TIME_RE.test(text) ? `<base64 of: ${text.replace(TIME_RE, 'created at <TIME>')}>` : x;
        TIME_RE.lastIndex = 0;
      } else {
        o[k] = untime(x);
      }
    }
    return o;
  }
  return typeof v === 'string' ? v.replace(TIME_RE, 'created at <TIME>') : v;
}
const norm = (v) => normalize(untime(v), { uuids: true, isoTimes: true });

describe('server-everything direct vs through ctxguard', { skip: SKIP, timeout: 90_000 }, () => {
  const cmd = serverCommand('everything');
  const dlog = {};
  const plog = {};
  let direct;
  let proxied;

  /** Run the same async call on both sessions (concurrently) and return [direct, proxied]. */
  const onBoth = (fn) => Promise.all([fn(direct.client, dlog), fn(proxied.client, plog)]);
  /** Run the call on both sessions and assert the (normalized) results are deep-equal. */
  const same = async (fn, { expectError = false } = {}) => {
    const settle = (c, log) => Promise.resolve().then(() => fn(c, log)).then(
      (ok) => ({ ok }),
      (e) => ({ error: { name: e.name, code: e.code, message: e.message, data: e.data } }));
    const [d, p] = await onBoth(settle);
    assert.deepEqual(norm(p), norm(d));
    if (expectError) {
      assert.ok(d.error, `expected an error, got ${JSON.stringify(d).slice(0, 300)}`);
      return d.error;
    }
    assert.ok(!d.error, `direct call failed: ${JSON.stringify(d.error)}`);
    return d.ok;
  };
  const callTool = (name, args = {}, opts) => (c) => c.callTool({ name, arguments: args }, undefined, opts);

  before(async () => {
    [direct, proxied] = await Promise.all([
      connectDirect(cmd, clientOptions(dlog)),
      connectProxied(cmd, ['--log-level', 'info', '--chunk-size', '4000'], clientOptions(plog)),
    ]);
    // The server asks the client for its roots 350 ms after initialization
    // (server-to-client request id 0, the same id as the client's initialize).
    await waitFor(() => dlog.requests.some((r) => r.method === 'roots/list') && plog.requests.some((r) => r.method === 'roots/list'),
      5000, 'the initial roots/list request on both sessions');
  });

  after(async () => {
    await closeAllSessions();
    dlog.taskStore?.cleanup();
    plog.taskStore?.cleanup();
  });

  test('ctxguard logs the child pid', T, () => {
    const pid = proxied.serverPid();
    assert.ok(Number.isInteger(pid) && pid > 0, `no "server started: pid=" line in:\n${proxied.stderrText()}`);
    assert.notEqual(pid, proxied.pid, 'the logged pid must be the child, not ctxguard');
  });

  test('initialize result: server info, capabilities, instructions', T, () => {
    assert.deepEqual(proxied.client.getServerVersion(), direct.client.getServerVersion());
    assert.deepEqual(proxied.client.getServerCapabilities(), direct.client.getServerCapabilities());
    // ctxguard's paragraph, a blank line, then the server's own instructions.
    assert.ok(direct.client.getInstructions().length > 100);
    assert.equal(proxied.client.getInstructions(), `${CTXGUARD_PARAGRAPH}\n\n${direct.client.getInstructions()}`);
    assert.equal(direct.client.getServerVersion().name, 'mcp-servers/everything');
  });

  test('ping', T, async () => {
    await same((c) => c.ping());
  });

  test('tools/list (incl. the conditional tools): the server tools without outputSchema, then ctxguard_fetch', T, async () => {
    const [d, p] = await onBoth((c) => c.listTools());
    assertProxiedToolList(p, d);
    const names = d.tools.map((t) => t.name);
    for (const n of ['echo', 'get-roots-list', 'trigger-sampling-request', 'trigger-elicitation-request', 'trigger-url-elicitation',
      'simulate-research-query', 'trigger-sampling-request-async', 'trigger-elicitation-request-async']) {
      assert.ok(names.includes(n), `tool ${n} is registered`);
    }
  });

  test('prompts: list, get, complete', T, async () => {
    const d = await same((c) => c.listPrompts());
    assert.ok(d.prompts.length >= 4);
    await same((c) => c.getPrompt({ name: 'simple-prompt' }));
    await same((c) => c.getPrompt({ name: 'args-prompt', arguments: { city: 'Lisbon', state: 'LX' } }));
    await same((c) => c.getPrompt({ name: 'completable-prompt', arguments: { department: 'Engineering', name: 'Alice' } }));
    await same((c) => c.getPrompt({ name: 'resource-prompt', arguments: { resourceType: 'Blob', resourceId: '3' } }));
    const comp = await same((c) => c.complete({
      ref: { type: 'ref/prompt', name: 'completable-prompt' },
      argument: { name: 'name', value: '' },
      context: { arguments: { department: 'Sales' } },
    }));
    assert.deepEqual(comp.completion.values, ['David', 'Eve', 'Frank']);
  });

  test('resources: list, templates, read, subscribe, completion', T, async () => {
    const list = await same((c) => c.listResources());
    assert.ok(list.resources.length > 0);
    await same((c) => c.listResourceTemplates());
    for (const r of list.resources) await same((c) => c.readResource({ uri: r.uri }));
    await same((c) => c.readResource({ uri: 'demo://resource/dynamic/text/7' }));
    await same((c) => c.readResource({ uri: 'demo://resource/dynamic/blob/8' }));
    await same((c) => c.complete({ ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '12' } }));
    await same((c) => c.subscribeResource({ uri: 'demo://resource/dynamic/text/1' }));
    await same((c) => c.unsubscribeResource({ uri: 'demo://resource/dynamic/text/1' }));
    await same((c) => c.setLoggingLevel('debug'));
  });

  test('read of an unknown resource fails the same way', T, async () => {
    await same((c) => c.readResource({ uri: 'demo://no/such/thing' }), { expectError: true });
  });

  test('simple tools', T, async () => {
    await same(callTool('echo', { message: 'héllo wörld ✓ "quoted" \\ back\nslash' }));
    await same(callTool('get-sum', { a: 17, b: 25.5 }));
    for (const messageType of ['error', 'success', 'debug']) {
      await same(callTool('get-annotated-message', { messageType, includeImage: messageType === 'success' }));
    }
    await same(callTool('get-env'));
    await same(callTool('get-resource-links', { count: 10 }));
    await same(callTool('get-resource-reference', { resourceType: 'Text', resourceId: 4 }));
    await same(callTool('get-resource-reference', { resourceType: 'Blob', resourceId: 5 }));
    await same(callTool('get-structured-content', { location: 'Chicago' }));
    await same(callTool('get-tiny-image'));
  });

  test('tool errors are relayed unchanged', T, async () => {
    // Unknown tool and invalid arguments: the server answers with an error result.
    await same(callTool('no-such-tool'));
    await same(callTool('get-sum', { a: 'x' }));
  });

  test('gzip-file-as-resource with a data: URL (no network), then read the session resource', T, async () => {
    const text = 'ctxguard '.repeat(200);
    const data = `data:text/plain;base64,${Buffer.from(text).toString('base64')}`;
    await same(callTool('gzip-file-as-resource', { name: 'inline.txt.gz', data, outputType: 'resource' }));
    const d = await same(callTool('gzip-file-as-resource', { name: 'linked.txt.gz', data, outputType: 'resourceLink' }));
    assert.equal(d.content[0].type, 'resource_link');
    await same((c) => c.readResource({ uri: d.content[0].uri }));
    await same((c) => c.listResources());
  });

  test('toggle-simulated-logging and toggle-subscriber-updates (on, then off)', T, async () => {
    await same(callTool('toggle-simulated-logging'));
    await same(callTool('toggle-simulated-logging'));
    await same(callTool('toggle-subscriber-updates'));
    await same(callTool('toggle-subscriber-updates'));
  });

  test('trigger-long-running-operation: progress notifications arrive in the same sequence', T, async () => {
    // Compare the wire (the SDK runs notification handlers asynchronously and
    // responses synchronously, so even direct onprogress may miss the last one).
    const [d, p] = await Promise.all([direct, proxied].map(async (s) => {
      const start = s.wire.length;
      const result = await s.client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.6, steps: 6 } },
        undefined, { onprogress: () => {} });
      const msgs = s.wire.slice(start);
      const request = msgs.find((m) => m.dir === 'out' && m.msg.method === 'tools/call').msg;
      const token = request.params._meta.progressToken;
      const inbound = msgs.filter((m) => m.dir === 'in').map((m) => m.msg);
      const progress = inbound.filter((m) => m.method === 'notifications/progress' && m.params.progressToken === token);
      const responseAt = inbound.findIndex((m) => m.id === request.id && !m.method);
      const lastProgressAt = inbound.lastIndexOf(progress.at(-1));
      return {
        result,
        progress: progress.map((m) => [m.params.progress, m.params.total]),
        progressBeforeResponse: lastProgressAt < responseAt,
      };
    }));
    assert.deepEqual(d.progress, [[1, 6], [2, 6], [3, 6], [4, 6], [5, 6], [6, 6]]);
    assert.equal(d.progressBeforeResponse, true);
    assert.deepEqual(p, d);
  });

  test('trigger-sampling-request: server-to-client sampling round-trips through ctxguard', T, async () => {
    const before = [dlog.requests.length, plog.requests.length];
    const d = await same(callTool('trigger-sampling-request', { prompt: 'What is a proxy?', maxTokens: 50 }));
    assert.match(d.content[0].text, /sampled answer to: Resource trigger-sampling-request context: What is a proxy\?/);
    assert.match(d.content[0].text, /e2e-test-model/);
    assert.deepEqual(plog.requests.slice(before[1]), dlog.requests.slice(before[0]));
    assert.equal(dlog.requests.at(-1).method, 'sampling/createMessage');
  });

  test('get-roots-list: server-to-client roots/list round-trips through ctxguard', T, async () => {
    const d = await same(callTool('get-roots-list'));
    assert.match(d.content[0].text, /Current MCP Roots \(2 total\)/);
    assert.match(d.content[0].text, /file:\/\/\/tmp\/ctxguard-e2e\/root-b/);
    // The initial roots/list requests (sent by the server right after initialize) were seen by both.
    assert.deepEqual(plog.requests.filter((r) => r.method === 'roots/list'), dlog.requests.filter((r) => r.method === 'roots/list'));
    // That server-to-client request has id 0, the id of the client's own initialize request:
    // the two id spaces overlap and ctxguard must keep them apart.
    for (const s of [direct, proxied]) {
      const init = s.wire.find((m) => m.dir === 'out' && m.msg.method === 'initialize').msg;
      const roots = s.wire.find((m) => m.dir === 'in' && m.msg.method === 'roots/list').msg;
      const answer = s.wire.find((m) => m.dir === 'out' && m.msg.id === roots.id && !m.msg.method).msg;
      assert.equal(init.id, 0);
      assert.equal(roots.id, 0);
      assert.deepEqual(answer.result, { roots: ROOTS });
    }
  });

  test('trigger-elicitation-request: form elicitation answered by the client handler', T, async () => {
    const d = await same(callTool('trigger-elicitation-request'));
    assert.match(d.content[0].text, /User provided the requested information/);
    assert.match(d.content[1].text, /Name: Ada Lovelace/);
    const last = (log) => log.requests.filter((r) => r.method === 'elicitation/create').at(-1);
    assert.deepEqual(last(plog), last(dlog));
  });

  test('trigger-url-elicitation: request path and -32042 error path', T, async () => {
    const args = { url: 'https://example.com/authorize', message: 'Open me', elicitationId: 'e2e-elicitation-1' };
    const d = await same(callTool('trigger-url-elicitation', args));
    assert.match(d.content[0].text, /User completed the URL elicitation flow/);
    // Error path: the first call throws UrlElicitationRequiredError (-32042), the retry proceeds.
    const errArgs = { ...args, elicitationId: 'e2e-elicitation-2', errorPath: true };
    const de = await same(callTool('trigger-url-elicitation', errArgs), { expectError: true });
    assert.equal(de.code, -32042, `expected the -32042 error path, got ${JSON.stringify(de)}`);
    await same(callTool('trigger-url-elicitation', errArgs));
  });

  test('simulate-research-query: task-based tool call (tasks/get, tasks/result) through ctxguard', T, async () => {
    const run = async (c) => {
      const messages = [];
      const stream = c.experimental.tasks.callToolStream({ name: 'simulate-research-query', arguments: { topic: 'python', ambiguous: true } });
      for await (const m of stream) messages.push(m.type === 'error' ? { type: 'error', message: m.error.message } : m);
      return messages;
    };
    const [d, p] = await onBoth(run);
    const types = (ms) => ms.map((m) => m.type);
    assert.equal(types(d)[0], 'taskCreated');
    assert.equal(types(d).at(-1), 'result', JSON.stringify(d));
    // Status polling is timing dependent; the created task and the final result are not.
    // The report is far below the budget: ctxguard relays the tasks/result answer unchanged.
    assert.deepEqual(norm(p[0]), norm(d[0]));
    assert.deepEqual(norm(p.at(-1)), norm(d.at(-1)));
    // ambiguous: true makes the server elicit a clarification from the client, queued through tasks/result.
    assert.match(d.at(-1).result.content[0].text, /Research Report: python \(programming\)/);
  });

  test('trigger-sampling-request-async: client-side task polled by the server through ctxguard', T, async () => {
    const d = await same(callTool('trigger-sampling-request-async', { prompt: 'async please', maxTokens: 20 }));
    assert.match(d.content[0].text, /\[COMPLETED\] Async sampling completed!/);
  });

  test('trigger-elicitation-request-async: client-side task polled by the server through ctxguard', T, async () => {
    const d = await same(callTool('trigger-elicitation-request-async'));
    assert.match(d.content[0].text, /\[COMPLETED\] User provided the requested information!/);
  });

  test('every tool was called, on both sessions', T, async () => {
    const { tools } = await direct.client.listTools();
    const called = (s) => new Set(s.wire.filter((m) => m.dir === 'out' && m.msg.method === 'tools/call').map((m) => m.msg.params.name));
    for (const s of [direct, proxied]) {
      const missing = tools.map((t) => t.name).filter((n) => !called(s).has(n));
      assert.deepEqual(missing, [], 'tools never called');
    }
  });

  test('server-to-client requests and notifications seen by both clients are the same', T, () => {
    assert.deepEqual(norm(plog.requests), norm(dlog.requests));
    // Logging messages of the simulated logger have a random level: compare methods only.
    const methods = (log) => log.notifications.map((n) => n.method).sort();
    assert.deepEqual(methods(plog), methods(dlog));
  });
});
