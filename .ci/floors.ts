// The house's floors: the longest chain of imports between the rooms of src/ (each folder one room, each
// file at the root one room of its own), type-only imports included, as `npm run floors` prints it. A long
// chain means a helper lives high up where it was first used, and everything above it leans on its room.
import { cruise } from 'dependency-cruiser';

const result = await cruise(['src'], { tsPreCompilationDeps: true, doNotFollow: { path: 'node_modules' } });
if (typeof result.output === 'string') throw new Error('the cruise gave no modules');
/** src/a/b.ts → a; src/c.ts → c (a root file is a room of its own). */
const roomOf = (file: string) => {
  const [, first, second] = file.split('/');
  return second ? first : first?.replace(/\.ts$/, '');
};
const edges = new Map<string, Set<string>>();
for (const module of result.output.modules) {
  if (!module.source.startsWith('src/')) continue;
  const from = roomOf(module.source) as string;
  const out = edges.get(from) ?? edges.set(from, new Set()).get(from);
  for (const dependency of module.dependencies)
    if (dependency.resolved.startsWith('src/')) {
      const to = roomOf(dependency.resolved) as string;
      if (to !== from) out?.add(to);
    }
}
const longest = new Map<string, string[]>();
const visiting = new Set<string>();
/** The longest chain down from a room (a cycle, which lint forbids, is cut where it closes). */
function chainFrom(room: string): string[] {
  const known = longest.get(room);
  if (known) return known;
  visiting.add(room);
  let best: string[] = [];
  for (const next of edges.get(room) ?? [])
    if (!visiting.has(next)) {
      const chain = chainFrom(next);
      if (chain.length > best.length) best = chain;
    }
  visiting.delete(room);
  const chain = [room, ...best];
  longest.set(room, chain);
  return chain;
}
const top = [...edges.keys()].map(chainFrom).sort((a, b) => b.length - a.length)[0] ?? [];
console.log(`${top.length} rooms on the longest chain: ${top.join(' > ')}`);
const folders = top.filter(
  (room) => edges.has(room) && result.output.modules.some((m) => m.source.startsWith(`src/${room}/`)),
);
console.log(`${folders.length} of them folders; ${edges.size} rooms in all`);
