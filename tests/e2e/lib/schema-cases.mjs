// Arguments to call a tool with, derived from its input schema: valid ones (only the required
// properties; every property) and invalid ones (each required property left out, each property
// of the wrong type, a value outside an enum, a string against its pattern, an unexpected
// property, a nested object with a bad member). tool-list-modes.test.mjs sends each to the server
// directly and through ctxguard and compares the verdicts, and validates each against the schema
// as the server sent it and as ctxguard listed it.

/** The schema `ref` ("#/definitions/x") points at inside `root`. */
function resolve(schema, root) {
  let current = schema;
  while (current && typeof current.$ref === 'string') {
    const parts = current.$ref.replace(/^#\//, '').split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
    current = parts.reduce((node, key) => node?.[key], root);
  }
  return current ?? {};
}

/** A value `schema` accepts. */
export function validValue(schema, root, { everything = false } = {}) {
  const s = resolve(schema, root);
  if (Array.isArray(s.enum)) return s.enum[0];
  switch (s.type) {
    case 'string': {
      if (s.pattern === '^ws_[a-z0-9]{6}$') return 'ws_abc123';
      if (s.format === 'email') return 'ada@example.com';
      if (s.format === 'date-time') return '2024-01-02T03:04:05Z';
      if (s.format === 'uri') return 'https://example.com/a';
      return 'v'.repeat(Math.max(s.minLength ?? 1, 10));
    }
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return true;
    case 'array':
      return everything && s.items ? [validValue(s.items, root, { everything })] : [];
    case 'object': {
      const out = {};
      const props = s.properties ?? {};
      const keys = everything ? Object.keys(props) : (s.required ?? []);
      for (const key of keys) out[key] = validValue(props[key], root, { everything });
      return out;
    }
    default:
      return 'value';
  }
}

/** A value of another type than `schema` wants. */
function wrongType(schema, root) {
  const s = resolve(schema, root);
  return s.type === 'string' ? 12345 : 'not-a-' + (s.type ?? 'value');
}

/**
 * The cases for one tool: [{label, args}], the first two valid.
 * @param {object} inputSchema the tool's schema as the server sent it
 */
export function argumentCases(inputSchema) {
  const root = inputSchema;
  const minimal = validValue(root, root);
  const full = validValue(root, root, { everything: true });
  const cases = [
    { label: 'required only', args: minimal },
    { label: 'every property', args: full },
  ];
  for (const key of root.required ?? []) {
    const { [key]: _, ...rest } = minimal;
    cases.push({ label: `without ${key}`, args: rest });
  }
  for (const [key, prop] of Object.entries(root.properties ?? {})) {
    cases.push({ label: `${key} of the wrong type`, args: { ...full, [key]: wrongType(prop, root) } });
    const s = resolve(prop, root);
    if (Array.isArray(s.enum)) cases.push({ label: `${key} outside its enum`, args: { ...full, [key]: 'no-such-value' } });
    if (s.pattern) cases.push({ label: `${key} against its pattern`, args: { ...full, [key]: 'WS-nope' } });
    if (s.type === 'object' && s.properties) {
      const [inner] = Object.keys(s.properties);
      cases.push({ label: `${key}.${inner} of the wrong type`, args: { ...full, [key]: { ...full[key], [inner]: wrongType(s.properties[inner], root) } } });
      cases.push({ label: `${key} with an unexpected member`, args: { ...full, [key]: { ...full[key], unexpected: 1 } } });
    }
  }
  cases.push({ label: 'an unexpected property', args: { ...full, unexpected: true } });
  return cases;
}
