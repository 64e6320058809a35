import { SourceMap } from 'node:module';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { SourceMapLines } from '../../src/source-map-lines.ts';

// The lookup behind the built server's stack traces (src/source-mapped-stacks.ts), checked
// against Node's own decoder on a bundle esbuild makes of three modules, as the build does.

interface Bundle {
  code: string;
  map: { sources: string[]; mappings: string };
}

async function bundleOfThreeModules(): Promise<Bundle> {
  const files: Record<string, string> = {
    'entry.ts': "import { greet } from './greet.ts';\nimport { count } from './count.ts';\nconsole.log(greet('you'), count([1, 2, 3]));\n",
    'greet.ts': 'export function greet(name: string): string {\n  const upper = name.toUpperCase();\n  return `hello ${upper}`;\n}\n',
    'count.ts':
      'export function count(values: number[]): number {\n  let total = 0;\n  for (const value of values) {\n    if (value > 1) total += value * 40_000;\n  }\n  return total;\n}\n',
  };
  const result = await build({
    stdin: { contents: files['entry.ts']!, sourcefile: 'entry.ts', resolveDir: '/virtual', loader: 'ts' },
    bundle: true,
    write: false,
    outfile: '/virtual/out.js',
    sourcemap: 'external',
    sourcesContent: false,
    minifyWhitespace: true,
    plugins: [
      {
        name: 'virtual-files',
        setup(builder) {
          builder.onResolve({ filter: /^\.\// }, (args) => ({ path: args.path.slice(2), namespace: 'virtual' }));
          builder.onLoad({ filter: /.*/, namespace: 'virtual' }, (args) => ({ contents: files[args.path]!, loader: 'ts' }));
        },
      },
    ],
  });
  const code = result.outputFiles.find((file) => file.path.endsWith('.js'))!.text;
  const map = JSON.parse(result.outputFiles.find((file) => file.path.endsWith('.map'))!.text) as Bundle['map'];
  return { code, map };
}

describe('SourceMapLines', () => {
  it('finds the same original position as Node’s decoder for every column of every line of a bundle', async () => {
    const { code, map } = await bundleOfThreeModules();
    const lines = code.split('\n');
    const nodeMap = new SourceMap(map as ConstructorParameters<typeof SourceMap>[0]);
    const lookup = new SourceMapLines(map.mappings, map.sources);
    let mapped = 0;
    // From the last line back, so a lookup of an earlier line also works after later ones were decoded.
    for (let line = lines.length - 1; line >= 0; line--) {
      for (let column = 0; column <= lines[line]!.length; column++) {
        const entry = nodeMap.findEntry(line, column);
        const expected =
          'originalSource' in entry && entry.generatedLine === line
            ? { source: entry.originalSource, line: entry.originalLine, column: entry.originalColumn }
            : undefined;
        expect(lookup.find(line, column), `line ${line}, column ${column}`).toEqual(expected);
        if (expected) mapped++;
      }
    }
    expect(new Set(map.sources).size).toBe(3);
    expect(mapped).toBeGreaterThan(100);
  });

  it('finds nothing before a line’s first segment, on a line without segments, or past the map', () => {
    // Line 0: a segment at column 4 of source 0 (line 0, column 0); line 1: none; line 2: column 0 of line 1, column 2.
    const lookup = new SourceMapLines('IAAA;;AACE', ['a.ts']);
    expect(lookup.find(0, 3)).toBeUndefined();
    expect(lookup.find(0, 4)).toEqual({ source: 'a.ts', line: 0, column: 0 });
    expect(lookup.find(1, 10)).toBeUndefined();
    expect(lookup.find(2, 0)).toEqual({ source: 'a.ts', line: 1, column: 2 });
    expect(lookup.find(3, 0)).toBeUndefined();
  });

  it('says where a map is not base64', () => {
    const lookup = new SourceMapLines('AAAA;A!AA', ['a.ts']);
    expect(lookup.find(0, 0)).toEqual({ source: 'a.ts', line: 0, column: 0 });
    expect(() => lookup.find(1, 0)).toThrow('A source map has "!" where base64 belongs (at 6).');
  });
});
