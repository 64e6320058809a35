import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The Layers block of docs/architecture.md, held against every import in src/: nothing imports
// upward, no files import each other in a circle, and there is no list of exceptions.

const source = 'src';

/** `N  member, member` lines of the block, top first: each member's layer number. */
function layerMap(): Map<string, number> {
  const markdown = readFileSync('docs/architecture.md', 'utf8');
  const block = /^## Layers\n[\s\S]*?^```\n([\s\S]*?)^```$/m.exec(markdown)![1]!;
  const layers = new Map<string, number>();
  for (const [, number, members] of block.matchAll(/^(\d+) +(src\/.*)$/gm)) {
    for (const member of members!.split(/,\s*/)) layers.set(member.trim(), Number(number));
  }
  return layers;
}

// Static `import`/`export … from` (type-only too), side-effect imports, and `import('…')` with a literal.
const importPattern = /(?:^|[\s;}])(?:import|export)\s+(?:type\s+)?(?:[^'"`;]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importGraph(): Map<string, string[]> {
  const files = readdirSync(source, { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.(ts|mts|mjs|js)$/.test(file))
    .map((file) => path.join(source, file));
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const specifiers = [...readFileSync(file, 'utf8').matchAll(importPattern)].map((match) => match[1] ?? match[2]!);
    const relative = specifiers.filter((specifier) => specifier.startsWith('.'));
    graph.set(file, relative.map((specifier) => path.join(path.dirname(file), specifier)));
  }
  return graph;
}

/** `src/server/` for a file in a folder, the file itself at the root. */
const placeOf = (file: string) => (file.split('/').length === 2 ? file : `${file.split('/').slice(0, 2).join('/')}/`);

/** Every circle of imports, each found from a back edge of one depth-first walk. */
function cycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const trail: string[] = [];
  const found: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    trail.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...trail.slice(trail.indexOf(next)), next].join(' → '));
      else if (!state.has(next) && graph.has(next)) visit(next);
    }
    trail.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

describe('architecture', () => {
  const layers = layerMap();
  const graph = importGraph();

  it('places every folder and root file of src/ in the Layers block, and only those', () => {
    const places = new Set([...graph.keys()].map(placeOf));
    expect([...places].filter((place) => !layers.has(place)), 'missing from the block').toEqual([]);
    expect([...layers.keys()].filter((place) => !places.has(place)), 'in the block, not in src/').toEqual([]);
  });

  it('has no import from a lower layer to a higher one', () => {
    const upward = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => target.startsWith(`${source}/`) && layers.get(placeOf(target))! < layers.get(placeOf(file))!)
        .map((target) => `${file} (layer ${layers.get(placeOf(file))}) → ${target} (layer ${layers.get(placeOf(target))})`),
    );
    expect(upward).toEqual([]);
  });

  it('has no cycle between files', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('leaves sessions to the session service: no route, channel, scheduler or tool reads their rows or files from store/', () => {
    const sessionStore = ['sessions-repository', 'messages-repository', 'session-keys-repository', 'session-files', 'session-folder-files'].map((name) => `${source}/store/${name}.ts`);
    const clients = ['server/', 'channels/', 'scheduler/', 'tools/'].map((folder) => `${source}/${folder}`);
    const around = [...graph].flatMap(([file, targets]) =>
      clients.some((folder) => file.startsWith(folder)) ? targets.filter((target) => sessionStore.includes(target)).map((target) => `${file} → ${target}`) : [],
    );
    expect(around).toEqual([]);
  });
});
