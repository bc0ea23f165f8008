#!/usr/bin/env node
// A stdio MCP server with what the server scenarios of the MCP conformance suite
// (@modelcontextprotocol/conformance) call: the tools, resources, prompts,
// logging and completion they expect by name. conformance.test.mjs puts it
// behind lib/http-stdio-front.mjs, once directly and once as
// `ctxguard -- node conformance-server.mjs`.
//
// Written against the low-level Server of @modelcontextprotocol/sdk so that
// every schema goes out exactly as written here (the JSON Schema 2020-12 tool
// keeps its $schema, $defs and additionalProperties). Protocol 2025-11-25.

import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ErrorCode,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ type: 'text', text: t });
const noArgs = { type: 'object', properties: {} };

const server = new Server(
  { name: 'ctxguard-conformance-server', version: '1.0.0' },
  {
    capabilities: {
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      logging: {},
      completions: {},
    },
  },
);

function log(level, data, extra) {
  const n = { method: 'notifications/message', params: { level, logger: 'conformance-server', data } };
  return extra ? extra.sendNotification(n) : server.notification(n);
}

function formElicitation(message, properties, required = []) {
  return { method: 'elicitation/create', params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required } } };
}

async function elicit(extra, request, label) {
  try {
    const r = await extra.sendRequest(request, ElicitResultSchema);
    return { content: [text(`${label}: action=${r.action}, content=${JSON.stringify(r.content ?? {})}`)] };
  } catch (e) {
    return { content: [text(`Elicitation failed: ${e.message}`)] };
  }
}

// name -> { description, inputSchema, run(args, extra) }
const TOOLS = {
  test_simple_text: {
    description: 'Returns one text item',
    run: () => ({ content: [text('This is a simple text response for testing.')] }),
  },
  test_image_content: {
    description: 'Returns one image item',
    run: () => ({ content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }),
  },
  test_audio_content: {
    description: 'Returns one audio item',
    run: () => ({ content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }),
  },
  test_embedded_resource: {
    description: 'Returns one embedded resource',
    run: () => ({
      content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
    }),
  },
  test_multiple_content_types: {
    description: 'Returns text, image and resource items',
    run: () => ({
      content: [
        text('Multiple content types test:'),
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
      ],
    }),
  },
  test_tool_with_logging: {
    description: 'Sends three log messages while it runs',
    run: async (_args, extra) => {
      for (const [i, msg] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
        if (i > 0) await sleep(50);
        await log('info', msg, extra);
      }
      return { content: [text('Tool with logging executed successfully')] };
    },
  },
  test_tool_with_progress: {
    description: 'Sends three progress notifications while it runs',
    run: async (_args, extra) => {
      const progressToken = extra._meta?.progressToken ?? 0;
      for (const [i, progress] of [0, 50, 100].entries()) {
        if (i > 0) await sleep(50);
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
        });
      }
      return { content: [text(String(progressToken))] };
    },
  },
  test_error_handling: {
    description: 'Always fails (isError)',
    run: () => ({ isError: true, content: [text('This tool intentionally returns an error for testing')] }),
  },
  test_sampling: {
    description: 'Asks the client for a completion',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] },
    run: async (args, extra) => {
      try {
        const r = await extra.sendRequest(
          { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: text(args.prompt) }], maxTokens: 100 } },
          CreateMessageResultSchema,
        );
        return { content: [text(`LLM response: ${r.content?.text ?? 'No response'}`)] };
      } catch (e) {
        return { content: [text(`Sampling failed: ${e.message}`)] };
      }
    },
  },
  test_elicitation: {
    description: 'Asks the client for user input',
    inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] },
    run: (args, extra) =>
      elicit(extra, formElicitation(args.message, { response: { type: 'string', description: "User's response" } }, ['response']), 'User response'),
  },
  test_elicitation_sep1034_defaults: {
    description: 'Elicitation with a default for every primitive type (SEP-1034)',
    run: (_args, extra) =>
      elicit(
        extra,
        formElicitation('Please review and update the form fields with defaults', {
          name: { type: 'string', description: 'User name', default: 'John Doe' },
          age: { type: 'integer', description: 'User age', default: 30 },
          score: { type: 'number', description: 'User score', default: 95.5 },
          status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
          verified: { type: 'boolean', description: 'Verification status', default: true },
        }),
        'Elicitation completed',
      ),
  },
  test_elicitation_sep1330_enums: {
    description: 'Elicitation with the five enum schema forms (SEP-1330)',
    run: (_args, extra) =>
      elicit(
        extra,
        formElicitation('Please select options from the enum fields', {
          untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
          titledSingle: {
            type: 'string',
            description: 'Select one option with titles',
            oneOf: [
              { const: 'value1', title: 'First Option' },
              { const: 'value2', title: 'Second Option' },
              { const: 'value3', title: 'Third Option' },
            ],
          },
          legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
          untitledMulti: {
            type: 'array',
            description: 'Select multiple options',
            minItems: 1,
            maxItems: 3,
            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
          },
          titledMulti: {
            type: 'array',
            description: 'Select multiple options with titles',
            minItems: 1,
            maxItems: 3,
            items: {
              anyOf: [
                { const: 'value1', title: 'First Choice' },
                { const: 'value2', title: 'Second Choice' },
                { const: 'value3', title: 'Third Choice' },
              ],
            },
          },
        }),
        'Elicitation completed',
      ),
  },
  json_schema_2020_12_tool: {
    description: 'Input schema with JSON Schema 2020-12 features (SEP-1613)',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
      properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
      additionalProperties: false,
    },
    run: (args) => ({ content: [text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args ?? {})}`)] }),
  },
};

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: Object.entries(TOOLS).map(([name, t]) => ({ name, description: t.description, inputSchema: t.inputSchema ?? noArgs })),
}));

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  const tool = TOOLS[req.params.name];
  if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name}`);
  return tool.run(req.params.arguments ?? {}, { ...extra, _meta: req.params._meta });
});

// ---------------------------------------------------------------- resources

const RESOURCES = {
  'test://static-text': { name: 'static-text', title: 'Static Text Resource', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
  'test://static-binary': { name: 'static-binary', title: 'Static Binary Resource', mimeType: 'image/png', blob: PNG },
  'test://watched-resource': { name: 'watched-resource', title: 'Watched Resource', mimeType: 'text/plain', text: 'Watched resource content' },
};
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/;
const subscriptions = new Set();

server.setRequestHandler(ListResourcesRequestSchema, () => ({
  resources: Object.entries(RESOURCES).map(([uri, r]) => ({ uri, name: r.name, title: r.title, description: `${r.title} for testing`, mimeType: r.mimeType })),
}));

server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
  resourceTemplates: [
    { uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', description: 'A template with one parameter', mimeType: 'application/json' },
  ],
}));

server.setRequestHandler(ReadResourceRequestSchema, (req) => {
  const { uri } = req.params;
  const r = RESOURCES[uri];
  if (r) return { contents: [r.text !== undefined ? { uri, mimeType: r.mimeType, text: r.text } : { uri, mimeType: r.mimeType, blob: r.blob }] };
  const m = TEMPLATE.exec(uri);
  if (m) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }] };
  throw new McpError(-32002, `Resource not found: ${uri}`, { uri });
});

server.setRequestHandler(SubscribeRequestSchema, (req) => {
  subscriptions.add(req.params.uri);
  return {};
});

server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
  subscriptions.delete(req.params.uri);
  return {};
});

// ---------------------------------------------------------------- prompts

const PROMPTS = {
  test_simple_prompt: {
    title: 'Simple Test Prompt',
    description: 'A prompt without arguments',
    arguments: [],
    get: () => [{ role: 'user', content: text('This is a simple prompt for testing.') }],
  },
  test_prompt_with_arguments: {
    title: 'Prompt With Arguments',
    description: 'A prompt with two required arguments',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
    get: (a) => [{ role: 'user', content: text(`Prompt with arguments: arg1='${a.arg1}', arg2='${a.arg2}'`) }],
  },
  test_prompt_with_embedded_resource: {
    title: 'Prompt With Embedded Resource',
    description: 'A prompt that embeds a resource',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    get: (a) => [
      { role: 'user', content: { type: 'resource', resource: { uri: a.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
      { role: 'user', content: text('Please process the embedded resource above.') },
    ],
  },
  test_prompt_with_image: {
    title: 'Prompt With Image',
    description: 'A prompt with an image',
    arguments: [],
    get: () => [
      { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
      { role: 'user', content: text('Please analyze the image above.') },
    ],
  },
};

server.setRequestHandler(ListPromptsRequestSchema, () => ({
  prompts: Object.entries(PROMPTS).map(([name, p]) => ({ name, title: p.title, description: p.description, arguments: p.arguments })),
}));

server.setRequestHandler(GetPromptRequestSchema, (req) => {
  const p = PROMPTS[req.params.name];
  if (!p) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`);
  const args = req.params.arguments ?? {};
  for (const a of p.arguments) {
    if (a.required && args[a.name] === undefined) throw new McpError(ErrorCode.InvalidParams, `Missing argument: ${a.name}`);
  }
  return { description: p.description, messages: p.get(args) };
});

// ---------------------------------------------------------------- logging, completion

server.setRequestHandler(SetLevelRequestSchema, async (req) => {
  log('info', `Log level set to: ${req.params.level}`).catch(() => {});
  return {};
});

server.setRequestHandler(CompleteRequestSchema, () => ({ completion: { values: [], total: 0, hasMore: false } }));

await server.connect(new StdioServerTransport());
