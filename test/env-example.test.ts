import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configKeys, parseConfig } from '../src/config.ts';

describe('.env.example', () => {
  const text = readFileSync('.env.example', 'utf8');
  const values = parseEnv(text);

  it('lists every config key, each with a comment above it', () => {
    expect(Object.keys(values).sort()).toEqual([...configKeys].sort());
    const lines = text.split('\n');
    for (const key of configKeys) {
      const index = lines.findIndex((line) => line.startsWith(`${key}=`));
      const commentAbove = lines.slice(0, index).reverse().find((line) => !/^[A-Z_]+=/.test(line));
      expect(commentAbove, key).toMatch(/^# /);
    }
  });

  it('shows the real defaults', () => {
    const fromExample = parseConfig(values);
    const defaults = parseConfig({});
    expect(fromExample).toEqual(defaults);
  });
});
