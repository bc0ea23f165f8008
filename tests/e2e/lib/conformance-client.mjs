#!/usr/bin/env node
// The client under test for the conformance suite's client scenarios: the SDK
// client on stdio, talking to lib/stdio-http-bridge.mjs (directly, or through
// `ctxguard -- node stdio-http-bridge.mjs <url>` with --ctxguard <binary>),
// which relays to the scenario's HTTP server. The conformance runner starts it
// as `<command> <server url>` with MCP_CONFORMANCE_SCENARIO set.
//
// usage: node conformance-client.mjs [--ctxguard <binary>] <server url>
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const argv = process.argv.slice(2);
const url = argv[argv.length - 1];
const ci = argv.indexOf('--ctxguard');
const ctxguard = ci >= 0 ? argv[ci + 1] : null;
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const bridge = [path.join(path.dirname(fileURLToPath(import.meta.url)), 'stdio-http-bridge.mjs'), url];

const transport = ctxguard
  ? new StdioClientTransport({ command: ctxguard, args: ['--', process.execPath, ...bridge], env: process.env, stderr: 'inherit' })
  : new StdioClientTransport({ command: process.execPath, args: bridge, env: process.env, stderr: 'inherit' });

const client = new Client({ name: 'ctxguard-conformance-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });

// Accept every form with the schema's defaults filled in (SEP-1034).
client.setRequestHandler(ElicitRequestSchema, (req) => {
  const content = {};
  for (const [k, p] of Object.entries(req.params.requestedSchema?.properties ?? {})) {
    if (p.default !== undefined) content[k] = p.default;
  }
  return { action: 'accept', content };
});

const ECHO = 'json_schema_echo';

try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  switch (scenario) {
    case 'tools_call':
      await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
      break;
    case 'elicitation-sep1034-client-defaults':
      await client.callTool({ name: 'test_client_elicitation_defaults', arguments: {} });
      break;
    case 'json-schema-2020-12-preservation': {
      const focal = tools.find((t) => t.name !== ECHO);
      await client.callTool({ name: ECHO, arguments: { schema: focal.inputSchema } });
      break;
    }
    case 'sse-retry':
      await client.callTool({ name: 'test_reconnection', arguments: {} });
      break;
    default: // initialize, json-schema-ref-no-deref: the listing is the test
      break;
  }
  await client.close();
  process.exit(0);
} catch (e) {
  console.error(`conformance-client (${scenario}): ${e.stack ?? e}`);
  await client.close().catch(() => {});
  process.exit(1);
}
