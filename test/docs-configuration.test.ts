import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configKeys } from '../src/config.ts';

// docs/configuration.md, .env.example and src/config.ts name the same keys with the same defaults.

/** The rows of the table: key → default as written in .env.example (`(empty)` is ''). */
function documentedDefaults(markdown: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const match of markdown.matchAll(/^\| `([A-Z0-9_]+)` \| ([^|]+) \| (.*) \|$/gm)) {
    const [, key, defaultCell, meaning] = match;
    expect(meaning!.trim(), `${key} has a meaning`).not.toBe('');
    expect(rows.has(key!), `${key} is listed once`).toBe(false);
    const cell = defaultCell!.trim();
    rows.set(key!, cell === '(empty)' ? '' : cell.replace(/^`(.*)`$/, '$1'));
  }
  return rows;
}

describe('docs/configuration.md', () => {
  const documented = documentedDefaults(readFileSync('docs/configuration.md', 'utf8'));
  const example = parseEnv(readFileSync('.env.example', 'utf8'));

  it('lists every key of src/config.ts, and no other', () => {
    expect([...documented.keys()].sort()).toEqual([...configKeys].sort());
  });

  it('lists every key of .env.example, and no other', () => {
    expect([...documented.keys()].sort()).toEqual(Object.keys(example).sort());
  });

  it('gives each key the default .env.example shows', () => {
    for (const [key, value] of documented) expect(value, key).toBe(example[key]);
  });
});
