#!/usr/bin/env node
// A generated MCP server of 120 tools in the style of large SaaS servers (docs/protocol.md 4.1,
// issue "the cost of tools/list"): 12 products × 10 actions, each tool with a description that
// repeats the same cross-tool guidance, and a verbose input schema — `$schema`, titles equal to
// the property names, enums, formats (date-time, email, uri), nested objects, arrays, `$ref` into
// `definitions`, required fields, additionalProperties false. Deterministic: the same list on
// every start.
//
// tools/call validates the arguments against the tool's schema with Ajv (draft-07, formats) and
// answers {"ok": true, "tool", "arguments"} as JSON text, or an isError result naming the first
// violation: the verdicts a test compares direct and through ctxguard.
//
//   node many-tools-server.mjs [--page-size N]   (tools/list pages of N tools; default: one page)

import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const PRODUCTS = ['crm', 'billing', 'support', 'inventory', 'calendar', 'docs', 'analytics', 'hr',
  'projects', 'marketing', 'storage', 'admin'];
const ACTIONS = [
  ['list', 'Lists the {noun}s of the workspace, newest first, filtered by status and date range.'],
  ['get', 'Returns one {noun} by its id, with every field and its related records.'],
  ['create', 'Creates a {noun} from the given fields and returns it with its new id.'],
  ['update', 'Changes the given fields of a {noun}; fields left out keep their value.'],
  ['delete', 'Deletes a {noun} by its id; a deleted {noun} can be restored within 30 days.'],
  ['search', 'Searches the {noun}s by words in their names, notes and tags.'],
  ['export', 'Exports the {noun}s matching a filter as a file and returns its download link.'],
  ['archive', 'Archives a {noun}: it leaves the default lists but keeps its history.'],
  ['assign', 'Assigns a {noun} to a member of the workspace, who is notified by email.'],
  ['comment', 'Adds a comment to a {noun}, with optional mentions and attachments.'],
];
const NOUNS = {
  crm: 'contact', billing: 'invoice', support: 'ticket', inventory: 'item', calendar: 'event',
  docs: 'document', analytics: 'report', hr: 'employee', projects: 'task', marketing: 'campaign',
  storage: 'file', admin: 'user',
};

// The guidance real servers repeat in every tool's description.
export const SHARED_GUIDANCE = [
  'All timestamps are ISO 8601 strings in UTC.',
  'Results are paginated: pass the cursor from the previous response to get the next page.',
  'Rate limits apply: at most 100 requests per minute per workspace, after which calls fail with a retry hint.',
  'Never include personal data such as emails or phone numbers in free-text fields that are shared with other members.',
  'Use the workspace id from the connected account unless the user names another workspace.',
];

function property(name, schema) {
  return { title: name, ...schema };
}

function inputSchema(name, product, action) {
  const noun = NOUNS[product];
  const properties = {
    workspaceId: property('workspaceId', { type: 'string', description: 'The workspace to act in.', pattern: '^ws_[a-z0-9]{6}$' }),
  };
  const required = ['workspaceId'];
  const definitions = {
    member: {
      type: 'object', title: 'member',
      properties: {
        email: property('email', { type: 'string', format: 'email', description: 'The member\'s email address.' }),
        role: property('role', { type: 'string', enum: ['owner', 'admin', 'editor', 'viewer'], description: 'The member\'s role.' }),
      },
      required: ['email'], additionalProperties: false,
    },
    dateRange: {
      type: 'object', title: 'dateRange',
      properties: {
        from: property('from', { type: 'string', format: 'date-time', description: 'Start of the range, inclusive.' }),
        to: property('to', { type: 'string', format: 'date-time', description: 'End of the range, exclusive.' }),
      },
      additionalProperties: false,
    },
  };
  if (['get', 'update', 'delete', 'archive', 'assign', 'comment'].includes(action)) {
    properties[`${noun}Id`] = property(`${noun}Id`, { type: 'string', description: `The id of the ${noun}.`, minLength: 8, maxLength: 40 });
    required.push(`${noun}Id`);
  }
  if (['list', 'export', 'search'].includes(action)) {
    properties.status = property('status', { type: 'string', enum: ['active', 'pending', 'closed', 'archived'], description: `Only ${noun}s in this status.` });
    properties.range = { $ref: '#/definitions/dateRange', description: 'Only those created in this range.' };
    properties.limit = property('limit', { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Items per page.' });
    properties.cursor = property('cursor', { type: 'string', description: 'The cursor of the previous page.' });
  }
  if (action === 'search') {
    properties.query = property('query', { type: 'string', minLength: 1, description: 'Words to look for.' });
    required.push('query');
  }
  if (['create', 'update'].includes(action)) {
    properties.fields = property('fields', {
      type: 'object', description: `The fields of the ${noun}.`,
      properties: {
        name: property('name', { type: 'string', minLength: 1, maxLength: 200, description: 'Its name.' }),
        tags: property('tags', { type: 'array', items: { type: 'string' }, maxItems: 20, description: 'Free tags.' }),
        owner: { $ref: '#/definitions/member', description: 'Who owns it.' },
        link: property('link', { type: 'string', format: 'uri', description: 'A related web page.' }),
        priority: property('priority', { type: 'string', enum: ['low', 'normal', 'high', 'urgent'], description: 'How urgent it is.' }),
      },
      required: action === 'create' ? ['name'] : [],
      additionalProperties: false,
    });
    required.push('fields');
  }
  if (action === 'export') {
    properties.format = property('format', { type: 'string', enum: ['csv', 'json', 'xlsx'], description: 'The file format.' });
    required.push('format');
  }
  if (action === 'assign') {
    properties.assignee = { $ref: '#/definitions/member', description: 'Who gets it.' };
    required.push('assignee');
  }
  if (action === 'comment') {
    properties.text = property('text', { type: 'string', minLength: 1, maxLength: 5000, description: 'The comment.' });
    properties.mentions = property('mentions', { type: 'array', items: { $ref: '#/definitions/member' }, description: 'Members to notify.' });
    required.push('text');
  }
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    title: `${name}Arguments`,
    properties,
    required,
    additionalProperties: false,
    definitions,
  };
}

export function makeTools() {
  const tools = [];
  for (const product of PRODUCTS) {
    for (const [action, sentence] of ACTIONS) {
      const noun = NOUNS[product];
      const name = `${product}_${action}_${noun}${action === 'list' || action === 'search' || action === 'export' ? 's' : ''}`;
      tools.push({
        name,
        description: `${sentence.replaceAll('{noun}', noun)} ${SHARED_GUIDANCE.join(' ')}`,
        inputSchema: inputSchema(name, product, action),
      });
    }
  }
  return tools;
}

function main() {
  const pageArg = process.argv.indexOf('--page-size');
  const pageSize = pageArg > 0 ? Number(process.argv[pageArg + 1]) : Infinity;
  const tools = makeTools();
  const ajv = new Ajv({ allErrors: false, strict: false });
  addFormats(ajv);
  const validators = new Map(tools.map((t) => [t.name, ajv.compile(t.inputSchema)]));
  const server = new Server({ name: 'many-tools', version: '1.0.0' },
    { capabilities: { tools: {} }, instructions: 'A generated server of 120 tools for ctxguard\'s tests.' });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const start = Number(request.params?.cursor ?? 0);
    const end = Math.min(tools.length, start + pageSize);
    return { tools: tools.slice(start, end), ...(end < tools.length ? { nextCursor: String(end) } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: args = {} } = request.params;
    const validate = validators.get(name);
    if (!validate) return { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true };
    if (!validate(args)) {
      const [error] = validate.errors;
      return { content: [{ type: 'text', text: `invalid arguments: ${error.instancePath || '/'} ${error.message}` }], isError: true };
    }
    return { content: [{ type: 'text', text: JSON.stringify({ ok: true, tool: name, arguments: args }) }] };
  });
  server.connect(new StdioServerTransport());
}

if (import.meta.url === `file://${process.argv[1]}`) main();
