// Preload (`node --import ./lib/node20-globsync.mjs`) that lets the bundle of
// @modelcontextprotocol/conformance start on Node 20. The bundle imports
// `globSync` from 'fs', which Node has only from 22 on; on Node 20 that import
// fails at link time. This hook sends 'fs'/'node:fs' imports to a module that
// re-exports node:fs plus a minimal globSync (only the `**/<file name>` form the
// bundle uses, in `tier-check`, which these tests do not run). On a Node that
// has fs.globSync it does nothing.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  const shim = `
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;
export function globSync(pattern, opts = {}) {
  const m = /^\\*\\*\\/([^*/]+)$/.exec(pattern);
  if (!m) throw new Error('globSync shim (tests/e2e/lib/node20-globsync.mjs): unsupported pattern ' + pattern);
  return fs.readdirSync(opts.cwd ?? process.cwd(), { recursive: true }).map(String).filter((p) => path.basename(p) === m[1]);
}`;
  const shimUrl = `data:text/javascript,${encodeURIComponent(shim)}`;
  const hooks = `
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && !(context.parentURL ?? '').startsWith('data:')) {
    return { url: ${JSON.stringify(shimUrl)}, shortCircuit: true };
  }
  return next(specifier, context);
}`;
  register(`data:text/javascript,${encodeURIComponent(hooks)}`);
}
