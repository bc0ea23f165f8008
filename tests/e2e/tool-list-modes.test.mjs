// toolList full / compact / lazy with the real SDK clients (docs/protocol.md 4.2):
//   - figures: tokens of tools/list as the server sent it and as each mode lists it, for
//     server-filesystem, -memory, -everything and the 120-tool server (printed for the note);
//     compact at most 50% and lazy at most 10% of the server's on the 120-tool server; for every
//     server, compact (ctxguard_fetch included) no larger than the server's own tools without
//     outputSchema, and ctxguard_fetch at most 150 estimated tokens in every mode;
//   - compact, 120 tools in pages of 50: every tool and every input property kept, `required`
//     and annotations unchanged; the instructions say each shared sentence once and no
//     description does; ctxguard_fetch {tool} gives a definition as the server sent it; for every
//     tool a table of valid and invalid arguments gets the same verdict from the server directly
//     and through ctxguard, and the same verdict from Ajv against the schema as the server sent
//     it (draft-07) and as ctxguard listed it (no $schema: 2020-12, MCP's default);
//   - full, 120 tools, and server-memory and server-filesystem in every mode: every tool called
//     with the same table (each session with a store or directory of its own), the same verdicts
//     as directly;
//   - lazy: ctxguard's three tools; the search finds every tool by its name, with its definition
//     as the server sent it; every tool runs through ctxguard_call_tool with the same verdicts as
//     directly; an unknown name is an isError naming the closest;
//   - compact with server-filesystem and a client that offers roots: the server's roots/list
//     (asked on notifications/initialized, which ctxguard sends before its own listing) reaches
//     the client after its initialize result, and the session works;
//   - the SDK v2 server, with SDK v2 (2026-07-28) and SDK 1.x clients: both modes list, call,
//     and honour tools/list_changed (the next listing has the new tool).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import Ajv from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  closeAllSessions,
  connectDirect,
  connectProxied,
  connectSession,
  estimateTokens,
  FULL_CLIENT_CAPABILITIES,
  makeFiles,
  makeTempDir,
  proxiedSession,
  recordWire,
  removeDir,
  serverCommand,
  skipWithoutCtxguard,
  waitFor,
  within,
} from './lib/harness.mjs';
import { SHARED_GUIDANCE } from './lib/many-tools-server.mjs';
import { argumentCases } from './lib/schema-cases.mjs';
import { closeAllV2Sessions, openSession } from './lib/v2-harness.mjs';

const SKIP = skipWithoutCtxguard();
const T = { timeout: 240_000 };
const FETCH = 'ctxguard_fetch';
const SEARCH = 'ctxguard_search_tools';
const CALL = 'ctxguard_call_tool';

const manyTools = (pageSize = 50) => ({
  command: process.execPath,
  args: [path.join(import.meta.dirname, 'lib', 'many-tools-server.mjs'), '--page-size', String(pageSize)],
});

async function listAll(client) {
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

/** Tokens of the listing as the server sent it and as the client got it, from ctxguard's line. */
async function listingTokens(session) {
  await waitFor(() => /tools\/list tools=\d+ tokens=\d+->\d+/.test(session.stderrText()), 5000, 'the listing line');
  const [, tools, served, sent] = /tools\/list tools=(\d+) tokens=(\d+)->(\d+)/.exec(session.stderrText());
  const instructions = Number(/instructions_tokens=(\d+)/.exec(session.stderrText())[1]);
  return { tools: Number(tools), served: Number(served), sent: Number(sent), instructions };
}

const verdict = (result) => ({ isError: result.isError === true, text: result.content?.[0]?.text });

/** What a call came to: its result's verdict, or the JSON-RPC error; `dir` written as <dir>. */
async function outcome(call, dir) {
  // The two sessions' directories are made a moment apart: their files' times may differ by a
  // second (get_file_info), which says nothing about ctxguard.
  const clean = (text) => (dir && typeof text === 'string'
    ? text.replaceAll(dir, '<dir>').replace(/\w{3} \w{3} \d{2} \d{4} \d{2}:\d{2}:\d{2} GMT[+-]\d{4} \([^)]*\)/g, '<time>')
    : text);
  try {
    const v = verdict(await call);
    return { ...v, text: clean(v.text) };
  } catch (err) {
    return { error: err.code, message: clean(err.message) };
  }
}

/** Calls `name` with `args` on a session in `mode`: by name, or through ctxguard_call_tool. */
function callIn(session, mode, name, args) {
  return mode === 'lazy'
    ? session.client.callTool({ name: CALL, arguments: { name, arguments: args } })
    : session.client.callTool({ name, arguments: args });
}
const textOf = (result) => result.content[0].text;

/** Every property name of a schema, nested ones as paths, definitions included. */
function propertyPaths(schema, prefix = '') {
  const paths = [];
  for (const [key, value] of Object.entries(schema.properties ?? {})) {
    paths.push(prefix + key);
    paths.push(...propertyPaths(value, `${prefix}${key}.`));
  }
  for (const [name, definition] of Object.entries(schema.definitions ?? {})) {
    paths.push(...propertyPaths(definition, `#${name}.`));
  }
  return paths.sort();
}

describe('toolList modes', { skip: SKIP }, () => {
  let root;
  let dir;
  let directTools;
  let direct;
  before(async () => {
    root = makeTempDir();
    dir = makeTempDir();
    makeFiles(root, 3);
    direct = await connectDirect(manyTools());
    directTools = await listAll(direct.client);
  });
  after(async () => {
    await closeAllSessions();
    await closeAllV2Sessions();
    removeDir(root);
    removeDir(dir);
  });

  test('figures: tokens of tools/list direct / full / compact / lazy', T, async () => {
    const servers = [
      ['server-filesystem', () => serverCommand('filesystem', root)],
      ['server-memory', () => ({ ...serverCommand('memory'), env: { ...process.env, MEMORY_FILE_PATH: path.join(dir, 'memory.jsonl') } })],
      ['server-everything', () => serverCommand('everything'), { capabilities: FULL_CLIENT_CAPABILITIES }],
      ['120-tool server', () => manyTools()],
    ];
    const rows = [];
    for (const [name, command, options = {}] of servers) {
      const row = { name };
      for (const mode of ['full', 'compact', 'lazy']) {
        const session = await connectProxied(command(), ['--tool-list', mode], options);
        const tools = await listAll(session.client);
        const figures = await listingTokens(session);
        await session.close();
        assert.equal(figures.tools, tools.length);
        row.direct = figures.served;
        row[mode] = figures.sent;
        row[`${mode}Instructions`] = figures.instructions;
        row[`${mode}Tools`] = tools.length;
        // Each tool as ctxguard measures it: minified JSON.
        row[`${mode}Fetch`] = estimateTokens(JSON.stringify(tools.find((t) => t.name === FETCH)));
        assert.ok(row[`${mode}Fetch`] <= 150, `${name} (${mode}): ctxguard_fetch is ${row[`${mode}Fetch`]} tokens`);
      }
      assert.ok(row.compact < row.full, `${name}: compact ${row.compact} < full ${row.full}`);
      // full is the server's tools without outputSchema, and ctxguard_fetch.
      assert.ok(row.compact <= row.full - row.fullFetch,
        `${name}: compact ${row.compact} over the server's own tools without outputSchema (${row.full - row.fullFetch})`);
      assert.ok(row.lazy < row.compact, `${name}: lazy ${row.lazy} < compact ${row.compact}`);
      rows.push(row);
      console.log(`# ${name}: tools/list tokens direct ${row.direct}, full ${row.full}, compact ${row.compact} `
        + `(${Math.round((100 * row.compact) / row.direct)}%), lazy ${row.lazy} (${Math.round((100 * row.lazy) / row.direct)}%); `
        + `instructions full ${row.fullInstructions}, compact ${row.compactInstructions}, lazy ${row.lazyInstructions}; `
        + `ctxguard_fetch ${row.fullFetch} / ${row.compactFetch} / ${row.lazyFetch}`);
    }
    const many = rows.at(-1);
    assert.ok(many.compact + many.compactInstructions - many.fullInstructions <= many.direct / 2,
      `compact ${many.compact} (+${many.compactInstructions - many.fullInstructions} of instructions) over half of ${many.direct}`);
    assert.ok(many.lazy + many.lazyInstructions - many.fullInstructions <= many.direct / 10,
      `lazy ${many.lazy} over a tenth of ${many.direct}`);
  });

  describe('compact, 120 tools in pages of 50', () => {
    let proxied;
    let listed;
    before(async () => {
      proxied = await connectProxied(manyTools(), ['--tool-list', 'compact']);
      listed = await listAll(proxied.client);
    });

    test('every tool and every input property kept; required and annotations unchanged', T, () => {
      assert.deepEqual(listed.map((t) => t.name), [...directTools.map((t) => t.name), FETCH]);
      for (const [i, original] of directTools.entries()) {
        const compact = listed[i];
        assert.deepEqual(propertyPaths(compact.inputSchema).filter((p) => !p.startsWith('#')),
          propertyPaths(original.inputSchema).filter((p) => !p.startsWith('#')), original.name);
        assert.deepEqual(compact.inputSchema.required, original.inputSchema.required, original.name);
        assert.deepEqual(compact.annotations, original.annotations, original.name);
        assert.equal(compact.inputSchema.$schema, undefined);
        assert.ok(JSON.stringify(compact).length < JSON.stringify(original).length, original.name);
      }
    });

    test('the instructions say each shared sentence and parameter description once, and no tool does', T, () => {
      const instructions = proxied.client.getInstructions();
      for (const sentence of SHARED_GUIDANCE) {
        assert.equal(instructions.split(sentence).length - 1, 1, sentence);
        for (const tool of listed) assert.ok(!tool.description.includes(sentence), `${tool.name}: ${sentence}`);
      }
      // Described alike wherever they stand: said once. `status` and `fields` are described per
      // product: their descriptions stay where they are.
      for (const [name, description] of [['workspaceId', 'The workspace to act in.'], ['cursor', 'The cursor of the previous page.'], ['contactId', 'The id of the contact.']]) {
        assert.equal(instructions.split(`\`${name}\`: ${description}`).length - 1, 1, name);
        for (const tool of listed) assert.equal(tool.inputSchema.properties[name]?.description, undefined, `${tool.name}: ${name}`);
      }
      const listOfContacts = listed.find((t) => t.name === 'crm_list_contacts');
      assert.equal(listOfContacts.inputSchema.properties.status.description, 'Only contacts in this status.');
      assert.match(proxied.stderrText(), /toolList compact: 120 tools listed, 5 sentences and \d+ parameter descriptions said once/);
    });

    test('ctxguard_fetch {tool} gives the definition as the server sent it', T, async () => {
      for (const original of [directTools[0], directTools[57], directTools[119]]) {
        const result = await proxied.client.callTool({ name: FETCH, arguments: { tool: original.name } });
        assert.deepEqual(JSON.parse(textOf(result)), original);
      }
      const unknown = await proxied.client.callTool({ name: FETCH, arguments: { tool: 'crm_list_contact' } });
      assert.equal(unknown.isError, true);
      assert.match(textOf(unknown), /no tool named "crm_list_contact"\. Closest: crm_list_contacts/);
    });

    test('valid and invalid arguments: the same verdicts directly, through ctxguard, and by Ajv on both schemas', T, async () => {
      const asSent = new Ajv({ strict: false });
      const asListed = new Ajv2020({ strict: false });
      addFormats(asSent);
      addFormats(asListed);
      let valid = 0;
      let invalid = 0;
      for (const [i, original] of directTools.entries()) {
        const checkSent = asSent.compile(original.inputSchema);
        const checkListed = asListed.compile(listed[i].inputSchema);
        for (const { label, args } of argumentCases(original.inputSchema)) {
          const what = `${original.name}, ${label}`;
          const d = verdict(await direct.client.callTool({ name: original.name, arguments: args }));
          const p = verdict(await proxied.client.callTool({ name: original.name, arguments: args }));
          assert.deepEqual(p, d, what);
          assert.equal(checkListed(args), checkSent(args), what);
          assert.equal(checkSent(args), !d.isError, what);
          if (d.isError) invalid++; else valid++;
        }
      }
      assert.ok(valid >= 240 && invalid >= 1000, `${valid} valid, ${invalid} invalid cases`);
      console.log(`# compact: ${valid} valid and ${invalid} invalid argument sets over 120 tools, the same verdicts`);
    });
  });

  test('full, 120 tools: the same verdicts directly and through ctxguard', T, async () => {
    const proxied = await connectProxied(manyTools(), ['--tool-list', 'full']);
    let calls = 0;
    for (const original of directTools) {
      for (const { label, args } of argumentCases(original.inputSchema)) {
        assert.deepEqual(await outcome(callIn(proxied, 'full', original.name, args)),
          await outcome(callIn(direct, 'full', original.name, args)), `${original.name}, ${label}`);
        calls++;
      }
    }
    assert.ok(calls > 1300);
    await proxied.close();
  });

  for (const server of ['memory', 'filesystem']) {
    test(`server-${server}, every mode: every tool callable, the same verdicts as directly`, T, async () => {
      const fresh = () => {
        const own = makeTempDir();
        const command = server === 'memory'
          ? { ...serverCommand('memory'), env: { ...process.env, MEMORY_FILE_PATH: path.join(own, 'memory.jsonl') } }
          : serverCommand('filesystem', own);
        return { own, command };
      };
      const reference = fresh();
      const plain = await connectDirect(reference.command);
      const { tools } = await plain.client.listTools();
      let calls = 0;
      for (const mode of ['full', 'compact', 'lazy']) {
        const mine = fresh();
        const theirs = fresh();
        const d = await connectDirect(theirs.command);
        const p = await connectProxied(mine.command, ['--tool-list', mode]);
        await p.client.listTools();  // as a client does before it calls
        for (const tool of tools) {
          for (const { label, args } of argumentCases(tool.inputSchema)) {
            assert.deepEqual(await outcome(callIn(p, mode, tool.name, args), mine.own),
              await outcome(callIn(d, 'full', tool.name, args), theirs.own), `${mode}: ${tool.name}, ${label}`);
            calls++;
          }
        }
        await d.close();
        await p.close();
        removeDir(mine.own);
        removeDir(theirs.own);
      }
      await plain.close();
      removeDir(reference.own);
      console.log(`# server-${server}: ${tools.length} tools, ${calls} calls over the three modes, the same verdicts as directly`);
    });
  }

  describe('lazy, 120 tools in pages of 50', () => {
    let proxied;
    before(async () => {
      proxied = await connectProxied(manyTools(), ['--tool-list', 'lazy']);
    });

    test('the list holds ctxguard\'s tools; the instructions say how to reach the server\'s', T, async () => {
      const tools = await listAll(proxied.client);
      assert.deepEqual(tools.map((t) => t.name), [SEARCH, CALL, FETCH]);
      assert.match(proxied.client.getInstructions(), /find them with `ctxguard_search_tools`/);
    });

    test('the search finds every tool by its name, with its definition as the server sent it', T, async () => {
      for (const original of directTools) {
        const result = await proxied.client.callTool({ name: SEARCH, arguments: { query: original.name } });
        const answer = JSON.parse(textOf(result));
        assert.equal(answer.tools[0].name, original.name);
        assert.deepEqual(answer.tools[0], original);
      }
      const words = JSON.parse(textOf(await proxied.client.callTool({ name: SEARCH, arguments: { query: 'create invoice' } })));
      assert.equal(words.tools[0].name, 'billing_create_invoice');
      const all = JSON.parse(textOf(await proxied.client.callTool({ name: SEARCH, arguments: {} })));
      assert.equal(all.found, 120);
    });

    test('every tool runs through ctxguard_call_tool with the same verdicts as directly', T, async () => {
      let calls = 0;
      for (const original of directTools) {
        for (const { label, args } of argumentCases(original.inputSchema)) {
          const d = verdict(await direct.client.callTool({ name: original.name, arguments: args }));
          const p = verdict(await proxied.client.callTool({ name: CALL, arguments: { name: original.name, arguments: args } }));
          assert.deepEqual(p, d, `${original.name}, ${label}`);
          calls++;
        }
      }
      console.log(`# lazy: ${calls} calls through ${CALL}, the same verdicts as directly`);
      const unknown = await proxied.client.callTool({ name: CALL, arguments: { name: 'crm_list_contact' } });
      assert.equal(unknown.isError, true);
      assert.match(textOf(unknown), /Closest: crm_list_contacts/);
    });
  });

  test('compact with server-filesystem and roots: roots/list comes after the initialize result', T, async () => {
    const roots = [{ uri: `file://${root}`, name: 'root' }];
    const session = proxiedSession(serverCommand('filesystem', dir), ['--tool-list', 'compact'], {
      capabilities: { roots: { listChanged: true } },
      setup(client) {
        client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots }));
      },
    });
    const wire = recordWire(session.transport);
    await connectSession(session);
    await waitFor(() => wire.some((w) => w.dir === 'in' && w.msg.method === 'roots/list'), 5000, 'roots/list');
    const initialized = wire.findIndex((w) => w.dir === 'in' && w.msg.id === 0 && w.msg.result);
    const asked = wire.findIndex((w) => w.dir === 'in' && w.msg.method === 'roots/list');
    assert.ok(initialized >= 0 && initialized < asked, `initialize result at ${initialized}, roots/list at ${asked}`);
    assert.equal(wire.filter((w) => w.dir === 'out' && w.msg.method === 'notifications/initialized').length, 1);
    assert.match(session.stderrText(), /toolList compact: 14 tools listed, 1 sentences and \d+ parameter descriptions said once/);

    const tools = await listAll(session.client);
    assert.equal(tools.at(-1).name, FETCH);
    const only = 'Only works within allowed directories.';
    assert.equal(session.client.getInstructions().split(only).length - 1, 1);
    assert.ok(tools.every((t) => !t.description.includes(only)));
    // The server took the client's roots as its directories.
    await waitFor(async () => textOf(await session.client.callTool({ name: 'list_allowed_directories', arguments: {} }))
      .includes(root), 5000, 'the roots in use');
    await session.close();
  });

  for (const modeName of ['pinned', 'sdk1']) {
    for (const toolList of ['compact', 'lazy']) {
      test(`the SDK v2 server, ${modeName === 'pinned' ? 'SDK v2 client on 2026-07-28' : 'SDK 1.x client'}, ${toolList}: `
        + 'lists, calls, and tools/list_changed honoured', T, async () => {
        const s = await openSession(modeName, { proxied: true, ctxguardArgs: ['--tool-list', toolList] });
        const names = async () => (await s.client.listTools(undefined, { cacheMode: 'refresh' })).tools.map((t) => t.name);
        const run = (name, args = {}) => (toolList === 'lazy'
          ? s.client.callTool({ name: CALL, arguments: { name, arguments: args } })
          : s.client.callTool({ name, arguments: args }));
        const before = await names();
        assert.equal(before.includes('extra_tool'), false);
        const changed = s.nextListChanged();
        assert.equal(textOf(await run('enable_extra')), 'enabled');
        if (modeName === 'sdk1') await within(changed, 10_000, 'notifications/tools/list_changed');
        const after = await names();
        if (toolList === 'lazy') {
          assert.deepEqual(after, [SEARCH, CALL, FETCH]);
          const found = JSON.parse(textOf(await s.client.callTool({ name: SEARCH, arguments: { query: 'extra tool' } })));
          assert.equal(found.tools[0].name, 'extra_tool');
        } else {
          assert.deepEqual(after, [...before.slice(0, -1), 'extra_tool', FETCH]);
        }
        assert.equal(textOf(await run('extra_tool')), 'extra');
        const rows = JSON.parse(textOf(await run('list_rows', { count: 3 })));
        assert.equal(rows.rows.length, 3);
        await s.close();
      });
    }
  }
});
