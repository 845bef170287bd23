// The part of the service's OpenAPI document a package speaks (run in its folder by `npm run generate`):
// `capability`, the routes of /capability/ (a capability's own key); `client`, every other route (a
// project's and an operator's keys). Each keeps the components its routes reach and the problem body
// every error shares, so the packages' generated types hold no copy of each other's.
import { readFileSync } from 'node:fs';

const part = process.argv[2];
if (part !== 'capability' && part !== 'client') throw new Error('slice.mjs capability|client');
const document = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
const ours = (path) => path.startsWith('/capability/') === (part === 'capability');
const paths = Object.fromEntries(Object.entries(document.paths).filter(([path]) => ours(path)));

/** The names of the component schemas `value` refers to, wherever in it. */
function refsOf(value, found = new Set()) {
  if (Array.isArray(value)) for (const item of value) refsOf(item, found);
  else if (value && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/'))
        found.add(inner.slice('#/components/schemas/'.length));
      else refsOf(inner, found);
    }
  return found;
}

const schemas = document.components?.schemas ?? {};
const kept = new Set(['PlatformError']);
for (let next = [...refsOf(paths), 'PlatformError']; next.length > 0; ) {
  const name = next.pop();
  kept.add(name);
  for (const inner of refsOf(schemas[name])) if (!kept.has(inner)) next.push(inner);
}
const components = {
  ...document.components,
  schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => kept.has(name))),
};
process.stdout.write(JSON.stringify({ ...document, paths, webhooks: undefined, components }));
